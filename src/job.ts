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
import { describe, type JobPayload } from "./payload.ts";
import { isQueueName, QUEUE_NAME_RULE } from "./queue_name.ts";
import { hasUnsafeChars, sanitize } from "./sanitize.ts";
import type { StandardSchemaV1 } from "./standard_schema.ts";
import type { Transport } from "./transport/transport.ts";
import { type UniqueConflict, type UniqueOptions, validateConflict, validateUnique } from "./unique/options.ts";

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
  /**
   * At most one copy queued or running per class, queue and args (or
   * `by(args)`): a lock taken in the same atomic step as the push, released
   * at `until` and never outliving `for` seconds. Needs `uniqueJobs()`'s
   * client and server middleware (see docs/unique.md).
   */
  unique?: UniqueOptions;
  /** What a push of a copy the lock is held for does: `"skip"` (default), `"replace"`, `"reschedule"`. */
  uniqueConflict?: UniqueConflict;
}

/**
 * Anything that can push a job: a `Client`. A definition's arguments are
 * checked against its input tuple at compile time; a class name takes any
 * arguments (another process defines them).
 */
export interface JobPusher {
  push<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    args: Readonly<NoInfer<In>>,
    options?: PushOptions,
  ): Promise<string | null>;
  push(job: string, args: readonly unknown[], options?: PushOptions): Promise<string | null>;
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
  /** Overrides the job's `unique` for this push; `false` pushes without a lock. */
  unique?: UniqueOptions | false;
  /** Overrides the job's `uniqueConflict` for this push. */
  uniqueConflict?: UniqueConflict;
}

/** A defined job: its name, options, schema, `perform`, and typed push helpers. */
export interface Job<In extends unknown[] = unknown[], Out extends unknown[] = In> {
  /** The wire `class`. */
  readonly name: string;
  /** Validated options. */
  readonly options: Readonly<JobOptions>;
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

/** The input to {@link defineJob} when `args` is a schema. */
export type JobSpecWithSchema<S extends StandardSchemaV1<unknown[], unknown[]>> = JobOptions & {
  name: string;
  args: S;
  perform(ctx: JobContext, ...args: StandardSchemaV1.InferOutput<S>): unknown;
};

/** The input to {@link defineJob} without a schema: `perform`'s parameters type the args. */
export type JobSpec<A extends unknown[]> = JobOptions & {
  name: string;
  args?: undefined;
  perform(ctx: JobContext, ...args: A): unknown;
};

/**
 * Defines a job. Options are validated here, so a typo fails at start-up,
 * not at 3 a.m.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
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
export function defineJob<S extends StandardSchemaV1<unknown[], unknown[]>>(
  spec: JobSpecWithSchema<S>,
): Job<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>>;
export function defineJob<A extends unknown[]>(spec: JobSpec<A>): Job<A, A>;
export function defineJob(
  spec: JobSpec<unknown[]> | JobSpecWithSchema<StandardSchemaV1<unknown[], unknown[]>>,
): AnyJob {
  const name = spec.name;
  if (typeof name !== "string" || name.trim() === "" || hasUnsafeChars(name)) {
    throw new ConfigError(
      `Cannot define job as 'name' must be a non-empty string without control characters: current value is ${
        describe(name)
      }`,
    );
  }
  const fail = (what: string, value: unknown) =>
    new ConfigError(`Cannot define job ${name} as ${what}: current value is ${describe(value)}`);
  if (typeof spec.perform !== "function") throw fail("'perform' must be a function", spec.perform);
  if (spec.args !== undefined && typeof spec.args?.["~standard"]?.validate !== "function") {
    throw fail("'args' must be a Standard Schema (valibot, zod, arktype)", spec.args);
  }
  const options = validateJobOptions(spec, fail);
  const job: AnyJob = {
    name,
    options,
    schema: spec.args,
    perform: spec.perform as AnyJob["perform"],
    performAsync: (client, ...args) => client.push(job, args),
    performIn: (client, seconds, ...args) => client.push(job, args, { in: seconds }),
    performAt: (client, at, ...args) => client.push(job, args, { at }),
  };
  return Object.freeze(job);
}

/**
 * Validates job options (shared by `defineJob` and push-time overrides).
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
  if (spec.unique !== undefined) o.unique = validateUnique(spec.unique, fail) as UniqueOptions;
  if (spec.uniqueConflict !== undefined) o.uniqueConflict = validateConflict(spec.uniqueConflict, fail);
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
