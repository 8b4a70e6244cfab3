/**
 * ActiveJob on Sidekiq's wire, both ways. Rails' Sidekiq adapter pushes
 * every ActiveJob as one wrapper class (`ActiveJob::QueueAdapters::
 * SidekiqAdapter::JobWrapper`, or `Sidekiq::ActiveJob::Wrapper` with
 * Sidekiq 7.3+'s own adapter) whose `wrapped` field names the job class and
 * whose only argument is `ActiveJob::Core#serialize`'s hash:
 *
 * ```json
 * { "job_class": "WelcomeJob", "job_id": "…", "queue_name": "mailers", "arguments": [ … ],
 *   "executions": 0, "locale": "en", "timezone": "UTC", "enqueued_at": "…", … }
 * ```
 *
 * `arguments` holds the job's positional arguments as `ActiveJob::
 * Arguments` writes them (Rails 7.0 to 8.1 share the format).
 * {@link activeJobArguments} reads them back into plain JSON values for a
 * TypeScript job:
 *
 * | Ruby argument (wire form)                               | what `perform` receives                     |
 * | ------------------------------------------------------- | ------------------------------------------- |
 * | String, Integer, Float, true/false/nil, Array           | the same                                    |
 * | Hash (`_aj_symbol_keys`, `_aj_ruby2_keywords` keyword arguments, `_aj_hash_with_indifferent_access`) | a plain object, markers removed |
 * | GlobalID record (`{ "_aj_globalid": "gid://app/User/1" }`) | the GlobalID string `"gid://app/User/1"` |
 * | Symbol                                                  | its name, a string                          |
 * | Date                                                    | `"2001-02-03"`                              |
 * | Time, DateTime, TimeWithZone                            | the ISO 8601 string Rails wrote (ns precision, with offset) |
 * | ActiveSupport::Duration                                 | its length in seconds, a number             |
 * | BigDecimal                                              | its exact decimal text, `"5.0"` (a number would round) |
 * | Module / Class                                          | its name, a string                          |
 * | Range                                                   | `{ begin, end, exclude_end }`               |
 * | any other `_aj_serialized` (a custom serializer)        | the serialized hash, unchanged              |
 *
 * {@link performLater} goes the other way: it pushes a job a Rails worker
 * runs, with arguments written in the same format.
 *
 * @module
 */
import { PayloadError } from "./errors.ts";
import type { JobPusher } from "./job.ts";
import { MAX_NESTING } from "./json_safe.ts";
import { type JobPayload } from "./payload.ts";
import { describeValue } from "./describe_value.ts";
import { sanitize } from "./sanitize.ts";

/** The wrapper class names Rails' and Sidekiq's ActiveJob adapters push. */
export const ACTIVE_JOB_WRAPPERS: ReadonlySet<string> = new Set([
  "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
  "Sidekiq::ActiveJob::Wrapper",
]);

const SERIALIZER = "_aj_serialized";
const GLOBALID = "_aj_globalid";
const SYMBOL_KEYS = "_aj_symbol_keys";
const RUBY2_KEYWORDS = "_aj_ruby2_keywords";
const INDIFFERENT = "_aj_hash_with_indifferent_access";
const MARKERS = [SYMBOL_KEYS, RUBY2_KEYWORDS, INDIFFERENT];
const RESERVED = new Set([SERIALIZER, GLOBALID, ...MARKERS]);
const S = "ActiveJob::Serializers::";

/**
 * Whether a payload is an ActiveJob wrapper: a wrapper class, a `wrapped`
 * job class name, and one argument that is a hash with `arguments`.
 *
 * @example
 * ```ts
 * if (isActiveJob(payload)) args = activeJobArguments(payload.args[0]);
 * ```
 */
export function isActiveJob(payload: JobPayload): boolean {
  const data = payload.args[0] as { arguments?: unknown } | undefined;
  return ACTIVE_JOB_WRAPPERS.has(payload.class) && typeof payload.wrapped === "string" &&
    payload.args.length === 1 && isHash(data) && Array.isArray(data.arguments);
}

/**
 * The positional arguments of a wrapped ActiveJob, deserialized: give it the
 * wrapper's `args[0]` (the `ActiveJob::Core#serialize` hash). See the
 * module documentation for what each Ruby type becomes. Throws a
 * {@link PayloadError} when `jobData` is not such a hash or an argument is
 * malformed, so the engine can bury the job with the reason.
 *
 * @example
 * ```ts
 * activeJobArguments({
 *   job_class: "WelcomeJob",
 *   arguments: [{ _aj_globalid: "gid://app/User/42" }, { greeting: { _aj_serialized: "ActiveJob::Serializers::SymbolSerializer", value: "warm" }, _aj_ruby2_keywords: ["greeting"] }],
 * });
 * // ["gid://app/User/42", { greeting: "warm" }]
 * ```
 */
