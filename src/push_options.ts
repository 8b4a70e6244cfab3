/**
 * The rules for what a push may ask for: which job (a definition or a class
 * name), its queue and retry (the job's options, overridden per push, checked
 * by the same {@link validateJobOptions} as `defineJob`), its `extra`
 * fields, and when it runs. Everything here is checked before a payload is
 * built, so a push with a bad option writes nothing.
 *
 * `extra` adds payload fields Sidekiq does not define (`tenant`, `bid`,
 * `wrapped`, ...), kept as they are. Fields the push writes itself are
 * refused there, each with the option to use instead: `class`, `args`,
 * `jid`, `created_at`, `enqueued_at` (the push sets them), and `queue`,
 * `retry`, `at` (use the push options of the same name). Sidekiq fields a
 * push may legitimately carry are checked, so nothing the engine later
 * computes with is garbage (a `retry_count` of -1e300 would schedule a retry
 * at infinity):
 * - job options under their wire names, as `defineJob` checks them:
 *   `retry_queue` (a queue name), `retry_for` (seconds > 0), `dead`,
 *   `backtrace`, `tags`;
 * - retry bookkeeping, for a job that carries its history with it:
 *   `retry_count` (a whole number >= 0), `failed_at` and `retried_at`
 *   (epoch times > 0), `error_message`, `error_class` and `error_backtrace`
 *   (strings).
 *
 * @module
 */
import { PayloadError } from "./errors.ts";
import { type AnyJob, type JobOptions, type PushOptions, validateJobOptions } from "./job.ts";
import { assertJsonSafe } from "./json_safe.ts";
import { describeValue } from "./describe_value.ts";
import { hasUnsafeChars, sanitize } from "./sanitize.ts";

/** The latest a job may be scheduled: 100 years from now, in milliseconds. */
export const MAX_SCHEDULE_AHEAD_MS = 100 * 365.25 * 24 * 60 * 60 * 1000;

/** What a push is for: a job definition, or a class name only another process knows. */
export interface PushTarget {
  /** The definition, when pushed by definition. */
  readonly job: AnyJob | undefined;
  /** The wire `class`. */
  readonly className: string;
}

/** The payload fields every job of one push shares (everything but `args`, `jid` and its times). */
export interface PushFields {
  class: string;
  queue: string;
  retry: boolean | number;
  [field: string]: unknown;
}

/** Payload fields a push sets itself, and what to use instead in `extra`. */
const RESERVED: Readonly<Record<string, string>> = {
  class: "the push sets it from the job",
  args: "the push sets it",
  jid: "the push sets it",
  created_at: "the push sets it",
  enqueued_at: "the push sets it",
  queue: "use the push option 'queue'",
  retry: "use the push option 'retry'",
  at: "use the push option 'at' or 'in'",
};

const isTime = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v > 0;
const isText = (v: unknown) => typeof v === "string";

/** Retry bookkeeping `extra` may carry, each with its rule. */
const BOOKKEEPING: Readonly<Record<string, readonly [check: (value: unknown) => boolean, rule: string]>> = {
  retry_count: [(v) => Number.isSafeInteger(v) && (v as number) >= 0, "a whole number >= 0"],
  failed_at: [isTime, "an epoch time > 0"],
  retried_at: [isTime, "an epoch time > 0"],
  error_message: [isText, "a string"],
  error_class: [isText, "a string"],
  error_backtrace: [isText, "a string"],
};

/** Sidekiq options that `extra` may set under their wire names, and their `defineJob` names. */
const OPTION_FIELDS: Readonly<Record<string, keyof JobOptions>> = {
  retry_queue: "retryQueue",
  retry_for: "retryFor",
  dead: "dead",
  backtrace: "backtrace",
  tags: "tags",
};

/**
 * Checks what is being pushed: a `defineJob()` result, or a class name (a
 * non-empty string without control characters).
 *
 * @example
 * ```ts
 * pushTarget("RubyJob"); // { job: undefined, className: "RubyJob" }
 * pushTarget(HardJob);   // { job: HardJob, className: "HardJob" }
 * ```
 */
export function pushTarget(jobOrName: AnyJob | string): PushTarget {
  const job = typeof jobOrName === "string" ? undefined : jobOrName;
  const className = typeof jobOrName === "string" ? jobOrName : jobOrName?.name;
  if (typeof className !== "string" || className === "" || hasUnsafeChars(className)) {
    throw new PayloadError(
      `Cannot push job as the job must be a defineJob() result or a class name without control characters: current value is ${
        describeValue(jobOrName)
      }`,
    );
  }
  return { job, className };
}

/**
 * The fields every payload of one push shares: `class`, `queue`, `retry`,
 * the job's other Sidekiq options, and `extra`, all validated (`reserved`:
 * payload fields features write themselves, which `extra` may not set).
 *
 * @example
 * ```ts
 * pushFields(pushTarget(HardJob), { queue: "critical", extra: { tenant: "t1" } });
 * // { class: "HardJob", queue: "critical", retry: true, tenant: "t1" }
 * ```
 */
