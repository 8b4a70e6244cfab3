/**
 * The `retry` sorted set: failed jobs waiting for their next attempt, scored
 * by when it is due (Sidekiq's `RetrySet`).
 *
 * @module
 */
import type { Client } from "../client.ts";
import { JobSet, type JobSetOptions } from "./job_set.ts";

/**
 * Failed jobs waiting to retry. `entry.retry()` retries one now (without
 * using up one of its retries), `entry.kill()` gives up on it.
 *
 * @example
 * ```ts
 * const retries = new RetrySet(client, { deathHandlers: [(job) => console.warn("dead", job.jid)] });
 * await retries.retryAll();
 * ```
 */
export class RetrySet extends JobSet {
  /**
   * Opens the `retry` set.
   *
   * @param client The client whose transport, prefix, time format and middleware to use.
   * @param options Death handlers for jobs killed from this set.
   */
  constructor(client: Client, options: JobSetOptions = {}) {
    super(client, "retry", options);
  }
}