export function activeJobArguments(jobData: unknown): unknown[] {
  const data = jobData as { arguments?: unknown; job_class?: unknown } | undefined;
  if (!isHash(data) || !Array.isArray(data.arguments)) {
    throw new PayloadError(
      `Cannot read ActiveJob arguments as args[0] must be ActiveJob's job hash with an 'arguments' array: current value is ${
        describeValue(jobData)
      }`,
    );
  }
  return data.arguments.map((argument, i) => readArgument(argument, `arguments[${i}]`, 1));
}

function readArgument(value: unknown, path: string, depth: number): unknown {
  if (depth > MAX_NESTING) throw malformed(path, "it nests too deeply");
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item, i) => readArgument(item, `${path}[${i}]`, depth + 1));
  const hash = value as Record<string, unknown>;
  const keys = Object.keys(hash);
  if (keys.length === 1 && keys[0] === GLOBALID) {
    if (typeof hash[GLOBALID] !== "string") throw malformed(path, "its GlobalID is not a string");
    return hash[GLOBALID];
  }
  if (Object.hasOwn(hash, SERIALIZER)) return readSerialized(hash, path, depth);
  // Object.fromEntries defines keys as data: a "__proto__" key stays a key.
  return Object.fromEntries(
    keys.filter((key) => !MARKERS.includes(key)).map((
      key,
    ) => [key, readArgument(hash[key], `${path}.${key}`, depth + 1)]),
  );
}

function readSerialized(hash: Record<string, unknown>, path: string, depth: number): unknown {
  const name = hash[SERIALIZER];
  const value = hash.value;
  const text = (what: string) => {
    if (typeof value !== "string") throw malformed(path, `its ${what} value is not a string`);
    return value;
  };
  switch (name) {
    case `${S}SymbolSerializer`:
      return text("Symbol");
    case `${S}DateSerializer`:
      return text("Date");
    case `${S}TimeSerializer`:
    case `${S}DateTimeSerializer`:
    case `${S}TimeWithZoneSerializer`:
      return text("time");
    case `${S}BigDecimalSerializer`:
      return text("BigDecimal");
    case `${S}ModuleSerializer`:
      return text("Module");
    case `${S}DurationSerializer`:
      if (typeof value !== "number" || !Number.isFinite(value)) throw malformed(path, "its Duration is not a number");
      return value;
    case `${S}RangeSerializer`:
      return {
        begin: readArgument(hash.begin, `${path}.begin`, depth + 1),
        end: readArgument(hash.end, `${path}.end`, depth + 1),
        exclude_end: hash.exclude_end === true,
      };
    default:
      // A serializer of the app's own: only its Ruby side knows the format.
      return hash;
  }
}

function malformed(path: string, why: string): PayloadError {
  return new PayloadError(`Cannot read ActiveJob argument ${sanitize(path, 200)} as ${why}`);
}