export function pushFields(
  target: PushTarget,
  options: Pick<PushOptions, "queue" | "retry" | "extra">,
  reserved: Readonly<Record<string, string>> = {},
): PushFields {
  const { job, className } = target;
  const fail = (what: string, value: unknown) =>
    new PayloadError(
      `Cannot push job ${sanitize(className, 100)} as ${what}: current value is ${describeValue(value)}`,
    );
  if (typeof options !== "object" || options === null) throw fail("the options must be an object", options);
  const overrides = validateJobOptions({ queue: options.queue, retry: options.retry }, fail);
  const o = job?.options ?? {};
  const fields: PushFields = {
    class: className,
    queue: overrides.queue ?? o.queue ?? "default",
    retry: overrides.retry ?? o.retry ?? true,
  };
  if (o.retryQueue !== undefined) fields.retry_queue = o.retryQueue;
  if (o.retryFor !== undefined) fields.retry_for = o.retryFor;
  if (o.dead !== undefined) fields.dead = o.dead;
  if (o.backtrace !== undefined) fields.backtrace = o.backtrace;
  if (o.tags !== undefined) fields.tags = [...o.tags];
  const extra = options.extra;
  if (extra === undefined) return fields;
  if (typeof extra !== "object" || extra === null || Array.isArray(extra)) {
    throw fail("'extra' must be a plain object of payload fields", extra);
  }
  for (const field of Object.keys(extra)) {
    const why = Object.hasOwn(RESERVED, field)
      ? RESERVED[field]
      : Object.hasOwn(reserved, field)
      ? reserved[field]
      : undefined;
    if (why) {
      throw new PayloadError(`Cannot push job ${sanitize(className, 100)} as 'extra' must not set '${field}': ${why}`);
    }
    const value = extra[field];
    const option = Object.hasOwn(OPTION_FIELDS, field) ? OPTION_FIELDS[field] : undefined;
    if (option) validateJobOptions({ [option]: value }, (what, v) => fail(`'extra.${field}' (${what})`, v));
    const bookkeeping = Object.hasOwn(BOOKKEEPING, field) ? BOOKKEEPING[field] : undefined;
    if (bookkeeping && !bookkeeping[0](value)) throw fail(`'extra.${field}' must be ${bookkeeping[1]}`, value);
    assertJsonSafe(value, `extra.${field}`);
    fields[field] = value;
  }
  return fields;
}

/**
 * When each of `count` jobs runs, in epoch milliseconds, or undefined for
 * now: from `at` (one time, or one per job) or `in`. Refuses NaN, infinities,
 * invalid Dates and times more than {@link MAX_SCHEDULE_AHEAD_MS} ahead,
 * which would otherwise be written as a score of `inf` that never comes due.
 *
 * @example
 * ```ts
 * runTimes({ in: 60 }, { count: 2, nowMs: Date.now() }); // one time, a minute ahead
 * ```
 */
export function runTimes(
  options: { at?: Date | number | ReadonlyArray<Date | number>; in?: number },
  context: { count: number; nowMs: number },
): number | undefined | (number | undefined)[] {
  const { at } = options;
  if (!Array.isArray(at)) return resolveRunAt(at as Date | number | undefined, options.in, context.nowMs);
  if (at.length !== context.count) {
    throw new PayloadError(
      `Cannot push jobs as 'at' must have one time per job: ${at.length} times for ${context.count} jobs`,
    );
  }
  if (options.in !== undefined) throw new PayloadError("Cannot push jobs as 'at' and 'in' are both set: give one");
  return at.map((one) => resolveRunAt(one, undefined, context.nowMs));
}

/**
 * Turns `at` / `in` into epoch milliseconds, or undefined for "now".
 * Sidekiq's rule: a number below 1e9 is an interval, not a time, and a time
 * at or before now means now. A time more than 100 years ahead
 * ({@link MAX_SCHEDULE_AHEAD_MS}) is refused: no real schedule needs it, and
 * the bound keeps every score a finite float of epoch seconds that any
 * Sidekiq reads, far below the 1e11 at which seconds and milliseconds are
 * told apart.
 *
 * @example
 * ```ts
 * resolveRunAt(undefined, 60, Date.now()); // one minute from now, in ms
 * resolveRunAt(5, undefined, Date.now());  // 5 s from now (below 1e9)
 * ```
 */
export function resolveRunAt(
  at: Date | number | undefined,
  inSeconds: number | undefined,
  nowMs: number,
): number | undefined {
  let ms: number | undefined;
  let option = "at";
  if (at !== undefined && inSeconds !== undefined) {
    throw new PayloadError("Cannot push job as 'at' and 'in' are both set: give one");
  }
  if (at instanceof Date) {
    ms = at.getTime();
    if (Number.isNaN(ms)) throw new PayloadError("Cannot push job as 'at' is an invalid Date");
  } else if (at !== undefined) {
    if (typeof at !== "number" || !Number.isFinite(at)) {
      throw new PayloadError(
        `Cannot push job as 'at' must be a Date or epoch seconds: current value is ${describeValue(at)}`,
      );
    }
    ms = at < 1e9 ? nowMs + at * 1000 : at * 1000;
  } else if (inSeconds !== undefined) {
    option = "in";
    if (typeof inSeconds !== "number" || !Number.isFinite(inSeconds)) {
      throw new PayloadError(
        `Cannot push job as 'in' must be a finite number of seconds: current value is ${describeValue(inSeconds)}`,
      );
    }
    ms = nowMs + inSeconds * 1000;
  }
  if (ms === undefined || !(ms > nowMs)) return undefined;
  if (ms - nowMs > MAX_SCHEDULE_AHEAD_MS) {
    throw new PayloadError(
      `Cannot push job as '${option}' must be at most 100 years ahead: current value is ${
        describeValue(at instanceof Date ? at.toISOString() : at ?? inSeconds)
      }`,
    );
  }
  return ms;
}
