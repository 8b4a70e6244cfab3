/**
 * The job payload: Sidekiq's JSON hash, its jid, its times and its JSON
 * safety rules. Reading accepts Sidekiq 7 (float epoch seconds) and Sidekiq 8
 * (integer epoch milliseconds) times; writing uses one of the two.
 *
 * @module
 */
import { PayloadError } from "./errors.ts";

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
 * Sidekiq's `SecureRandom.hex(12)`. One `getRandomValues` call serves a whole
 * bulk push.
 *
 * @example
 * ```ts
 * const [jid] = newJids(1); // "4f8b2c..." (24 chars)
 * ```
 */
export function newJids(count: number): string[] {
  const bytes = new Uint8Array(12 * count);
  // getRandomValues fills at most 65,536 bytes per call.
  for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
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
 * job in 1970. `1700000000.0` is a Float to every Sidekiq.
 *
 * @example
 * ```ts
 * serializePayload({ class: "A", args: [], queue: "q", jid: "x", created_at: 1700000000 }, "seconds");
 * // '{"class":"A","args":[],"queue":"q","jid":"x","created_at":1700000000.0}'
 * ```
 */
export function serializePayload(payload: JobPayload, format: TimeFormat): string {
  if (format === "millis") return JSON.stringify(payload);
  let out = "{";
  let first = true;
  for (const field in payload) {
    const value = payload[field];
    if (value === undefined) continue;
    if (!first) out += ",";
    first = false;
    out += JSON.stringify(field) + ":";
    // Only seconds-sized values: a Sidekiq 8 job's integer milliseconds stay
    // integers, or Ruby would read them as seconds millennia from now.
    out += TIME_FIELDS.has(field) && typeof value === "number" && Number.isInteger(value) && value < 1e11
      ? `${value}.0`
      : JSON.stringify(value);
  }
  return out + "}";
}

/**
 * Parses a raw payload, or throws a {@link PayloadError} saying what is wrong
 * with it (this reason is what a bad payload carries into the dead set).
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
    throw new PayloadError(`Cannot read job as its payload is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new PayloadError(`Cannot read job as its payload is not a JSON object: ${describe(value)}`);
  }
  const job = value as Record<string, unknown>;
  if (typeof job.class !== "string" || job.class === "") {
    throw new PayloadError(
      `Cannot read job as 'class' must be a non-empty string: current value is ${describe(job.class)}`,
    );
  }
  if (!Array.isArray(job.args)) {
    throw new PayloadError(`Cannot read job as 'args' must be an array: current value is ${describe(job.args)}`);
  }
  if (typeof job.jid !== "string") {
    throw new PayloadError(`Cannot read job as 'jid' must be a string: current value is ${describe(job.jid)}`);
  }
  if (typeof job.queue !== "string") job.queue = "default";
  return job as JobPayload;
}

/**
 * Checks that a value survives a JSON round trip unchanged, as Sidekiq's
 * `strict_args!` does, and throws a {@link PayloadError} naming the first
 * offending path otherwise (`args[1].when is a Date`).
 *
 * @example
 * ```ts
 * assertJsonSafe([1, { when: new Date() }], "args");
 * // PayloadError: Cannot push job as args[1].when is a Date: ...
 * ```
 */
export function assertJsonSafe(value: unknown, path: string): void {
  const problem = findUnsafe(value, []);
  if (problem) {
    throw new PayloadError(
      `Cannot push job as ${path}${problem}: job arguments must be JSON-native (string, finite number, boolean, null, array, plain object)`,
    );
  }
}

/**
 * The first non-JSON value under `value`, as a path suffix and a description
 * (`[1].when is a Date`), or undefined. Paths are built only on the way back
 * from a problem: a valid value (every push) allocates nothing but the stack
 * of containers, which guards against cycles.
 */
function findUnsafe(value: unknown, stack: object[]): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : ` is ${value}`;
    case "undefined":
      return " is undefined";
    case "bigint":
      return " is a bigint";
    case "function":
      return " is a function";
    case "symbol":
      return " is a symbol";
  }
  if (value === null) return undefined;
  const obj = value as object;
  if (stack.includes(obj)) return " is a circular reference";
  stack.push(obj);
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        const p = findUnsafe(obj[i], stack);
        if (p) return `[${i}]${p}`;
      }
      return undefined;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      return ` is ${article(obj.constructor?.name ?? "non-plain object")}`;
    }
    if (Object.getOwnPropertySymbols(obj).length > 0) return " has a symbol key";
    for (const key of Object.keys(obj)) {
      const p = findUnsafe((obj as Record<string, unknown>)[key], stack);
      if (p) return `${propPath(key)}${p}`;
    }
    return undefined;
  } finally {
    stack.pop();
  }
}

function propPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function article(name: string): string {
  return `${/^[AEIOU]/i.test(name) ? "an" : "a"} ${name}`;
}

/**
 * Describes a value for an error message: short, with its type.
 *
 * @example
 * ```ts
 * describe(-1); // "-1"
 * ```
 */
export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? value.slice(0, 57) + "..." : value);
  if (value === undefined) return "undefined";
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "function") return "a function";
  try {
    const s = JSON.stringify(value);
    return s.length > 60 ? s.slice(0, 57) + "..." : s;
  } catch {
    return String(value);
  }
}