function isHash(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------
// Writing: jobs for Rails to run.

/**
 * A Ruby Symbol argument (`:warm`), for {@link performLater}.
 *
 * @example
 * ```ts
 * await performLater(client, "WelcomeJob", { args: [rubySymbol("warm")] });
 * ```
 */
export function rubySymbol(name: string): Record<string, unknown> {
  return { [SERIALIZER]: `${S}SymbolSerializer`, value: name };
}

/**
 * A record argument by its GlobalID (`user.to_global_id`): Rails loads the
 * record before `perform`.
 *
 * @example
 * ```ts
 * await performLater(client, "WelcomeJob", { args: [globalId("gid://app/User/42")] });
 * ```
 */
export function globalId(gid: string): Record<string, unknown> {
  return { [GLOBALID]: gid };
}

/**
 * Keyword arguments (`perform(user, greeting: :warm)`): a hash whose keys
 * Ruby receives as symbols, passed as keywords. Put it last.
 *
 * @example
 * ```ts
 * await performLater(client, "WelcomeJob", { args: [globalId(gid), keywords({ greeting: rubySymbol("warm") })] });
 * ```
 */
export function keywords(hash: Record<string, unknown>): Record<string, unknown> {
  return { ...writeHash(hash, "keywords"), [RUBY2_KEYWORDS]: Object.keys(hash) };
}

/** What {@link performLater} pushes, and how. */
export interface PerformLaterOptions {
  /** The job's positional arguments. */
  args: readonly unknown[];
  /** The queue (ActiveJob's `queue_name`); default `"default"`. */
  queue?: string;
  /** Run in this many seconds (`set(wait:)`). */
  wait?: number;
  /** Run at this time (`set(wait_until:)`). */
  waitUntil?: Date;
  /** ActiveJob's `priority`; default none. */
  priority?: number;
  /** I18n locale; default `"en"`. */
  locale?: string;
  /** Time zone name; default `"UTC"`. */
  timezone?: string;
}

/**
 * Pushes an ActiveJob for a Rails worker, as `WelcomeJob.perform_later(...)`
 * would: the `ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper` class
 * (which Rails 7.0 to 8.1 and Sidekiq 7.3+'s own adapter all run), `wrapped`
 * naming the job, and `ActiveJob::Core#serialize`'s hash as its argument.
 * Arguments are JSON values; objects become string-keyed hashes, a `Date` a
 * Ruby Time, and {@link rubySymbol}, {@link globalId} and {@link keywords}
 * give Ruby's own types (values already in ActiveJob's wire form pass
 * through). Resolves to the Sidekiq jid; the ActiveJob `job_id` is a fresh
 * UUID.
 *
 * @example
 * ```ts
 * await performLater(client, "WelcomeJob", {
 *   args: [globalId("gid://app/User/42"), "hi", keywords({ greeting: rubySymbol("warm") })],
 *   queue: "mailers",
 * });
 * ```
 */
export async function performLater(
  client: JobPusher,
  jobClass: string,
  options: PerformLaterOptions,
): Promise<string | null> {
  const queue = options.queue ?? "default";
  const runAt = options.waitUntil ?? (options.wait !== undefined ? new Date(Date.now() + options.wait * 1000) : null);
  if (!Array.isArray(options.args)) {
    throw new PayloadError(
      `Cannot push ActiveJob as 'args' must be an array: current value is ${describeValue(options.args)}`,
    );
  }
  const data = {
    job_class: jobClass,
    job_id: crypto.randomUUID(),
    provider_job_id: null,
    queue_name: queue,
    priority: options.priority ?? null,
    arguments: options.args.map((arg, i) => writeArgument(arg, `arguments[${i}]`)),
    executions: 0,
    exception_executions: {},
    locale: options.locale ?? "en",
    timezone: options.timezone ?? "UTC",
    enqueued_at: new Date().toISOString(),
    scheduled_at: runAt ? runAt.toISOString() : null,
  };
  return await client.push(ACTIVE_JOB_WRAPPER, [data], {
    queue,
    extra: { wrapped: jobClass },
    ...(runAt ? { at: runAt } : {}),
  });
}

/** The wrapper {@link performLater} pushes: every Rails 7.0-8.1 adapter and Sidekiq 7.3+'s run it. */
const ACTIVE_JOB_WRAPPER = "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper";

function writeArgument(value: unknown, path: string): unknown {
  if (value === null || typeof value !== "object") return value; // the push checks JSON safety
  if (Array.isArray(value)) return value.map((item, i) => writeArgument(item, `${path}[${i}]`));
  if (value instanceof Date) return { [SERIALIZER]: `${S}TimeSerializer`, value: value.toISOString() };
  const hash = value as Record<string, unknown>;
  const keys = Object.keys(hash);
  // Already in wire form: rubySymbol(), globalId(), keywords().
  if (Object.hasOwn(hash, SERIALIZER) || (keys.length === 1 && keys[0] === GLOBALID)) return hash;
  if (Object.hasOwn(hash, RUBY2_KEYWORDS)) return hash;
  return { ...writeHash(hash, path), [SYMBOL_KEYS]: [] };
}

function writeHash(hash: Record<string, unknown>, path: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(hash).map((key) => {
      if (RESERVED.has(key)) {
        throw new PayloadError(`Cannot push ActiveJob as ${sanitize(path, 200)} has the reserved key '${key}'`);
      }
      return [key, writeArgument(hash[key], `${path}.${key}`)];
    }),
  );
}

/**
 * The class a job is shown and counted under: `wrapped` for an ActiveJob
 * wrapper, else `class` (Sidekiq's `display_class`, `hash["wrapped"] ||
 * hash["class"]`), as metrics and traces name it.
 *
 * @example
 * ```ts
 * displayClass({ class: "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", wrapped: "ImportJob", ... });
 * // "ImportJob"
 * ```
 */
export function displayClass(payload: JobPayload): string {
  return typeof payload.wrapped === "string" && payload.wrapped !== "" ? payload.wrapped : payload.class;
}
