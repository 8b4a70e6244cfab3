/**
 * Unique-job options: what `defineJob({ unique, uniqueConflict })` and
 * `client.push(job, args, { unique, uniqueConflict })` accept, checked when
 * the job is defined (or the push made), and how a push's own options
 * override its job's.
 *
 * @module
 */
import { assertJsonSafe } from "../../json_safe.ts";
import type { OptionRules } from "../../option_rules.ts";

/**
 * When a unique job's lock is released:
 * - `"start"`: as the job starts running (a copy may be pushed while it runs);
 * - `"success"`: when it succeeds; kept through its retries, released when it dies.
 */
export type UniqueUntil = "start" | "success";

/**
 * What a push does when another copy of the job holds the lock:
 * - `"skip"` (default): nothing; the push returns `null` (status `"duplicate"`);
 * - `"replace"`: debounce. The new job (its args and run time, and its jid)
 *   takes the place of the waiting copy, and the lock passes to it;
 * - `"reschedule"`: the waiting copy keeps its args and jid but runs at the
 *   new push's time (now, or its `at` / `in`).
 *
 * `replace` and `reschedule` act on a copy still waiting (queued or
 * scheduled, as pushed with one of these two modes); a copy already running
 * or retrying is never touched, and the push is then a duplicate.
 */
export type UniqueConflict = "skip" | "replace" | "reschedule";

/** A job's uniqueness: at most one copy queued or running per key. */
export interface UniqueOptions {
  /**
   * Upper bound on the lock's life, in seconds (a TTL): no lock outlives it,
   * whatever happens to its job. A scheduled job's lock lasts its delay plus
   * this. Required, > 0.
   */
  for: number;
  /** When the lock is released; default `"success"`. */
  until?: UniqueUntil;
  /**
   * The uniqueness key from the args; default the args themselves (compared
   * as canonical JSON: `{a, b}` and `{b, a}` match). The job's class and queue
   * are always part of the key. Must return JSON-native data.
   */
  by?: (args: unknown[]) => unknown;
}

/** Unique options with their defaults applied. */
export interface ResolvedUnique {
  readonly for: number;
  readonly until: UniqueUntil;
  readonly by: ((args: unknown[]) => unknown) | undefined;
  readonly conflict: UniqueConflict;
}

const UNTIL: readonly UniqueUntil[] = ["start", "success"];
const CONFLICT: readonly UniqueConflict[] = ["skip", "replace", "reschedule"];
/** The longest lock: ten years, far beyond any sane job, and a finite PX. */
const MAX_FOR_SECONDS = 10 * 365 * 24 * 60 * 60;

/**
 * Checks a `unique` option. `fail` builds the error (a ConfigError at
 * `defineJob`, a PayloadError at push). `false` (push only) turns it off.
 *
 * @example
 * ```ts
 * validateUnique({ for: 60, until: "start" }, (what, v) => new ConfigError(what));
 * ```
 */
export function validateUnique(
  spec: unknown,
  fail: (what: string, value: unknown) => Error,
  allowFalse = false,
): UniqueOptions | false {
  if (spec === false && allowFalse) return false;
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) {
    throw fail(`'unique' must be an object { for, until?, by? }${allowFalse ? " or false" : ""}`, spec);
  }
  const o = spec as Record<string, unknown>;
  for (const field of Object.keys(o)) {
    if (field !== "for" && field !== "until" && field !== "by") {
      throw fail(`'unique' has an unknown field '${field}' (it takes for, until, by)`, spec);
    }
  }
  const seconds = o.for;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_FOR_SECONDS) {
    throw fail(`'unique.for' must be > 0 seconds and at most ten years`, seconds);
  }
  if (o.until !== undefined && !UNTIL.includes(o.until as UniqueUntil)) {
    throw fail(`'unique.until' must be "start" or "success"`, o.until);
  }
  if (o.by !== undefined && typeof o.by !== "function") throw fail("'unique.by' must be a function", o.by);
  const out: UniqueOptions = { for: seconds };
  if (o.until !== undefined) out.until = o.until as UniqueUntil;
  if (o.by !== undefined) out.by = o.by as UniqueOptions["by"];
  return Object.freeze(out);
}

