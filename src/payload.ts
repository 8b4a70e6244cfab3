/**
 * The job payload: Sidekiq's JSON hash, its jid, its times and its JSON
 * safety rules. Reading accepts Sidekiq 7 (float epoch seconds) and Sidekiq 8
 * (integer epoch milliseconds) times; writing uses one of the two.
 *
 * @module
 */
import { PayloadError } from "./errors.ts";
import { MAX_NESTING, nestedDeeperThan } from "./json_safe.ts";
import { describeValue } from "./describe_value.ts";
import { sanitize } from "./sanitize.ts";
import { fillRandom } from "./random_bytes.ts";

/**
 * A job as it lives in Redis. Known fields are typed; unknown ones (from Ruby,
 * ActiveJob, other middleware) are kept untouched through every rewrite.
 */
export interface JobPayload {
  class: string;
  args: unknown[];
  queue: string;
  jid: string;
  created_at?: number;
  enqueued_at?: number;
  retry?: boolean | number;
  retry_count?: number;
  retry_queue?: string;
  retry_for?: number;
  failed_at?: number;
  retried_at?: number;
  error_message?: string;
  error_class?: string;
  error_backtrace?: string;
  backtrace?: boolean | number;
  dead?: boolean;
  tags?: string[];
  wrapped?: string;
  [field: string]: unknown;
}

/**
 * How times are written: Sidekiq 7's float epoch seconds (the default, which
 * every Sidekiq reads) or Sidekiq 8's integer epoch milliseconds.
 */
export type TimeFormat = "seconds" | "millis";

/** The payload fields that hold times. */
export const TIME_FIELDS: ReadonlySet<string> = new Set(["created_at", "enqueued_at", "failed_at", "retried_at"]);

const HEX_CODES = new TextEncoder().encode("0123456789abcdef");
const latin1 = new TextDecoder("latin1");

/**
 * Makes `count` job ids: 24 lowercase hex characters (12 random bytes), as
 * Sidekiq's `SecureRandom.hex(12)`. The random bytes come from a pool
 * (`random_bytes.ts`): a single push costs no `getRandomValues` call of its own.
 *
 * @example
 * ```ts
 * const [jid] = newJids(1); // "4f8b2c..." (24 chars)
 * ```
 */
export function newJids(count: number): string[] {
  const bytes = fillRandom(new Uint8Array(12 * count));
  // Hex digits for all of them as ASCII, decoded once: bulk pushes make
  // thousands of jids, and one string per jid beats twelve concatenations.
  const ascii = new Uint8Array(24 * count);
  for (let i = 0; i < bytes.length; i++) {
    ascii[2 * i] = HEX_CODES[bytes[i] >> 4];
    ascii[2 * i + 1] = HEX_CODES[bytes[i] & 15];
  }
  const text = latin1.decode(ascii);
  const jids = new Array<string>(count);
  for (let j = 0; j < count; j++) jids[j] = text.slice(24 * j, 24 * j + 24);
  return jids;
}

/**
 * A time for the payload in the chosen format, from epoch milliseconds.
 *
 * @example
 * ```ts
 * wireTime(1700000000000, "seconds"); // 1700000000
 * wireTime(1700000000000, "millis");  // 1700000000000
 * ```
 */
export function wireTime(ms: number, format: TimeFormat): number {
  return format === "millis" ? Math.round(ms) : ms / 1000;
}

/**
 * Reads a payload time (either format, told apart by magnitude: Sidekiq 8's
 * milliseconds are above 1e11, seconds will not be until the year 5138) and
 * returns epoch milliseconds.
 *
 * @example
 * ```ts
 * toEpochMs(1700000000.5);   // 1700000000500
 * toEpochMs(1700000000500);  // 1700000000500
 * ```
 */
export function toEpochMs(value: number): number {
  return value > 1e11 ? value : value * 1000;
}

/**
 * Serialises a payload. Top-level time fields that are whole numbers in
 * seconds mode get an explicit `.0`: Ruby parses `1700000000` as an Integer,
 * and Sidekiq 8 reads an Integer time as milliseconds, which would put the
 * job in 1970. `1700000000.0` is a Float to every Sidekiq. Throws a
 * {@link PayloadError} (never a bare `RangeError` or `TypeError`) for a
 * payload JSON cannot hold.
 *
 * @example
 * ```ts
 * serializePayload({ class: "A", args: [], queue: "q", jid: "x", created_at: 1700000000 }, "seconds");
 * // '{"class":"A","args":[],"queue":"q","jid":"x","created_at":1700000000.0}'
 * ```
 */
export function serializePayload(payload: JobPayload, format: TimeFormat): string {
  try {
    return format === "millis" ? JSON.stringify(payload) : `{${fieldsJson(payload)}}`;
  } catch (error) {
    throw unserialisable(payload, error);
  }
}

