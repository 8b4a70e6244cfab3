/**
 * Job definitions: `defineJob({ name, args, perform, ...options })`.
 *
 * `name` is the wire `class`, so a job pushed by Ruby's
 * `HardJob.perform_async` reaches `defineJob({ name: "HardJob" })`. `args` is
 * any Standard Schema v1 (valibot, zod, arktype) for the positional argument
 * tuple; it is checked when a job is pushed and again before it runs.
 *
 * @module
 */
import { ConfigError, JobArgsError } from "./errors.ts";
import type { Keys } from "./keys.ts";
import type { Logger } from "./logger.ts";
import { type JobPayload } from "./payload.ts";
import { describeValue } from "./describe_value.ts";
import { isQueueName, QUEUE_NAME_RULE } from "./queue_name.ts";
import { hasUnsafeChars, sanitize } from "./sanitize.ts";
import type { StandardSchemaV1 } from "./standard_schema.ts";
import type { Transport } from "./transport/transport.ts";
import type { OptionRules } from "./option_rules.ts";

/** What `perform` receives besides its arguments. */
export interface JobContext {
  /** This job's id. */
  readonly jid: string;
  /** The queue it was fetched from. */
  readonly queue: string;
  /** How many times it has been retried so far (0 on the first run). */
  readonly retryCount: number;
  /** The whole payload, read-only. */
  readonly payload: Readonly<JobPayload>;
  /** A logger carrying the job's class, jid and queue. */
  readonly logger: Logger;
  /**
   * Aborts at hard shutdown. Pass it to `fetch` and check it in loops: a job
   * that ignores it is abandoned when the process exits (its job is already
   * back on the queue by then).
   */
  readonly signal: AbortSignal;
  /**
   * Aborts when the worker starts to quiet or stop, or a drain's budget is
   * nearly spent: a long job (an iterable job between items, say) should
   * stop at its next safe point and save its progress. It may also simply
   * finish: running jobs get the shutdown timeout.
   */
  readonly stopping: AbortSignal;
  /**
   * The Redis transport this job was fetched with, for a job that keeps its
   * own state in Redis (an iterable job's cursor, say).
   */
  readonly transport: Transport;
  /** The key names of the worker's namespace (its `prefix`), with that transport. */
  readonly keys: Keys;
  /**
   * Reports how far the job got (a number, or any JSON value): shown on the
   * dashboard's Busy page with the next heartbeat, and told to features (the
   * event stream). Cheap to call in a tight loop: nothing is written per call.
   */
  progress(value: unknown): void;
}

/** What `retryIn` may return: a delay in seconds, or a verdict. */
export type RetryInResult = number | "discard" | "kill" | null | undefined | void;

/** Sidekiq's `sidekiq_options`, plus its `sidekiq_retry_in` / `sidekiq_retries_exhausted` hooks. */
export interface JobOptions {
  /** Queue to push to; default `"default"`. */
  queue?: string;
  /** `false`: never retry; `true`: up to 25 times; a number: up to that many. */
  retry?: boolean | number;
  /** Queue retries go to, if not the original. */
  retryQueue?: string;
  /** Retry for at most this many seconds after the first failure, instead of a count. */
  retryFor?: number;
  /** `false`: a job out of retries is dropped instead of going to the dead set. */
  dead?: boolean;
  /** Store the error's stack on the payload: `true` for all lines, a number for the first N. */
  backtrace?: boolean | number;
  /** Labels shown in the Web UI. */
  tags?: string[];
  /** Custom retry delay: seconds, `"discard"`, `"kill"`, or nothing for the default. */
  retryIn?: (count: number, error: unknown, job: JobPayload) => RetryInResult;
  /** Runs when retries are exhausted; return `"discard"` to skip the dead set. */
  retriesExhausted?: (job: JobPayload, error: unknown) => "discard" | void | Promise<"discard" | void>;
}

/** The core's job options, by name; any other option belongs to a feature. */
export const CORE_JOB_OPTIONS: readonly string[] = [
  "queue",
  "retry",
  "retryQueue",
  "retryFor",
  "dead",
  "backtrace",
  "tags",
  "retryIn",
  "retriesExhausted",
];

/**
 * Anything that can push a job: a `Client`. A definition's arguments are
 * checked against its input tuple at compile time; a class name takes any
 * arguments (another process defines them).
 */
export interface JobPusher<P extends object = Record<never, never>> {
  push<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    args: Readonly<NoInfer<In>>,
    options?: PushOptions & P,
  ): Promise<string | null>;
  push(job: string, args: readonly unknown[], options?: PushOptions & P): Promise<string | null>;
}