/**
 * Checks a `uniqueConflict` option.
 *
 * @example
 * ```ts
 * validateConflict("replace", (what, v) => new ConfigError(what)); // "replace"
 * ```
 */
export function validateConflict(spec: unknown, fail: (what: string, value: unknown) => Error): UniqueConflict {
  if (!CONFLICT.includes(spec as UniqueConflict)) {
    throw fail(`'uniqueConflict' must be "skip", "replace" or "reschedule"`, spec);
  }
  return spec as UniqueConflict;
}

/**
 * The uniqueness a push asks for: its own `unique` / `uniqueConflict`
 * options over its job's, validated; undefined when it is not unique.
 *
 * @example
 * ```ts
 * resolveUnique(HardJob.options, { uniqueConflict: "replace" }, fail);
 * // { for: 60, until: "success", by: undefined, conflict: "replace" }
 * ```
 */
export function resolveUnique(
  jobOptions: { unique?: UniqueOptions; uniqueConflict?: UniqueConflict } | undefined,
  pushOptions: { unique?: UniqueOptions | false; uniqueConflict?: UniqueConflict } | undefined,
  fail: (what: string, value: unknown) => Error,
): ResolvedUnique | undefined {
  const own = pushOptions?.unique === undefined ? undefined : validateUnique(pushOptions.unique, fail, true);
  const conflict = pushOptions?.uniqueConflict === undefined
    ? jobOptions?.uniqueConflict ?? "skip"
    : validateConflict(pushOptions.uniqueConflict, fail);
  const unique = own ?? jobOptions?.unique;
  if (!unique) return undefined;
  return { for: unique.for, until: unique.until ?? "success", by: unique.by, conflict };
}

/**
 * The key part of a job's args: `by(args)` when given (checked to be
 * JSON-native), else the args.
 *
 * @example
 * ```ts
 * uniqueKeyPart({ for: 60, until: "success", by: ([id]) => id, conflict: "skip" }, [42, "x"]); // 42
 * ```
 */
export function uniqueKeyPart(unique: ResolvedUnique, args: unknown[]): unknown {
  if (!unique.by) return args;
  const part = unique.by(args);
  assertJsonSafe(part, "unique.by(args)");
  return part;
}

/** The options unique jobs add to `defineJob`. */
export interface UniqueJobOptions {
  /**
   * At most one copy queued or running per class, queue and args (or
   * `by(args)`): a lock taken in the same atomic step as the push, released
   * at `until` and never outliving `for` seconds. Needs the `uniqueJobs()`
   * feature on the client and the worker (see docs/unique.md).
   */
  unique?: UniqueOptions;
  /** What a push of a copy the lock is held for does: `"skip"` (default), `"replace"`, `"reschedule"`. */
  uniqueConflict?: UniqueConflict;
}

/** The options unique jobs add to a push. */
export interface UniquePushOptions {
  /** Overrides the job's `unique` for this push; `false` pushes without a lock. */
  unique?: UniqueOptions | false;
  /** Overrides the job's `uniqueConflict` for this push. */
  uniqueConflict?: UniqueConflict;
}

/**
 * The rules of unique jobs' options, checked at `defineJob` (a ConfigError)
 * and at push (a PayloadError).
 *
 * @example
 * ```ts
 * const defineJob = createJobDefiner<UniqueJobOptions>([UNIQUE_OPTION_RULES]);
 * ```
 */
export const UNIQUE_OPTION_RULES: OptionRules = {
  feature: "uniqueJobs()",
  job: {
    unique: { check: (value, fail) => validateUnique(value, fail) },
    uniqueConflict: { check: (value, fail) => validateConflict(value, fail) },
  },
  push: {
    unique: (value, fail) => validateUnique(value, fail, true),
    uniqueConflict: (value, fail) => validateConflict(value, fail),
  },
  fields: { edgekiq_unique: "use the push option 'unique'" },
};
