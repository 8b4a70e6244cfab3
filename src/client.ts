/**
 * The client: push and bulk push, now or scheduled, with Sidekiq's wire
 * behaviour. Three modules do the work, one concept each: the option rules
 * (`push_options.ts`), the wire format (`payload.ts`, whose serialiser the
 * bulk path shares), and batching and writing (`push_plan.ts`). Every check
 * (options, schema, JSON safety, size) happens before anything is written,
 * so a rejected push writes nothing.
 *
 * @module
 */
import {
  applicable,
  checkRewritten,
  type ClientMiddleware,
  type ClientMiddlewareContext,
  runClientMiddleware,
  unhandledOption,
} from "./client_middleware.ts";
import { ConfigError, PayloadError } from "./errors.ts";
import { type AnyJob, type Job, type JobPusher, type PushOptions, validateArgs } from "./job.ts";
import { type Keys, keys } from "./keys.ts";
import { assertJsonSafe } from "./json_safe.ts";
import {
  describe,
  type JobPayload,
  newJids,
  payloadSerializer,
  serializePayload,
  type TimeFormat,
  wireTime,
} from "./payload.ts";
import { pushFields, pushTarget, runTimes } from "./push_options.ts";
import { PushError } from "./push_error.ts";
import { PushPlan } from "./push_plan.ts";
import { carrier, detailed, type PushResult, type Written } from "./push_result.ts";
import { sanitize } from "./sanitize.ts";
import type { Transport } from "./transport/transport.ts";
import { oneGuard, type WriteGuard } from "./write_guard.ts";

/** Options for {@link createClient}. */
export interface ClientOptions {
  /** The Redis transport. */
  transport: Transport;
  /** Key namespace; none by default, as Ruby Sidekiq. */
  prefix?: string;
  /** Client middleware, outermost first. */
  middleware?: readonly ClientMiddleware[];
  /** `"seconds"` (Sidekiq 7 floats, the default) or `"millis"` (Sidekiq 8 integers). */
  timeFormat?: TimeFormat;
  /** Largest serialised payload accepted, in bytes; default 512 KiB. */
  maxPayloadBytes?: number;
  /** Jobs per round trip in `pushBulk`; default 1,000. */
  bulkBatchSize?: number;
}

/** Options for {@link Client.pushBulk}. */
export interface BulkPushOptions extends Omit<PushOptions, "at"> {
  /** One time for all, or one per job. */
  at?: Date | number | ReadonlyArray<Date | number>;
  /** Jobs per round trip; default the client's `bulkBatchSize`. */
  batchSize?: number;
}

const encoder = new TextEncoder();

/**
 * Pushes jobs. Bound to one transport; make as many as you like.
 *
 * @example
 * ```ts
 * const client = createClient({ transport: ioredisTransport({ url: "redis://localhost:6379" }) });
 * const jid = await client.push(HardJob, ["bob", 5]);
 * await client.push(HardJob, ["later", 1], { in: 60 });
 * await client.push("RubyOnlyJob", [1, 2], { queue: "critical" }); // by class name
 * const jids = await client.pushBulk(HardJob, [["a", 1], ["b", 2]]);
 * ```
 */
export class Client implements JobPusher {
  #transport: Transport;
  #keys: Keys;
  #middleware: readonly ClientMiddleware[];
  #format: TimeFormat;
  #maxBytes: number;
  #batchSize: number;

  constructor(options: ClientOptions) {
    if (!options?.transport) throw new ConfigError("Cannot create client as 'transport' is required");
    this.#transport = options.transport;
    this.#keys = keys(options.prefix);
    this.#middleware = options.middleware ?? [];
    this.#format = options.timeFormat ?? "seconds";
    if (this.#format !== "seconds" && this.#format !== "millis") {
      throw new ConfigError(
        `Cannot create client as 'timeFormat' must be "seconds" or "millis": current value is ${
          describe(this.#format)
        }`,
      );
    }
    this.#maxBytes = positiveInt("maxPayloadBytes", options.maxPayloadBytes ?? 512 * 1024);
    this.#batchSize = positiveInt("bulkBatchSize", options.bulkBatchSize ?? 1000);
  }

  /** The transport this client writes to. */
  get transport(): Transport {
    return this.#transport;
  }

  /** The key names this client uses. */
  get keys(): Keys {
    return this.#keys;
  }

  /** The time format payloads are written in. */
  get timeFormat(): TimeFormat {
    return this.#format;
  }

