/**
 * Job-event options: what `defineJob({ keepResult })` and
 * `client.push(job, args, { keepResult })` accept, checked when the job is
 * defined (or the push made); the payload field that carries the choice to
 * the worker; and the feature's own options.
 *
 * @module
 */
import type { OptionRules } from "../../option_rules.ts";

/** A job's result, kept in Redis for `waitFor` and the `completed` event. */
export interface KeepResultOptions {
  /**
   * Seconds the result stays readable after the job ends (a TTL). Required,
   * > 0, at most a year.
   */
  for: number;
}

/** The options job events add to `defineJob`. */
export interface EventsJobOptions {
  /**
   * Keep what `perform` returns (or why the job failed for good) for
   * `keepResult.for` seconds, for `waitFor(client, jid)` and the
   * `completed` event. Needs `jobEvents()` on the client and the worker.
   * Results larger than the feature's `maxResultBytes` are not kept: the
   * record says so, and `waitFor` rejects with a `ResultError`.
   */
  keepResult?: KeepResultOptions;
}

/** The options job events add to a push. */
export interface EventsPushOptions {
  /** Overrides the job's `keepResult` for this push; `false` keeps nothing. */
  keepResult?: KeepResultOptions | false;
}

/** The payload field that carries `keepResult.for` (seconds) to the worker. */
export const RESULT_FIELD = "edgekiq_result";

/** The longest a result may be kept: a year. */
const MAX_KEEP_SECONDS = 365 * 24 * 60 * 60;

/**
 * Checks a `keepResult` option. `fail` builds the error (a ConfigError at
 * `defineJob`, a PayloadError at push). `false` (push only) turns it off.
 *
 * @example
 * ```ts
 * validateKeepResult({ for: 600 }, (what) => new ConfigError(what)); // { for: 600 }
 * ```
 */
export function validateKeepResult(
  spec: unknown,
  fail: (what: string, value: unknown) => Error,
  allowFalse = false,
): KeepResultOptions | false {
  if (spec === false && allowFalse) return false;
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) {
    throw fail(`'keepResult' must be an object { for }${allowFalse ? " or false" : ""}`, spec);
  }
  for (const field of Object.keys(spec)) {
    if (field !== "for") throw fail(`'keepResult' has an unknown field '${field}' (it takes for)`, spec);
  }
  const seconds = (spec as { for?: unknown }).for;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_KEEP_SECONDS) {
    throw fail("'keepResult.for' must be > 0 seconds and at most a year", seconds);
  }
  return Object.freeze({ for: seconds });
}

/**
 * The rules of the job-event options, checked at `defineJob` (a
 * ConfigError) and at push (a PayloadError).
 *
 * @example
 * ```ts
 * const defineJob = createJobDefiner<EventsJobOptions>([EVENTS_OPTION_RULES]);
 * ```
 */
export const EVENTS_OPTION_RULES: OptionRules = {
  feature: "jobEvents()",
  job: { keepResult: { check: (value, fail) => validateKeepResult(value, fail) } },
  push: { keepResult: (value, fail) => validateKeepResult(value, fail, true) },
  fields: { [RESULT_FIELD]: "use the option 'keepResult'" },
};