/** Where and when to push. */
export interface PushOptions {
  /** Overrides the job's queue. */
  queue?: string;
  /** Run at this time (Date or epoch seconds; a number below 1e9 counts as seconds from now). */
  at?: Date | number;
  /** Run this many seconds from now. */
  in?: number;
  /** Overrides the job's retry option for this push. */
  retry?: boolean | number;
  /**
   * Extra payload fields for this push, kept as they are (`tenant`, `bid`,
   * `wrapped`). Fields the push sets itself (`class`, `args`, `jid`,
   * `queue`, `retry`, `created_at`, `enqueued_at`, the retry bookkeeping) are
   * refused with a PayloadError naming the option to use; Sidekiq's
   * `retry_queue`, `retry_for`, `dead`, `backtrace` and `tags` are checked
   * as `defineJob` checks them.
   */
  extra?: Record<string, unknown>;
}

/** The core's push options, by name (`batchSize` is `pushBulk`'s); any other belongs to a feature. */
export const CORE_PUSH_OPTIONS: readonly string[] = ["queue", "at", "in", "retry", "extra", "batchSize"];

/** A defined job: its name, options, schema, `perform`, and typed push helpers. */
export interface Job<In extends unknown[] = unknown[], Out extends unknown[] = In> {
  /** The wire `class`. */
  readonly name: string;
  /** Validated options: the core's, and those of features (each checked by its feature's rules). */
  readonly options: Readonly<JobOptions & Record<string, unknown>>;
  /** The argument schema, if any. */
  readonly schema: StandardSchemaV1<In, Out> | undefined;
  /** The work. */
  perform(ctx: JobContext, ...args: Out): unknown;
  /** Pushes this job to run now. Returns the jid (null if client middleware stopped it). */
  performAsync(client: JobPusher, ...args: In): Promise<string | null>;
  /** Pushes this job to run in `seconds`. */
  performIn(client: JobPusher, seconds: number, ...args: In): Promise<string | null>;
  /** Pushes this job to run at `at` (Date or epoch seconds). */
  performAt(client: JobPusher, at: Date | number, ...args: In): Promise<string | null>;
}

/** A job of any argument types, as registries and workers hold them. */
// deno-lint-ignore no-explicit-any
export type AnyJob = Job<any[], any[]>;

/** The input to `defineJob` when `args` is a schema. */
export type JobSpecWithSchema<S extends StandardSchemaV1<unknown[], unknown[]>> = JobOptions & {
  name: string;
  args: S;
  perform(ctx: JobContext, ...args: StandardSchemaV1.InferOutput<S>): unknown;
};

/** The input to `defineJob` without a schema: `perform`'s parameters type the args. */
export type JobSpec<A extends unknown[]> = JobOptions & {
  name: string;
  args?: undefined;
  perform(ctx: JobContext, ...args: A): unknown;
};

/**
 * `defineJob`, for jobs whose options may include the feature options `X`
 * (each feature's `OptionRules` check them).
 */
export interface DefineJob<X extends object> {
  <S extends StandardSchemaV1<unknown[], unknown[]>>(
    spec: JobSpecWithSchema<S> & X,
  ): Job<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>>;
  <A extends unknown[]>(spec: JobSpec<A> & X): Job<A, A>;
}

/**
 * Builds a `defineJob` that checks the core's options and, with `rules`,
 * the options of those features; an option no rule knows is kept as given
 * (a client refuses to push a job whose options no feature of it handles).
 * The root entry point's `defineJob` is this with the built-in features'
 * rules. Options are validated when the job is defined, so a typo fails at
 * start-up, not at 3 a.m.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * const defineJob = createJobDefiner<{ expiresIn?: number }>([expiryRules]);
 * const SendEmail = defineJob({
 *   name: "SendEmail",
 *   queue: "mailers",
 *   retry: 5,
 *   args: v.tuple([v.pipe(v.string(), v.email()), v.string()]),
 *   async perform(ctx, to, subject) {
 *     await fetch("https://mail.example/send", { method: "POST", body: JSON.stringify({ to, subject }), signal: ctx.signal });
 *   },
 * });
 * await SendEmail.performAsync(client, "ada@example.com", "Hello");
 * ```
 */
