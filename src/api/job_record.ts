/**
 * One job as stored in Redis (Sidekiq's `JobRecord`): the raw string, parsed
 * lazily, with the accessors the Web UI and scripts use.
 *
 * @module
 */
import { toEpochMs } from "../payload.ts";

/** ActiveJob's wrapper classes, whose real job class is in `wrapped`. */
const WRAPPERS: ReadonlySet<string> = new Set([
  "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
  "Sidekiq::ActiveJob::Wrapper",
]);
const DELIVERY_JOB = "ActionMailer::DeliveryJob";
const MAIL_DELIVERY_JOB = "ActionMailer::MailDeliveryJob";
const GLOBALID_KEY = "_aj_globalid";

/**
 * A job read from a queue, a sorted set or a process's work hash. The raw
 * string is kept as is (`value`); the payload is parsed on first use. A
 * payload that is not valid JSON does not throw: `item` is `null`, `args`
 * is `[value]` (as Sidekiq shows it) and `valid` is false.
 *
 * @example
 * ```ts
 * const record = new JobRecord('{"class":"HardJob","args":[1],"queue":"default","jid":"abc"}');
 * record.jid;   // "abc"
 * record.klass; // "HardJob"
 * record.args;  // [1]
 * ```
 */
export class JobRecord {
  #value: string;
  #item: Record<string, unknown> | null | undefined;
  #queue: string | undefined;

  /**
   * Wraps a raw job (parsed only when a field is read).
   *
   * @param value The raw job string, or an already-parsed payload object
   *   (older Sidekiq work hashes store the payload as an object).
   * @param queue The queue the job was read from, when known.
   */
  constructor(value: string | Record<string, unknown>, queue?: string) {
    if (typeof value === "string") {
      this.#value = value;
    } else {
      this.#item = value;
      this.#value = JSON.stringify(value);
    }
    this.#queue = queue;
  }

  /** The raw string, exactly as read from Redis. */
  get value(): string {
    return this.#value;
  }

