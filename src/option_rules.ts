/**
 * Option rules: how a feature adds its own options to `defineJob` and to a
 * push, checked as the core's own are (a typo fails at definition, not at
 * 3 a.m.), and which payload fields it owns.
 *
 * @module
 */

/**
 * Checks one option's value and returns what is stored (a frozen copy, a
 * default applied). `fail(what, value)` builds the error to throw: a
 * ConfigError at `defineJob`, a PayloadError at push.
 *
 * @example
 * ```ts
 * const positive: OptionCheck = (v, fail) => {
 *   if (typeof v !== "number" || !(v > 0)) throw fail("'expiresIn' must be > 0 seconds", v);
 *   return v;
 * };
 * ```
 */
export type OptionCheck = (value: unknown, fail: (what: string, value: unknown) => Error) => unknown;

/** One job option a feature owns. */
export interface JobOptionRule {
  /** Checks the value at `defineJob`. */
  readonly check: OptionCheck;
  /**
   * Where the option takes effect: `"push"` (the default) when the client
   * must apply it (a push of a job that sets it is refused unless the client
   * has the feature), `"run"` when only the worker reads it.
   */
  readonly at?: "push" | "run";
}

/**
 * The options and payload fields a feature owns.
 *
 * @example
 * ```ts
 * const rules: OptionRules = {
 *   job: { expiresIn: { check: positive } },
 *   push: { expiresIn: positive },
 *   fields: { expires_at: "use the option 'expiresIn'" },
 * };
 * ```
 */
export interface OptionRules {
  /** How a user adds the feature (`"uniqueJobs()"`), for errors that say what is missing. */
  readonly feature?: string;
  /** `defineJob` options, by name. */
  readonly job?: Readonly<Record<string, JobOptionRule>>;
  /** Push options (the third argument of `client.push`), by name. */
  readonly push?: Readonly<Record<string, OptionCheck>>;
  /**
   * Payload fields the feature writes itself, each with what to use
   * instead: a push's `extra` may not set them.
   */
  readonly fields?: Readonly<Record<string, string>>;
}