export function createJobDefiner<X extends object = Record<never, never>>(
  rules: readonly OptionRules[] = [],
): DefineJob<X> {
  return ((spec: JobSpec<unknown[]> | JobSpecWithSchema<StandardSchemaV1<unknown[], unknown[]>>): AnyJob => {
    const name = spec?.name;
    if (typeof name !== "string" || name.trim() === "" || hasUnsafeChars(name)) {
      throw new ConfigError(
        `Cannot define job as 'name' must be a non-empty string without control characters: current value is ${
          describeValue(name)
        }`,
      );
    }
    const fail = (what: string, value: unknown) =>
      new ConfigError(`Cannot define job ${name} as ${what}: current value is ${describeValue(value)}`);
    if (typeof spec.perform !== "function") throw fail("'perform' must be a function", spec.perform);
    if (spec.args !== undefined && typeof spec.args?.["~standard"]?.validate !== "function") {
      throw fail("'args' must be a Standard Schema (valibot, zod, arktype)", spec.args);
    }
    const extended = featureOptions(spec, rules, fail);
    const options = { ...validateJobOptions(spec, fail), ...extended.options };
    const job: AnyJob = {
      name,
      options: Object.freeze(options),
      schema: spec.args,
      perform: spec.perform as AnyJob["perform"],
      performAsync: (client, ...args) => client.push(job, args),
      performIn: (client, seconds, ...args) => client.push(job, args, { in: seconds }),
      performAt: (client, at, ...args) => client.push(job, args, { at }),
    };
    if (extended.owners.size) OWNERS.set(job, extended.owners);
    return Object.freeze(job);
  }) as DefineJob<X>;
}

const SPEC_FIELDS = new Set(["name", "args", "perform", ...CORE_JOB_OPTIONS]);

/** What a job's definer knew of each feature option it set: where it acts, and which feature owns it. */
export interface OptionOwner {
  readonly at: "push" | "run";
  /** How to add the feature (`"uniqueJobs()"`), when its rules say. */
  readonly feature: string | undefined;
}

const OWNERS = new WeakMap<AnyJob, ReadonlyMap<string, OptionOwner>>();

/**
 * What the definer of `job` knew of its feature option `name` (undefined for
 * an option no rule checked): a client without the feature may still push
 * a job whose option only the worker reads (`at: "run"`), and an error can
 * say which feature is missing.
 *
 * @example
 * ```ts
 * optionOwner(LimitedJob, "limits"); // { at: "run", feature: "rateLimits()" }
 * ```
 */
export function optionOwner(job: AnyJob, name: string): OptionOwner | undefined {
  return OWNERS.get(job)?.get(name);
}

/** Jobs that read their own cancellation (see {@link markSelfCancelling}). */
const SELF_CANCELLING = new WeakSet<object>();

/**
 * Marks `job` as reading its own cancellation: an iterable job sees a
 * cancel (`it-<jid>`'s `cancelled`) when it starts and at each state flush,
 * stops at an item and runs `onCancel`. A feature that skips cancelled jobs
 * lets such a job start instead, so its hooks run as in Sidekiq.
 *
 * @example
 * ```ts
 * markSelfCancelling(job); // in defineIterableJob
 * ```
 */
export function markSelfCancelling(job: AnyJob): void {
  SELF_CANCELLING.add(job);
}

/**
 * Whether `job` reads its own cancellation ({@link markSelfCancelling}).
 *
 * @example
 * ```ts
 * if (!isSelfCancelling(job)) throw new Discard("cancelled", { code: "cancelled" });
 * ```
 */
export function isSelfCancelling(job: AnyJob): boolean {
  return SELF_CANCELLING.has(job);
}

/** A spec's options beyond the core's: checked by the rule that owns each, else kept as given. */
function featureOptions(
  spec: object,
  rules: readonly OptionRules[],
  fail: (what: string, value: unknown) => Error,
): { options: Record<string, unknown>; owners: Map<string, OptionOwner> } {
  const options: Record<string, unknown> = {};
  const owners = new Map<string, OptionOwner>();
  for (const [key, value] of Object.entries(spec)) {
    if (SPEC_FIELDS.has(key) || value === undefined) continue;
    const owner = rules.find((r) => r.job && Object.hasOwn(r.job, key));
    const rule = owner?.job?.[key];
    options[key] = rule ? rule.check(value, fail) : value;
    if (rule) owners.set(key, { at: rule.at ?? "push", feature: owner?.feature });
  }
  return { options, owners };
}

/**
 * Validates the core's job options (shared by `defineJob` and push-time
 * overrides); other options are left out.
 *
 * @example
 * ```ts
 * validateJobOptions({ retry: 3 }, (what, v) => new ConfigError(what));
 * ```
 */