  /** The parsed payload, or `null` when the raw string is not a JSON object. */
  get item(): Record<string, unknown> | null {
    if (this.#item === undefined) {
      try {
        const parsed: unknown = JSON.parse(this.#value);
        this.#item = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
          ? parsed as Record<string, unknown>
          : null;
      } catch {
        this.#item = null;
      }
    }
    return this.#item;
  }

  /** Whether the raw string parsed as a JSON object. */
  get valid(): boolean {
    return this.item !== null;
  }

  /**
   * One field of the payload, untouched (`undefined` if absent or unreadable).
   *
   * @example
   * ```ts
   * record.get("bid"); // a Sidekiq Pro batch id, say
   * ```
   */
  get(field: string): unknown {
    return this.item?.[field];
  }

  /** The job id. */
  get jid(): string | undefined {
    const jid = this.get("jid");
    return typeof jid === "string" ? jid : undefined;
  }

  /** The `class` field as stored (ActiveJob wrappers not unwrapped). */
  get className(): string | undefined {
    const klass = this.get("class");
    return typeof klass === "string" ? klass : undefined;
  }

  /**
   * The class to show (Sidekiq's `display_class`): `display_class` if set,
   * the `wrapped` class for ActiveJob wrappers, `Mailer#method` for
   * ActionMailer deliveries, else `class`.
   */
  get klass(): string | undefined {
    const display = this.get("display_class");
    if (typeof display === "string") return display;
    const klass = this.className;
    if (klass === undefined || !WRAPPERS.has(klass)) return klass;
    const raw = this.#rawArgs();
    const first = raw[0];
    const wrapped = this.get("wrapped");
    const jobClass = typeof wrapped === "string"
      ? wrapped
      : typeof first === "string"
      ? first
      : isObject(first) && typeof first.job_class === "string"
      ? first.job_class
      : klass;
    if ((jobClass === DELIVERY_JOB || jobClass === MAIL_DELIVERY_JOB) && isObject(first)) {
      const args = first.arguments;
      if (Array.isArray(args)) return args.slice(0, 2).map(String).join("#");
    }
    return jobClass;
  }

  /**
   * The arguments to show (Sidekiq's `display_args`): ActiveJob wrappers
   * show their `arguments` with GlobalIDs unwrapped and `_aj_` keys removed;
   * encrypted jobs hide their last argument; an unreadable payload shows
   * its raw string.
   */
  get args(): unknown[] {
    const item = this.item;
    if (item === null) return [this.#value];
    const raw = this.#rawArgs();
    const klass = this.className;
    if (klass !== undefined && WRAPPERS.has(klass)) {
      const first = raw[0];
      const wrapped = this.get("wrapped");
      const jobArgs = wrapped !== undefined && isObject(first) && Array.isArray(first.arguments)
        ? deserializeArgument(first.arguments) as unknown[]
        : [];
      const jobClass = wrapped ?? first;
      if (jobClass === DELIVERY_JOB) return jobArgs.slice(3);
      if (jobClass === MAIL_DELIVERY_JOB) {
        const params = jobArgs[3];
        return isObject(params) ? [params.params, params.args] : [];
      }
      return jobArgs;
    }
    if (item.encrypt && raw.length > 0) return [...raw.slice(0, -1), "[encrypted data]"];
    return raw;
  }

  /** The queue the job was read from, else its `queue` field. */
  get queue(): string | undefined {
    if (this.#queue !== undefined) return this.#queue;
    const queue = this.get("queue");
    return typeof queue === "string" ? queue : undefined;
  }

  /** When the job was last pushed to a queue (`enqueued_at`), or `null`. */
  get enqueuedAt(): Date | null {
    return this.#time("enqueued_at");
  }

  /** When the job was created: `created_at`, else `enqueued_at`, else `null`. */
  get createdAt(): Date | null {
    return this.#time("created_at") ?? this.#time("enqueued_at");
  }

  /** When the job first failed (`failed_at`), or `null`. */
  get failedAt(): Date | null {
    return this.#time("failed_at");
  }

  /** When the job last failed a retry (`retried_at`), or `null`. */
  get retriedAt(): Date | null {
    return this.#time("retried_at");
  }

  /** Seconds since the job was enqueued (or created); 0 when neither is known. */
  get latency(): number {
    const at = this.enqueuedAt ?? this.#time("created_at");
    return at ? (Date.now() - at.getTime()) / 1000 : 0;
  }

  /** The last error's message, if the job has failed. */
  get errorMessage(): string | undefined {
    const message = this.get("error_message");
    return typeof message === "string" ? message : undefined;
  }

  /** The last error's class, if the job has failed. */
  get errorClass(): string | undefined {
    const klass = this.get("error_class");
    return typeof klass === "string" ? klass : undefined;
  }

  /** Retries so far (`retry_count`), if the job has failed. */
  get retryCount(): number | undefined {
    const count = this.get("retry_count");
    return typeof count === "number" ? count : undefined;
  }

  /** The job's tags; `[]` when none. */
  get tags(): string[] {
    const tags = this.get("tags");
    return Array.isArray(tags) ? tags.map(String) : [];
  }

  #rawArgs(): unknown[] {
    const args = this.get("args");
    return Array.isArray(args) ? args : [];
  }

  #time(field: string): Date | null {
    const value = this.get(field);
    return typeof value === "number" && Number.isFinite(value) ? new Date(toEpochMs(value)) : null;
  }
}

/**
 * Seconds since a raw job's `enqueued_at` (0 if it has none or cannot be
 * read): what a queue's latency is, from its oldest job.
 *
 * @example
 * ```ts
 * enqueuedLatency('{"enqueued_at":1700000000.0}'); // seconds since then
 * ```
 */
export function enqueuedLatency(raw: string | null): number {
  if (raw === null) return 0;
  const at = new JobRecord(raw).get("enqueued_at");
  return typeof at === "number" && Number.isFinite(at) ? (Date.now() - toEpochMs(at)) / 1000 : 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function deserializeArgument(argument: unknown): unknown {
  if (Array.isArray(argument)) return argument.map(deserializeArgument);
  if (isObject(argument)) {
    const keys = Object.keys(argument);
    if (keys.length === 1 && keys[0] === GLOBALID_KEY) return argument[GLOBALID_KEY];
    const out: Record<string, unknown> = {};
    for (const key of keys) if (!key.startsWith("_aj_")) out[key] = deserializeArgument(argument[key]);
    return out;
  }
  return argument;
}
