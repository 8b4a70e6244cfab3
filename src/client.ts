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
import { checkFeatures, checkPushOptions, type ClientFeature } from "./client_feature.ts";
import {
  applicableMiddleware,
  checkRewritten,
  type ClientMiddleware,
  type ClientMiddlewareContext,
  perPushWork,
  runClientMiddleware,
} from "./client_middleware.ts";
import { ConfigError, PayloadError } from "./errors.ts";
import { type AnyJob, type Job, type JobPusher, type PushOptions, validateArgs } from "./job.ts";
import { type Keys, keys, keysFor, type Keyspace } from "./keys.ts";
import { assertJsonSafe } from "./json_safe.ts";
import { type JobPayload, newJids, payloadSerializer, serializePayload, type TimeFormat, wireTime } from "./payload.ts";
import { describeValue } from "./describe_value.ts";
import { pushFields, pushTarget, runTimes } from "./push_options.ts";
import { PushBufferFullError, PushError } from "./push_error.ts";
import { type BufferedJob, type PlannedJob, PushBuffer, type ReliablePushOptions } from "./push_buffer.ts";
import { PushPlan } from "./push_plan.ts";
import { carrierJid, type PushResult, pushResultOf, type Written } from "./push_result.ts";
import { sanitize } from "./sanitize.ts";
import { checkShardable, shardCount, shardNamespaces } from "./shards.ts";
import type { Transport } from "./transport/transport.ts";
import { addGuard, type WriteGuard } from "./write_guard.ts";

/** Options for {@link createClient}. */
export interface ClientOptions {
  /** The Redis transport. */
  transport: Transport;
  /** Key namespace; none by default, as Ruby Sidekiq. */
  prefix?: string;
  /**
   * Key layout: `"sidekiq"` (Ruby-compatible, the default) or `"cluster"`
   * (one hash tag per namespace, for Redis Cluster; the default on a cluster
   * transport). See docs/cluster.md.
   */
  keyspace?: Keyspace;
  /**
   * Spreads the namespace over this many shards (cluster layout only; default
   * 1): each its own hash tag, so one app's jobs spread over several Redis
   * Cluster primaries. Pushes go to the shards in turn (a bulk push, batch by
   * batch); order is kept within a shard, not across. Workers must serve at
   * least as many shards (`createWorker({ shards })`). Features whose state
   * must be one across the namespace (unique jobs, batches, limits, periodic
   * jobs, ...) are refused. See docs/cluster.md.
   */
  shards?: number;
  /** Client middleware, outermost first. */
  middleware?: readonly ClientMiddleware[];
  /**
   * Features (`uniqueJobs()`, ...): their options, their client middleware
   * (run inside `middleware`, in this order) and their part in the admin
   * API's moves of this client's jobs.
   */
  features?: readonly ClientFeature[];
  /** `"seconds"` (Sidekiq 7 floats, the default) or `"millis"` (Sidekiq 8 integers). */
  timeFormat?: TimeFormat;
  /** Largest serialised payload accepted, in bytes; default 512 KiB. */
  maxPayloadBytes?: number;
  /** Jobs per round trip in `pushBulk`; default 1,000. */
  bulkBatchSize?: number;
  /**
   * Sidekiq Pro's reliable push, off by default: when Redis cannot be
   * reached, keep up to `maxJobs` (1,000) jobs in memory, answer with their
   * jids, and write them in order, never twice, when Redis answers again.
   * Every write then carries a mark (one script per batch instead of a
   * MULTI). Jobs still buffered when the process dies are lost; see
   * docs/operations.md.
   */
  reliablePush?: boolean | ReliablePushOptions;
}

/** Options for {@link Client.pushBulk}. */
export interface BulkPushOptions extends Omit<PushOptions, "at"> {
  /** One time for all, or one per job. */
  at?: Date | number | ReadonlyArray<Date | number>;
  /** Jobs per round trip; default the client's `bulkBatchSize`. */
  batchSize?: number;
}

const encoder = new TextEncoder();

