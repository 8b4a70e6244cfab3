/**
 * The `dead` sorted set: jobs that ran out of retries or were killed,
 * scored by when they died (Sidekiq's `DeadSet`). It keeps at most 10,000
 * jobs for at most six months.
 *
 * @module
 */
import type { Client } from "../client.ts";
import type { JobPayload } from "../payload.ts";
import { serializePayload } from "../payload.ts";
import { buryPayloads, DEAD_MAX_JOBS, DEAD_TIMEOUT_SECONDS } from "../dead_set_rules.ts";
import { applyKillOps, notifyDeath } from "./moves.ts";
import { JobSet, type JobSetOptions } from "./job_set.ts";
import { invalid } from "./arguments.ts";
import { formatOf } from "./payload_format.ts";

/** Options for {@link DeadSet.kill}. */
export interface DeadSetKillOptions {
  /** Run the death handlers (Sidekiq's `notify_failure`); default true. */
  notifyFailure?: boolean;
  /** The error handed to the death handlers; default `Error("Job killed by API")`. */
  error?: unknown;
}

/**
 * Dead jobs. `entry.retry()` gives one another chance.
 *
 * @example
 * ```ts
 * const dead = new DeadSet(client);
 * await dead.kill(rawJob, { notifyFailure: false });
 * await dead.retryAll();
 * ```
 */
export class DeadSet extends JobSet {
  /** The most jobs the set keeps. */
  static readonly maxJobs: number = DEAD_MAX_JOBS;
  /** The longest the set keeps a job, in seconds. */
  static readonly timeout: number = DEAD_TIMEOUT_SECONDS;

  /**
   * Opens the `dead` set.
   *
   * @param client The client whose transport, prefix, time format and middleware to use.
   * @param options Death handlers run by {@link DeadSet.kill} and entry kills.
   */
  constructor(client: Client, options: JobSetOptions = {}) {
    super(client, "dead", options);
  }

  /**
   * Adds a job to the dead set, scored now, and trims the set by age and
   * size in the same MULTI; then runs the death handlers unless
   * `notifyFailure` is false. A raw string is stored byte for byte. Features'
   * kill ops are applied (a unique job's lock is released).
   *
   * @example
   * ```ts
   * await new DeadSet(client).kill(raw);
   * ```
   */
  async kill(job: string | JobPayload, options: DeadSetKillOptions = {}): Promise<boolean> {
    let raw: string;
    if (typeof job === "string") raw = job;
    else if (typeof job === "object" && job !== null && !Array.isArray(job)) {
      raw = serializePayload(job, formatOf(job, this.client.timeFormat));
    } else throw invalid("kill job", "job", "a raw job string or a payload object", job);
    await buryPayloads(this.client, [raw]);
    // A dead job holds nothing a feature gave it (a unique job's lock), as when it dies in a worker.
    await applyKillOps(this.client, [raw]);
    if (options.notifyFailure !== false) {
      await notifyDeath(this.deathHandlers, raw, options.error ?? new Error("Job killed by API"));
    }
    return true;
  }
}