/**
 * A serialiser for many payloads that differ only in `args` and `jid`, as a
 * bulk push writes them: the shared fields are serialised once (with the
 * same time rule as {@link serializePayload}), `head` before `args` and
 * `jid`, `tail` after them. The result is the text `serializePayload` gives
 * for `{ ...head, args, jid, ...tail }`. `args` must have passed
 * {@link assertJsonSafe}, and `jid` must need no JSON escaping (a
 * {@link newJids} jid, 24 hex digits, is written as it is: a bulk push
 * serialises 100,000 of them).
 *
 * @example
 * ```ts
 * const write = payloadSerializer({ class: "A", queue: "q" }, { created_at: 1700000000 }, "seconds");
 * write([1], "abc"); // '{"class":"A","queue":"q","args":[1],"jid":"abc","created_at":1700000000.0}'
 * ```
 */
export function payloadSerializer(
  head: Readonly<Record<string, unknown>>,
  tail: Readonly<Record<string, unknown>>,
  format: TimeFormat,
): (args: readonly unknown[], jid: string) => string {
  const headJson = format === "millis" ? JSON.stringify(head).slice(1, -1) : fieldsJson(head);
  const tailJson = format === "millis" ? JSON.stringify(tail).slice(1, -1) : fieldsJson(tail);
  const before = `{${headJson}${headJson ? "," : ""}"args":`;
  const after = `${tailJson ? "," : ""}${tailJson}}`;
  return (args, jid) => {
    try {
      return `${before}${JSON.stringify(args)},"jid":"${jid}"${after}`;
    } catch (error) {
      throw unserialisable({ ...head, args, jid } as JobPayload, error);
    }
  };
}

/** `"field":value` pairs, comma-separated, with the `.0` rule for seconds. */
function fieldsJson(fields: Readonly<Record<string, unknown>>): string {
  let out = "";
  for (const field in fields) {
    const value = fields[field];
    if (value === undefined) continue;
    if (out) out += ",";
    out += JSON.stringify(field) + ":";
    // Only seconds-sized values: a Sidekiq 8 job's integer milliseconds stay
    // integers, or Ruby would read them as seconds millennia from now.
    out += TIME_FIELDS.has(field) && typeof value === "number" && Number.isInteger(value) && value < 1e11
      ? `${value}.0`
      : JSON.stringify(value);
  }
  return out;
}

function unserialisable(payload: Partial<JobPayload>, error: unknown): PayloadError {
  const detail = sanitize(error instanceof Error ? error.message : String(error), 120);
  // A RangeError here is the runtime's stack running out inside JSON.stringify.
  const why = error instanceof RangeError ? `it is nested too deeply (${detail})` : `JSON cannot hold it (${detail})`;
  return new PayloadError(
    `Cannot write job ${sanitize(String(payload.class), 100)} ${sanitize(String(payload.jid), 40)} as ${why}`,
    { cause: error },
  );
}

/**
 * Parses a raw payload, or throws a {@link PayloadError} saying what is wrong
 * with it (this reason is what a bad payload carries into the dead set):
 * not JSON, not an object, missing `class`/`args`/`jid`, or nested deeper
 * than {@link MAX_NESTING}. Never throws anything but a `PayloadError`.
 *
 * @example
 * ```ts
 * const job = parsePayload('{"class":"HardJob","args":[1],"queue":"default","jid":"abc"}');
 * ```
 */
export function parsePayload(raw: string): JobPayload {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const why = error instanceof RangeError
      ? "it is nested too deeply to read"
      : `its payload is not valid JSON: ${sanitize((error as Error)?.message ?? String(error), 200)}`;
    throw new PayloadError(`Cannot read job as ${why}`, { cause: error });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new PayloadError(`Cannot read job as its payload is not a JSON object: ${describeValue(value)}`);
  }
  // A payload of n levels has at least 2n characters: short ones (most) skip the walk.
  if (raw.length > 2 * MAX_NESTING && nestedDeeperThan(value, MAX_NESTING)) {
    throw new PayloadError(
      `Cannot read job as its payload nests more than ${MAX_NESTING} levels deep (Ruby's JSON limit, which Sidekiq uses)`,
    );
  }
  const job = value as Record<string, unknown>;
  if (typeof job.class !== "string" || job.class === "") {
    throw new PayloadError(
      `Cannot read job as 'class' must be a non-empty string: current value is ${describeValue(job.class)}`,
    );
  }
  if (!Array.isArray(job.args)) {
    throw new PayloadError(`Cannot read job as 'args' must be an array: current value is ${describeValue(job.args)}`);
  }
  if (typeof job.jid !== "string") {
    throw new PayloadError(`Cannot read job as 'jid' must be a string: current value is ${describeValue(job.jid)}`);
  }
  if (typeof job.queue !== "string") job.queue = "default";
  return job as JobPayload;
}