/** The guards of a job written without any (shared: never added to). */
const NO_GUARDS: readonly WriteGuard[] = [];

/** Set by {@link Client}'s static block: {@link moveThroughMiddleware} reaches a client's private chain through it. */
let moveThrough: (client: Client<object>, payload: JobPayload, job?: AnyJob) => Promise<JobPayload | null>;
/** Set by {@link Client}'s static block: {@link preparePush} reaches a client's private push path through it. */
let prepareThrough: (
  client: Client<object>,
  job: AnyJob | string,
  argsList: ReadonlyArray<readonly unknown[]>,
  options: PushOptions,
) => Promise<PreparedPush | undefined>;

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
export class Client<P extends object = Record<string, unknown>> implements JobPusher<P> {
  #transport: Transport;
  #keys: Keys;
  #middleware: readonly ClientMiddleware[];
  #features: readonly ClientFeature[];
  #reserved: Readonly<Record<string, string>>;
  #format: TimeFormat;
  #maxBytes: number;
  #batchSize: number;
  #buffer: PushBuffer | undefined;
  #options: ClientOptions;
  /** Each shard's keys (one entry, `#keys`, when not sharded). */
  #shardKeys: readonly Keys[];
  #shardClients: readonly Client<P>[] | undefined;
  /** The shard the next unguarded batch goes to; starts anywhere, so many short-lived clients spread too. */
  #turn: number;

  constructor(options: ClientOptions) {
    if (!options?.transport) throw new ConfigError("Cannot create client as 'transport' is required");
    this.#options = options;
    this.#transport = options.transport;
    this.#keys = keysFor(options.transport, options);
    this.#features = checkFeatures(options.features, "create client");
    const count = shardCount(options.shards, this.#keys.keyspace, "create client");
    checkShardable(this.#features, count, "create client");
    this.#shardKeys = count === 1
      ? [this.#keys]
      : shardNamespaces(options.prefix ?? "", count).map((namespace) => keys(namespace, "cluster"));
    this.#turn = Math.floor(Math.random() * count);
    this.#middleware = [
      ...(options.middleware ?? []),
      ...this.#features.flatMap((f) => (f.client ? [f.client] : [])),
    ];
    this.#reserved = Object.assign({}, ...this.#features.map((f) => f.options?.fields ?? {}));
    this.#format = options.timeFormat ?? "seconds";
    if (this.#format !== "seconds" && this.#format !== "millis") {
      throw new ConfigError(
        `Cannot create client as 'timeFormat' must be "seconds" or "millis": current value is ${
          describeValue(this.#format)
        }`,
      );
    }
    this.#maxBytes = positiveInt("maxPayloadBytes", options.maxPayloadBytes ?? 512 * 1024);
    this.#batchSize = positiveInt("bulkBatchSize", options.bulkBatchSize ?? 1000);
    const reliable = options.reliablePush;
    if (reliable !== undefined && reliable !== false) {
      if (reliable !== true && (typeof reliable !== "object" || reliable === null)) {
        throw new ConfigError(
          `Cannot create client as 'reliablePush' must be true or an options object: current value is ${
            describeValue(reliable)
          }`,
        );
      }
      this.#buffer = new PushBuffer(this.#transport, this.#keys, reliable === true ? {} : reliable, this.#batchSize);
    }
  }

  /**
   * Jobs waiting in the reliable-push buffer for Redis to come back (always
   * 0 without `reliablePush`).
   *
   * @example
   * ```ts
   * if (client.buffered > 0) console.warn(`${client.buffered} jobs wait for Redis`);
   * ```
   */
  get buffered(): number {
    return this.#buffer?.size ?? 0;
  }

  /**
   * Writes the reliable-push buffer out now, and keeps trying (with its
   * back-off) until it is empty or `timeoutMs` (default 10 s) has passed.
   * Resolves to the jobs still buffered: call it before a process exits, or
   * in a serverless handler's `waitUntil`.
   *
   * @example
   * ```ts
   * const left = await client.flushBuffered({ timeoutMs: 20_000 });
   * if (left > 0) console.error(`${left} jobs could not be written`);
   * ```
   */
  flushBuffered(options: { timeoutMs?: number } = {}): Promise<number> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) {
      throw new ConfigError(
        `Cannot flush buffered jobs as 'timeoutMs' must be a number >= 0: current value is ${describeValue(timeoutMs)}`,
      );
    }
    return this.#buffer?.drain(timeoutMs) ?? Promise.resolve(0);
  }

