/**
 * The `schedule` sorted set: jobs pushed with `at` / `in`, scored by when
 * they run (Sidekiq's `ScheduledSet`).
 *
 * @module
 */
import type { Client } from "../client.ts";
import { JobSet, type JobSetOptions } from "./job_set.ts";

/**
 * Jobs waiting for their time. `entry.addToQueue()` runs one now.
 *
 * @example
 * ```ts
 * const scheduled = new ScheduledSet(client);
 * for await (const entry of scheduled.scan("ReportJob")) await entry.addToQueue();
 * ```
 */
export class ScheduledSet extends JobSet {
  /**
   * Opens the `schedule` set.
   *
   * @param client The client whose transport, prefix, time format and middleware to use.
   * @param options Death handlers for jobs killed from this set.
   */
  constructor(client: Client, options: JobSetOptions = {}) {
    super(client, "schedule", options);
  }
}
