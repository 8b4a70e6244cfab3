/**
 * Expiring-job options (Sidekiq Pro's `expires_in`): what `defineJob({
 * expiresIn })` and `client.push(job, args, { expiresIn | expiresAt })`
 * accept, checked when the job is defined (or the push made), and the
 * payload field the client writes.
 *
 * @module
 */
import type { OptionCheck, OptionRules } from "../../option_rules.ts";

/**
 * The payload field: when the job expires, epoch seconds (a float, as the
 * `sidekiq-expiring-jobs` gem writes and reads it; edgekiq also reads
 * Sidekiq 8's integer milliseconds).
 */
export const EXPIRES_AT_FIELD = "expires_at";

/** The longest `expiresIn`: ten years, far beyond any sane job. */
const MAX_SECONDS = 10 * 365 * 24 * 60 * 60;

/** The options expiring jobs add to `defineJob`. */
export interface ExpiryJobOptions {
  /**
   * Seconds after its run time (now, or a scheduled job's `at`/`in`) by
   * which a job must have *started*; a job fetched later is dropped before
   * `perform` (Sidekiq Pro's `expires_in`). Needs `expiringJobs()` on the
   * client and the worker.
   */
  expiresIn?: number;
}

/** The options expiring jobs add to a push. */
export interface ExpiryPushOptions {
  /** Overrides the job's `expiresIn` for this push (seconds after its run time). */
  expiresIn?: number;
  /** An absolute expiry instead (a Date or epoch milliseconds), in the future. */
  expiresAt?: Date | number;
}

/**
 * Checks an `expiresIn`: seconds > 0, at most ten years.
 *
 * @example
 * ```ts
 * checkExpiresIn(3600, (what, v) => new ConfigError(what)); // 3600
 * ```
 */
export const checkExpiresIn: OptionCheck = (value, fail) => {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MAX_SECONDS) {
    throw fail("'expiresIn' must be > 0 seconds and at most ten years", value);
  }
  return value;
};

/**
 * Checks an `expiresAt`: a valid Date or epoch milliseconds, in the future
 * (a job pushed already expired would be dropped unseen); returns epoch ms.
 *
 * @example
 * ```ts
 * checkExpiresAt(new Date(Date.now() + 60_000), fail); // epoch ms
 * ```
 */
export const checkExpiresAt: OptionCheck = (value, fail) => {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    throw fail("'expiresAt' must be a Date or epoch milliseconds", value);
  }
  if (ms <= Date.now()) throw fail("'expiresAt' must be in the future", value);
  return ms;
};

/**
 * The rules of expiring jobs' options, checked at `defineJob` (a
 * ConfigError) and at push (a PayloadError).
 *
 * @example
 * ```ts
 * const defineJob = createJobDefiner<ExpiryJobOptions>([EXPIRY_OPTION_RULES]);
 * ```
 */
export const EXPIRY_OPTION_RULES: OptionRules = {
  feature: "expiringJobs()",
  job: { expiresIn: { check: checkExpiresIn } },
  push: { expiresIn: checkExpiresIn, expiresAt: checkExpiresAt },
  fields: { [EXPIRES_AT_FIELD]: "use the push option 'expiresIn' or 'expiresAt'" },
};