  /**
   * Empties the reliable-push buffer and stops its retries, resolving to the
   * jobs it held (to keep elsewhere): for a process that must exit while
   * Redis stays away. A flush already under way settles first, so nothing
   * returned is also written.
   *
   * @example
   * ```ts
   * for (const job of await client.discardBuffered()) await fs.appendFile("unsent.jsonl", job.payload + "\n");
   * ```
   */
  discardBuffered(): Promise<BufferedJob[]> {
    return this.#buffer?.discard() ?? Promise.resolve([]);
  }

  /** The transport this client writes to. */
  get transport(): Transport {
    return this.#transport;
  }

  /** The key names this client uses. */
  get keys(): Keys {
    return this.#keys;
  }

  /**
   * One client per shard, in shard order (`[this]` when not sharded): for the
   * admin API's per-set views (retries, scheduled, dead, a queue's jobs),
   * which read one namespace. `Stats`, the dashboard's counters, processes
   * and queues read every shard through the sharded client itself.
   *
   * @example
   * ```ts
   * const client = createClient({ transport, shards: 8 });
   * for (const shard of client.shards) console.log(shard.keys.prefix, await new RetrySet(shard).size());
   * ```
   */
  get shards(): readonly Client<P>[] {
    if (this.#shardKeys.length === 1) return [this];
    return this.#shardClients ??= this.#shardKeys.map((k) =>
      new Client<P>({ ...this.#options, prefix: k.prefix.slice(1, -1), keyspace: "cluster", shards: 1 })
    );
  }

  /** The time format payloads are written in. */
  get timeFormat(): TimeFormat {
    return this.#format;
  }

  /** The features this client was created with. */
  get features(): readonly ClientFeature[] {
    return this.#features;
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
    options?: PushOptions & P,
  ): Promise<string | null>;
  push(job: string, args: readonly unknown[], options?: PushOptions & P): Promise<string | null>;
  async push(job: AnyJob | string, args: readonly unknown[], options: PushOptions = {}): Promise<string | null> {
    const { jids, verdicts } = await this.#pushOne(job, args, options);
    return carrierJid(jids[0], verdicts);
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
    options?: PushOptions & P,
  ): Promise<PushResult>;
  pushDetailed(job: string, args: readonly unknown[], options?: PushOptions & P): Promise<PushResult>;
  async pushDetailed(job: AnyJob | string, args: readonly unknown[], options: PushOptions = {}): Promise<PushResult> {
    const { jids, verdicts } = await this.#pushOne(job, args, options);
    return pushResultOf(jids[0], verdicts);
  }

  async #pushOne(job: AnyJob | string, args: readonly unknown[], options: PushOptions): Promise<Written> {
    try {
      return await this.#pushMany(job, [args], options, 1);
    } catch (error) {
      // One job, one batch: the Redis error itself says all there is (a full buffer says more).
      throw error instanceof PushError && !(error instanceof PushBufferFullError) && error.cause !== undefined
        ? error.cause
        : error;
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
    options?: BulkPushOptions & P,
  ): Promise<(string | null)[]>;
  pushBulk(
    job: string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options?: BulkPushOptions & P,
  ): Promise<(string | null)[]>;
  async pushBulk(
    job: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions = {},
  ): Promise<(string | null)[]> {
    const { jids, verdicts } = await this.#pushBulk(job, argsList, options);
    // Without guards every jid written is the answer: no copy of 100,000 results.
    return verdicts.size === 0 ? jids : jids.map((jid) => carrierJid(jid, verdicts));
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
    options?: BulkPushOptions & P,
  ): Promise<PushResult[]>;
  pushBulkDetailed(
    job: string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options?: BulkPushOptions & P,
  ): Promise<PushResult[]>;
  async pushBulkDetailed(
    job: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions = {},
  ): Promise<PushResult[]> {
    const { jids, verdicts } = await this.#pushBulk(job, argsList, options);
    return jids.map((jid) => pushResultOf(jid, verdicts));
  }

  #pushBulk(
    job: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions,
  ): Promise<Written> {
    if (!Array.isArray(argsList)) {
      throw new PayloadError(
        `Cannot push jobs as the args list must be an array: current value is ${describeValue(argsList)}`,
      );
    }
    const batchSize = options.batchSize ?? this.#batchSize;
    if (!Number.isInteger(batchSize) || batchSize <= 0) {
      throw new PayloadError(
        `Cannot push jobs as 'batchSize' must be a whole number > 0: current value is ${describeValue(batchSize)}`,
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
    const plan = new PushPlan();
    const planned: PlannedJob[] | undefined = this.#buffer ? [] : undefined;
    const { label, written } =
      (await this.#prepare(jobOrName, argsList, options, false, (queue, json, jid, at, guards) => {
        if (planned) planned.push({ queue, queueKey: this.#keys.queue(queue), atMs: at, json, jid, guards });
        else if (guards.length) plan.guarded(guards, { queue, queueKey: this.#keys.queue(queue), atMs: at, json, jid });
        else if (at === undefined) plan.enqueue(queue, json, jid);
        else plan.schedule(at, json, jid);
      }))!;
    const verdicts = planned
      ? await this.#buffer!.write(planned, label, batchSize)
      : await plan.write(this.#transport, { keys: this.#keys, batchSize, className: label, spread: this.#spread });
    return { jids: written, verdicts };
  }

  /**
   * Validates and serialises every job of a push, handing each to `take`
   * (nothing touches Redis): the push's label and each job's jid (`null`
   * where a middleware stopped it). With `directOnly`, a push that would run
   * middleware per job is not prepared at all (`undefined`, before any job
   * is looked at): only pushes whose middleware all work per push.
   */
  async #prepare(
    jobOrName: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions,
    directOnly: boolean,
    take: (queue: string, json: string, jid: string, at: number | undefined, guards: readonly WriteGuard[]) => void,
  ): Promise<{ label: string; written: (string | null)[] } | undefined> {
    const target = pushTarget(jobOrName);
    const { job, className } = target;
    const label = sanitize(className, 100);
    if (typeof options !== "object" || options === null) {
      throw new PayloadError(
        `Cannot push job ${label} as the options must be an object: current value is ${describeValue(options)}`,
      );
    }
    checkPushOptions(this.#features, job, options as Record<string, unknown>, className);
    const fields = pushFields(target, options, this.#reserved);
    const nowMs = Date.now();
    const runAt = runTimes(options, { count: argsList.length, nowMs });
    const created = wireTime(nowMs, this.#format);
    const { at: _at, in: _in, batchSize: _size, ...pushOptions } = options as BulkPushOptions & { in?: number };
    const chain = applicableMiddleware(this.#middleware, job, pushOptions);
    // Middleware that does the same to every job does it once here (a batch's `bid` and guard); with no job, never.
    const shared = chain.length === 0 || argsList.length === 0 ? undefined : perPushWork(chain, {
      queue: fields.queue,
      job,
      transport: this.#transport,
      keys: this.#keys,
      options: pushOptions,
      className,
    }, fields);
    // Without middleware run per job every payload shares its fields but args
    // and jid, so those are serialised once (bulk pushes spend their time here).
    const direct = chain.length === 0 || shared !== undefined;
    if (directOnly && !direct) return undefined;
    const jids = newJids(argsList.length);
    const written: (string | null)[] = new Array(argsList.length);
    const head = shared?.fields ?? fields;
    const now = direct ? payloadSerializer(head, { created_at: created, enqueued_at: created }, this.#format) : null;
    const later = direct ? payloadSerializer(head, { created_at: created }, this.#format) : null;

    // Validate and serialise every job; nothing touches Redis until all pass.
    for (let i = 0; i < argsList.length; i++) {
      const args = argsList[i];
      if (!Array.isArray(args)) {
        throw new PayloadError(`Cannot push job as args must be an array: current value is ${describeValue(args)}`);
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
      let guards = NO_GUARDS;
      if (direct) {
        json = (at === undefined ? now! : later!)(args, jid);
        if (shared) guards = shared.guards;
      } else {
        const own: WriteGuard[] = guards = [];
        const payload = await runClientMiddleware(
          chain,
          { ...fields, args: args as unknown[], jid, created_at: created } as JobPayload,
          this.#context(fields.queue, job, { options: pushOptions, at, guard: (g) => addGuard(own, g) }),
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
      take(queue, json, jid, at, guards);
    }
    return { label, written };
  }

  /** The next shard's keys, for a batch no guard wrote (undefined when not sharded: every batch in `#keys`). */
  get #spread(): (() => Keys) | undefined {
    const all = this.#shardKeys;
    if (all.length === 1) return undefined;
    return () => all[this.#turn++ % all.length];
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

  #move(payload: JobPayload, job?: AnyJob): Promise<JobPayload | null> {
    const chain = applicableMiddleware(this.#middleware, job, undefined);
    if (chain.length === 0) return Promise.resolve(payload);
    const ctx = this.#context(payload.queue, job, { options: undefined, at: undefined, guard: undefined });
    return runClientMiddleware(chain, payload, ctx);
  }

  static {
    moveThrough = (client, payload, job) => client.#move(payload, job);
    prepareThrough = async (client, job, argsList, options) => {
      const jobs: PlannedJob[] = [];
      const done = await client.#prepare(job, argsList, options, true, (queue, json, jid, at, guards) => {
        jobs.push({ queue, queueKey: client.#keys.queue(queue), atMs: at, json, jid, guards });
      });
      return done && { jids: done.written, jobs };
    };
  }
}

/** A push validated and serialised but not written (see {@link preparePush}). */
export interface PreparedPush {
  /** Per job of the push, in order: its jid. */
  readonly jids: readonly (string | null)[];
  /** The jobs to write, with their guards. */
  readonly jobs: readonly PlannedJob[];
}

/**
 * Validates and serialises a bulk push as `client.pushBulk` would (schemas,
 * size, client options, every middleware's per-push work) without writing
 * it, for a feature that writes the jobs in a step of its own (a flow made
 * in one call). Resolves to `undefined` when a middleware would run per job
 * (nothing is prepared then: push the usual way). Not a method: only
 * features write pushes themselves.
 *
 * @example
 * ```ts
 * const prepared = await preparePush(client, Child, [[1], [2]], { batch: scope });
 * if (prepared) for (const job of prepared.jobs) writeYourself(job.queue, job.json);
 * ```
 */
export function preparePush(
  client: Client<object>,
  job: AnyJob | string,
  argsList: ReadonlyArray<readonly unknown[]>,
  options: PushOptions,
): Promise<PreparedPush | undefined> {
  return prepareThrough(client, job, argsList, options);
}

/**
 * Runs a client's middleware over an existing job it moves to a queue (the
 * poller's promotions, the API's retries, periodic ticks), as every push
 * does. Resolves to the payload to write, or `null` if a middleware stopped
 * it. Not a method: only the engine and the admin API move jobs.
 *
 * @example
 * ```ts
 * const rewritten = await moveThroughMiddleware(client, payload);
 * ```
 */
export function moveThroughMiddleware(
  client: Client<object>,
  payload: JobPayload,
  job?: AnyJob,
): Promise<JobPayload | null> {
  return moveThrough(client, payload, job);
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(
      `Cannot create client as '${name}' must be a whole number > 0: current value is ${describeValue(value)}`,
    );
  }
  return value;
}
