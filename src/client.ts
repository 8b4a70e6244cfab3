/**
 * The client: push, bulk push and scheduling, with Sidekiq's wire behaviour
 * (`Client#atomic_push`): `SADD queues` + `LPUSH queue:<q>` in one MULTI, or
 * `ZADD schedule` scored by run time. Every check (schema, JSON safety, size)
 * happens before anything is written, so a rejected push writes nothing.
 *
 * @module
 */
import { type ClientMiddleware, runClientMiddleware } from "./client_middleware.ts";
import { ConfigError, PayloadError } from "./errors.ts";
import { type AnyJob, type Job, type JobPusher, type PushOptions, validateArgs } from "./job.ts";
import { type Keys, keys } from "./keys.ts";
import {
  assertJsonSafe,
  describe,
  type JobPayload,
  newJids,
  serializePayload,
  type TimeFormat,
  wireTime,
} from "./payload.ts";
import type { Command, Transport } from "./transport/transport.ts";

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
/** Fields every push sets per job, after the shared ones. */
const PER_JOB_FIELDS = ["args", "jid", "created_at", "enqueued_at"];

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
   * Pushes one job. Returns its jid, or `null` if a middleware stopped it.
   *
   * @example
   * ```ts
   * await client.push(HardJob, ["bob", 5], { queue: "critical", in: 30 });
   * ```
   */
  async push<In extends unknown[]>(
    job: Job<In, unknown[]> | AnyJob | string,
    args: In | readonly unknown[],
    options: PushOptions = {},
  ): Promise<string | null> {
    const [jid] = await this.#pushMany(job, [args], options, 1);
    return jid;
  }

  /**
   * Pushes many jobs of one class, one round trip per batch. Returns the jids
   * in order (`null` where a middleware stopped a job).
   *
   * Every job is checked before anything is written, so bad input writes
   * nothing. Each batch is atomic; if Redis refuses one, the call rejects
   * with the batches before it written (and, on a transport that keeps call
   * order, possibly the one batch already sent after it).
   *
   * @example
   * ```ts
   * const jids = await client.pushBulk(HardJob, [["a", 1], ["b", 2]], { queue: "bulk" });
   * ```
   */
  pushBulk<In extends unknown[]>(
    job: Job<In, unknown[]> | AnyJob | string,
    argsList: ReadonlyArray<In | readonly unknown[]>,
    options: BulkPushOptions = {},
  ): Promise<(string | null)[]> {
    if (!Array.isArray(argsList)) {
      throw new PayloadError(
        `Cannot push jobs as the args list must be an array: current value is ${describe(argsList)}`,
      );
    }
    if (Array.isArray(options.at) && options.at.length !== argsList.length) {
      throw new PayloadError(
        `Cannot push jobs as 'at' must have one time per job: ${options.at.length} times for ${argsList.length} jobs`,
      );
    }
    return this.#pushMany(job, argsList, options, options.batchSize ?? this.#batchSize);
  }

  async #pushMany(
    jobOrName: AnyJob | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options: BulkPushOptions,
    batchSize: number,
  ): Promise<(string | null)[]> {
    const job = typeof jobOrName === "string" ? undefined : jobOrName;
    const className = typeof jobOrName === "string" ? jobOrName : jobOrName?.name;
    if (typeof className !== "string" || className === "") {
      throw new PayloadError(
        `Cannot push job as the job must be a defineJob() result or a class name: current value is ${
          describe(jobOrName)
        }`,
      );
    }
    const queue = options.queue ?? job?.options.queue ?? "default";
    if (typeof queue !== "string" || !/^[^\s,]+$/.test(queue)) {
      throw new PayloadError(
        `Cannot push job as 'queue' must be a non-empty string without spaces or commas: current value is ${
          describe(queue)
        }`,
      );
    }
    const retry = options.retry ?? job?.options.retry ?? true;
    if (typeof retry !== "boolean" && !(Number.isInteger(retry) && retry >= 0)) {
      throw new PayloadError(`Cannot push job as 'retry' must be >= 0: current value is ${describe(retry)}`);
    }
    const nowMs = Date.now();
    const runAt = Array.isArray(options.at)
      ? options.at.map((at) => resolveRunAt(at, undefined, nowMs))
      : resolveRunAt(options.at as Date | number | undefined, options.in, nowMs);

    // Phase 1: validate and serialise every job; nothing touches Redis yet.
    const jids = newJids(argsList.length);
    const base = this.#base(job, className, queue, retry, options.extra);
    const created = wireTime(nowMs, this.#format);
    // Without middleware every payload shares its fields but args and jid, so
    // the common part is serialised once (bulk pushes spend their time here).
    // `extra` naming a field the push sets itself takes the general path,
    // where the push's own value wins, rather than writing the key twice.
    const head = this.#middleware.length || PER_JOB_FIELDS.some((f) => f in base)
      ? ""
      : serializePayload(base as JobPayload, this.#format).slice(0, -1);
    const createdText = this.#timeText(created);
    const immediate = new Map<string, string[]>();
    const scheduled: (string | number)[] = [];
    const results: (string | null)[] = new Array(argsList.length);
    for (let i = 0; i < argsList.length; i++) {
      const args = argsList[i];
      if (!Array.isArray(args)) {
        throw new PayloadError(`Cannot push job as args must be an array: current value is ${describe(args)}`);
      }
      if (job?.schema) {
        const checked = validateArgs(job, args);
        if (checked instanceof Promise) await checked;
      }
      assertJsonSafe(args, "args");
      const at = Array.isArray(runAt) ? runAt[i] : runAt;
      let json: string;
      let target = queue;
      if (head) {
        json = `${head},"args":${JSON.stringify(args)},"jid":"${jids[i]}","created_at":${createdText}${
          at === undefined ? `,"enqueued_at":${createdText}` : ""
        }}`;
        this.#checkSize(json, className);
      } else {
        const payload = await this.applyMiddleware(
          { ...base, args: args as unknown[], jid: jids[i], created_at: created } as JobPayload,
          job,
        );
        if (!payload) {
          results[i] = null;
          continue;
        }
        if (at === undefined) payload.enqueued_at = created;
        target = payload.queue;
        json = this.#serialize(payload);
      }
      results[i] = jids[i];
      if (at !== undefined) scheduled.push(at / 1000, json);
      else {
        const list = immediate.get(target);
        if (list) list.push(json);
        else immediate.set(target, [json]);
      }
    }

    // Phase 2: write. Each batch is one MULTI, so a queue never has its SADD
    // without its LPUSH.
    const batches: Command[][] = [];
    for (const [q, list] of immediate) {
      for (let i = 0; i < list.length; i += batchSize) {
        batches.push([["SADD", this.#keys.queues, q], ["LPUSH", this.#keys.queue(q), ...list.slice(i, i + batchSize)]]);
      }
    }
    for (let i = 0; i < scheduled.length; i += batchSize * 2) {
      batches.push([["ZADD", this.#keys.schedule, ...scheduled.slice(i, i + batchSize * 2)]]);
    }
    // Queue order across batches must hold. A transport that keeps call order
    // gets the next batch while Redis applies the last one; others (MULTIs
    // on separate connections, HTTP) one batch at a time.
    let previous: Promise<unknown> | undefined;
    for (const batch of batches) {
      const sent = this.#transport.pipeline(batch, { atomic: true });
      if (!this.#transport.ordered) await sent;
      else {
        // Awaited once the next batch is out; never left unobserved.
        sent.catch(() => {});
        if (previous) await previous;
        previous = sent;
      }
    }
    await previous;
    return results;
  }

  #timeText(value: number): string {
    return this.#format === "seconds" && Number.isInteger(value) ? `${value}.0` : String(value);
  }

  #base(
    job: AnyJob | undefined,
    className: string,
    queue: string,
    retry: boolean | number,
    extra: Record<string, unknown> | undefined,
  ): Omit<JobPayload, "args" | "jid"> {
    const o = job?.options ?? {};
    const base: Omit<JobPayload, "args" | "jid"> = { class: className, queue, retry };
    if (o.retryQueue !== undefined) base.retry_queue = o.retryQueue;
    if (o.retryFor !== undefined) base.retry_for = o.retryFor;
    if (o.dead !== undefined) base.dead = o.dead;
    if (o.backtrace !== undefined) base.backtrace = o.backtrace;
    if (o.tags !== undefined) base.tags = [...o.tags];
    if (extra) {
      assertJsonSafe(extra, "extra");
      Object.assign(base, extra);
    }
    return base;
  }

  #serialize(payload: JobPayload): string {
    const json = serializePayload(payload, this.#format);
    this.#checkSize(json, payload.class);
    return json;
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
    if (this.#middleware.length === 0) return Promise.resolve(payload);
    return runClientMiddleware(this.#middleware, payload, { queue: payload.queue, job, transport: this.#transport });
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

/**
 * Turns `at` / `in` into epoch milliseconds, or undefined for "now".
 * Sidekiq's rule: a number below 1e9 is an interval, not a time, and a time
 * at or before now means now.
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
  if (at !== undefined && inSeconds !== undefined) {
    throw new PayloadError("Cannot push job as 'at' and 'in' are both set: give one");
  }
  if (at instanceof Date) {
    ms = at.getTime();
    if (Number.isNaN(ms)) throw new PayloadError("Cannot push job as 'at' is an invalid Date");
  } else if (at !== undefined) {
    if (typeof at !== "number" || !Number.isFinite(at)) {
      throw new PayloadError(
        `Cannot push job as 'at' must be a Date or epoch seconds: current value is ${describe(at)}`,
      );
    }
    ms = at < 1e9 ? nowMs + at * 1000 : at * 1000;
  } else if (inSeconds !== undefined) {
    if (typeof inSeconds !== "number" || !Number.isFinite(inSeconds)) {
      throw new PayloadError(
        `Cannot push job as 'in' must be a number of seconds: current value is ${describe(inSeconds)}`,
      );
    }
    ms = nowMs + inSeconds * 1000;
  }
  return ms !== undefined && ms > nowMs ? ms : undefined;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(
      `Cannot create client as '${name}' must be a whole number > 0: current value is ${describe(value)}`,
    );
  }
  return value;
}