export function validateJobOptions(
  spec: JobOptions,
  fail: (what: string, value: unknown) => Error,
): JobOptions {
  const o: JobOptions = {};
  if (spec.queue !== undefined) {
    if (!isQueueName(spec.queue)) throw fail(`'queue' must be ${QUEUE_NAME_RULE}`, spec.queue);
    o.queue = spec.queue;
  }
  if (spec.retry !== undefined) {
    if (typeof spec.retry === "number") {
      if (!Number.isInteger(spec.retry)) throw fail("'retry' must be a boolean or a whole number", spec.retry);
      if (spec.retry < 0) throw fail("'retry' must be >= 0", spec.retry);
    } else if (typeof spec.retry !== "boolean") throw fail("'retry' must be a boolean or a whole number", spec.retry);
    o.retry = spec.retry;
  }
  if (spec.retryQueue !== undefined) {
    // Retries go to this queue: a worker must be able to listen to it.
    if (!isQueueName(spec.retryQueue)) throw fail(`'retryQueue' must be ${QUEUE_NAME_RULE}`, spec.retryQueue);
    o.retryQueue = spec.retryQueue;
  }
  if (spec.retryFor !== undefined) {
    if (typeof spec.retryFor !== "number" || !(spec.retryFor > 0) || !Number.isFinite(spec.retryFor)) {
      throw fail("'retryFor' must be > 0 seconds and finite", spec.retryFor);
    }
    o.retryFor = spec.retryFor;
  }
  if (spec.dead !== undefined) {
    if (typeof spec.dead !== "boolean") throw fail("'dead' must be a boolean", spec.dead);
    o.dead = spec.dead;
  }
  if (spec.backtrace !== undefined) {
    const b = spec.backtrace;
    if (typeof b !== "boolean" && !(typeof b === "number" && Number.isInteger(b) && b >= 0)) {
      throw fail("'backtrace' must be a boolean or a whole number >= 0", b);
    }
    o.backtrace = b;
  }
  if (spec.tags !== undefined) {
    if (!Array.isArray(spec.tags) || !spec.tags.every((t) => typeof t === "string")) {
      throw fail("'tags' must be an array of strings", spec.tags);
    }
    o.tags = [...spec.tags];
  }
  for (const hook of ["retryIn", "retriesExhausted"] as const) {
    if (spec[hook] !== undefined) {
      if (typeof spec[hook] !== "function") throw fail(`'${hook}' must be a function`, spec[hook]);
      // deno-lint-ignore no-explicit-any
      (o as any)[hook] = spec[hook];
    }
  }
  return Object.freeze(o);
}

/**
 * Checks `args` against a job's schema and returns the schema's output (what
 * `perform` receives). Synchronous schemas stay synchronous, which keeps bulk
 * pushes fast. Throws {@link JobArgsError} listing every issue.
 *
 * @example
 * ```ts
 * const out = await validateArgs(SendEmail, ["not-an-email", "hi"]); // throws JobArgsError
 * ```
 */
export function validateArgs(job: AnyJob, args: readonly unknown[]): unknown[] | Promise<unknown[]> {
  if (!job.schema) return args as unknown[];
  const result = job.schema["~standard"].validate(args);
  return result instanceof Promise ? result.then((r) => unwrap(job, r)) : unwrap(job, result);
}

/** How much of each schema message is kept: schema libraries quote the received value, which may be huge or hostile. */
const ISSUE_TEXT = 200;

function unwrap(job: AnyJob, result: StandardSchemaV1.Result<unknown[]>): unknown[] {
  if (!result.issues) return result.value;
  // At most 20 issues, each a short escaped excerpt: this message is logged
  // and stored as the dead job's error_message.
  const issues = result.issues.slice(0, 20).map((issue) => ({
    path: sanitize(issuePath(issue), ISSUE_TEXT),
    message: sanitize(String(issue.message), ISSUE_TEXT),
  }));
  const more = result.issues.length > issues.length ? ` (and ${result.issues.length - issues.length} more)` : "";
  const list = issues.map((i) => `${i.path}: ${i.message}`).join("; ");
  throw new JobArgsError(`Invalid arguments for job ${job.name}: ${list}${more}`, issues);
}

function issuePath(issue: StandardSchemaV1.Issue): string {
  let path = "args";
  for (const seg of issue.path ?? []) {
    const key = typeof seg === "object" && seg !== null ? seg.key : seg;
    path += typeof key === "number" || /^\d+$/.test(String(key)) ? `[${String(key)}]` : `.${String(key)}`;
  }
  return path;
}