  /**
   * Pushes one job. Returns its jid, or `null` if a middleware stopped it or
   * it is a unique job another copy holds the lock of ({@link
   * Client.pushDetailed} says which, and which copy).
   * A definition's `args` are checked against its argument tuple at compile
   * time (and its schema at run time); a class name takes any JSON array.
   * If Redis fails, rejects with its `TransportError` (with `maybeApplied`
   * when the reply was lost).
   *
   * @example
   * ```ts
   * await client.push(HardJob, ["bob", 5], { queue: "critical", in: 30 });
   * await client.push("RubyOnlyJob", [1, { any: "json" }]);
   * ```
   */
  push<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    args: Readonly<NoInfer<In>>,
    options?: PushOptions,
  ): Promise<string | null>;
  push(job: string, args: readonly unknown[], options?: PushOptions): Promise<string | null>;
  async push(job: AnyJob | string, args: readonly unknown[], options: PushOptions = {}): Promise<string | null> {
    const { jids, verdicts } = await this.#pushOne(job, args, options);
    return carrier(jids[0], verdicts);
  }

  /**
   * Pushes one job, as {@link Client.push}, and says what became of it:
   * pushed, stopped by a middleware, or, for a unique job, a duplicate of
   * another copy, or that copy replaced or rescheduled ({@link PushResult}).
   *
   * @example
   * ```ts
   * const { jid, status, existing } = await client.pushDetailed(SyncUser, [42]);
   * if (status === "duplicate") console.log(`already queued as ${existing}`);
   * ```
   */
  pushDetailed<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    args: Readonly<NoInfer<In>>,
    options?: PushOptions,
  ): Promise<PushResult>;
  pushDetailed(job: string, args: readonly unknown[], options?: PushOptions): Promise<PushResult>;
  async pushDetailed(job: AnyJob | string, args: readonly unknown[], options: PushOptions = {}): Promise<PushResult> {
    const { jids, verdicts } = await this.#pushOne(job, args, options);
    return detailed(jids[0], verdicts);
  }

  async #pushOne(job: AnyJob | string, args: readonly unknown[], options: PushOptions): Promise<Written> {
    try {
      return await this.#pushMany(job, [args], options, 1);
    } catch (error) {
      // One job, one batch: the Redis error itself says all there is.
      throw error instanceof PushError && error.cause !== undefined ? error.cause : error;
    }
  }

  /**
   * Pushes many jobs of one class, one round trip per batch. Returns the jids
   * in order (`null` where a middleware stopped a job or a unique job was a
   * duplicate; {@link Client.pushBulkDetailed} says which).
   *
   * Every job is checked before anything is written, so bad input writes
   * nothing. Each batch (`batchSize` jobs, default 1,000) is one MULTI,
   * written whole or not at all. If Redis refuses a batch or its reply is
   * lost, nothing more is sent and the call rejects with a {@link PushError}
   * whose `landed`, `failed` (with `maybeApplied`) and `notSent` list the
   * jids of each kind. On a transport that keeps call order the batch
   * after the failed one may already be on its way; it is waited for and
   * listed where it belongs.
   *
   * @example
   * ```ts
   * const jids = await client.pushBulk(HardJob, [["a", 1], ["b", 2]], { queue: "bulk" });
   * ```
   */
  pushBulk<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    argsList: ReadonlyArray<Readonly<NoInfer<In>>>,
    options?: BulkPushOptions,
  ): Promise<(string | null)[]>;
  pushBulk(
    job: string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options?: BulkPushOptions,
  ): Promise<(string | null)[]>;
  async pushBulk(
    job: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions = {},
  ): Promise<(string | null)[]> {
    const { jids, verdicts } = await this.#pushBulk(job, argsList, options);
    // Without guards every jid written is the answer: no copy of 100,000 results.
    return verdicts.size === 0 ? jids : jids.map((jid) => carrier(jid, verdicts));
  }

  /**
   * {@link Client.pushBulk}, with each job's {@link PushResult}.
   *
   * @example
   * ```ts
   * const results = await client.pushBulkDetailed(SyncUser, [[1], [2], [1]]);
   * results.map((r) => r.status); // ["pushed", "pushed", "duplicate"] for a unique job
   * ```
   */
  pushBulkDetailed<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    argsList: ReadonlyArray<Readonly<NoInfer<In>>>,
    options?: BulkPushOptions,
  ): Promise<PushResult[]>;
  pushBulkDetailed(
    job: string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options?: BulkPushOptions,
  ): Promise<PushResult[]>;
  async pushBulkDetailed(
    job: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions = {},
  ): Promise<PushResult[]> {
    const { jids, verdicts } = await this.#pushBulk(job, argsList, options);
    return jids.map((jid) => detailed(jid, verdicts));
  }

  #pushBulk(
    job: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions,
  ): Promise<Written> {
    if (!Array.isArray(argsList)) {
      throw new PayloadError(
        `Cannot push jobs as the args list must be an array: current value is ${describe(argsList)}`,
      );
    }
    const batchSize = options.batchSize ?? this.#batchSize;
    if (!Number.isInteger(batchSize) || batchSize <= 0) {
      throw new PayloadError(
        `Cannot push jobs as 'batchSize' must be a whole number > 0: current value is ${describe(batchSize)}`,
      );
    }
    return this.#pushMany(job, argsList, options, batchSize);
  }

  async #pushMany(
    jobOrName: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions,
    batchSize: number,
  ): Promise<Written> {
    const target = pushTarget(jobOrName);
    const { job, className } = target;
    const label = sanitize(className, 100);
    const fields = pushFields(target, options);
    const unhandled = unhandledOption(this.#middleware, job, options as Record<string, unknown>);
    if (unhandled) {
      throw new ConfigError(
        `Cannot push job ${label} as it sets '${unhandled}' but no client middleware handles it: add one that does (uniqueJobs().client for 'unique') to createClient({ middleware })`,
      );
    }
    const nowMs = Date.now();
    const runAt = runTimes(options, { count: argsList.length, nowMs });
    const created = wireTime(nowMs, this.#format);
    const jids = newJids(argsList.length);
    const written: (string | null)[] = new Array(argsList.length);
    const plan = new PushPlan();
    const { at: _at, in: _in, batchSize: _size, ...pushOptions } = options as BulkPushOptions & { in?: number };
    const chain = applicable(this.#middleware, job, pushOptions);
    // Without middleware every payload shares its fields but args and jid,
    // so those are serialised once (bulk pushes spend their time here).
    const direct = chain.length === 0;
    const now = direct ? payloadSerializer(fields, { created_at: created, enqueued_at: created }, this.#format) : null;
    const later = direct ? payloadSerializer(fields, { created_at: created }, this.#format) : null;

    // Validate and serialise every job; nothing touches Redis until all pass.
    for (let i = 0; i < argsList.length; i++) {
      const args = argsList[i];
      if (!Array.isArray(args)) {
        throw new PayloadError(`Cannot push job as args must be an array: current value is ${describe(args)}`);
      }
      // JSON safety first: it bounds the depth a schema then walks.
      assertJsonSafe(args, "args");
      if (job?.schema) {
        const checked = validateArgs(job, args);
        if (checked instanceof Promise) await checked;
      }
      const at = Array.isArray(runAt) ? runAt[i] : runAt;
      let json: string;
      let queue = fields.queue;
      let jid = jids[i];
      let guard: WriteGuard | undefined;
      if (direct) json = (at === undefined ? now! : later!)(args, jid);
      else {
        const payload = await runClientMiddleware(
          chain,
          { ...fields, args: args as unknown[], jid, created_at: created } as JobPayload,
          this.#context(fields.queue, job, { options: pushOptions, at, guard: (g) => guard = oneGuard(guard, g) }),
        );
        if (!payload) {
          written[i] = null;
          continue;
        }
        checkRewritten(payload, label);
        if (at === undefined) payload.enqueued_at = created;
        json = serializePayload(payload, this.#format);
        queue = payload.queue;
        jid = payload.jid;
      }
      this.#checkSize(json, label);
      written[i] = jid;
      if (guard) plan.guarded(guard, { queue, queueKey: this.#keys.queue(queue), atMs: at, json, jid });
      else if (at === undefined) plan.enqueue(queue, json, jid);
      else plan.schedule(at, json, jid);
    }
    const verdicts = await plan.write(this.#transport, { keys: this.#keys, batchSize, className: label });
    return { jids: written, verdicts };
  }

  #context(
    queue: string,
    job: AnyJob | undefined,
    push: Pick<ClientMiddlewareContext, "options" | "at" | "guard">,
  ): ClientMiddlewareContext {
    return { queue, job, transport: this.#transport, keys: this.#keys, ...push };
  }

  #checkSize(json: string, className: string): void {
    // Byte length only matters near the limit; string length bounds it from below.
    if (json.length * 3 > this.#maxBytes) {
      const bytes = encoder.encode(json).length;
      if (bytes > this.#maxBytes) {
        throw new PayloadError(
          `Cannot push job ${className} as its payload is ${bytes} bytes: the limit is ${this.#maxBytes} (maxPayloadBytes)`,
        );
      }
    }
  }

  /**
   * Runs the client middleware over a payload, as every push does; the
   * poller uses it when it moves scheduled jobs to their queues. Resolves to
   * the payload to write, or `null` if a middleware stopped it.
   */
  applyMiddleware(payload: JobPayload, job?: AnyJob): Promise<JobPayload | null> {
    const chain = applicable(this.#middleware, job, undefined);
    if (chain.length === 0) return Promise.resolve(payload);
    const ctx = this.#context(payload.queue, job, { options: undefined, at: undefined, guard: undefined });
    return runClientMiddleware(chain, payload, ctx);
  }
}

/**
 * Creates a {@link Client}.
 *
 * @example
 * ```ts
 * const client = createClient({ transport: memoryTransport() });
 * ```
 */
export function createClient(options: ClientOptions): Client {
  return new Client(options);
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(
      `Cannot create client as '${name}' must be a whole number > 0: current value is ${describe(value)}`,
    );
  }
  return value;
}
