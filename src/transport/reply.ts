/**
 * Reply normalisation shared by the network adapters: whatever a client
 * library hands back (ioredis's RESP2 values, Bun's RESP3 objects, Upstash's
 * decoded JSON) becomes the one {@link RedisReply} shape the core reads, and a
 * pipeline's per-command outcomes become replies or the first failure.
 *
 * @module
 */
import { toTransportError } from "./transport_error.ts";
import type { Command, RedisArg, RedisReply } from "./transport.ts";

const utf8 = new TextDecoder();

/**
 * Normalises a client's reply value: strings and numbers stay, nil (and
 * RESP3 false) is `null`, true is 1, bytes are decoded as UTF-8, sets become
 * arrays, RESP3 maps become flat `[field, value, ...]` arrays as RESP2 sends
 * them, and an error nested in an array (a Lua script returning one) keeps
 * its text.
 *
 * @example
 * ```ts
 * toReply({ a: "1" }); // ["a", "1"]
 * toReply(undefined); // null
 * ```
 */
export function toReply(value: unknown): RedisReply {
  if (value === null || value === undefined || value === false) return null;
  if (value === true) return 1;
  if (typeof value === "string" || typeof value === "number") return value;
  if (Array.isArray(value)) return value.map(toReply);
  if (value instanceof Uint8Array) return utf8.decode(value);
  if (value instanceof Error) return value.message;
  if (value instanceof Set) return [...value].map(toReply);
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => [k, toReply(v)]);
  }
  return String(value);
}

/** Commands whose every number is a score: RESP3 doubles that RESP2 sends as strings. */
const SCORES = new Set([
  "ZSCORE",
  "ZMSCORE",
  "ZINCRBY",
  "ZRANGE",
  "ZRANGEBYSCORE",
  "ZREVRANGE",
  "ZREVRANGEBYSCORE",
  "ZPOPMIN",
  "ZPOPMAX",
  "BZPOPMIN",
  "BZPOPMAX",
  "ZMPOP",
  "BZMPOP",
  "ZRANDMEMBER",
  "ZUNION",
  "ZINTER",
  "ZDIFF",
]);
/** Commands whose RESP3 [field, value] pairs RESP2 sends flat. */
const FLAT_PAIRS = new Set([
  "ZRANGE",
  "ZRANGEBYSCORE",
  "ZREVRANGE",
  "ZREVRANGEBYSCORE",
  "ZPOPMIN",
  "ZPOPMAX",
  "ZRANDMEMBER",
  "ZUNION",
  "ZINTER",
  "ZDIFF",
  "HRANDFIELD",
]);

/**
 * Normalises a RESP3 reply to the RESP2 shape of the same command: scores
 * become Redis's text for a double (`"1.5"`, `"inf"`), and WITHSCORES /
 * WITHVALUES pairs are flattened.
 *
 * @example
 * ```ts
 * resp3Reply(["ZRANGE", "z", 0, -1, "WITHSCORES"], [["a", 1.5]]); // ["a", "1.5"]
 * ```
 */
export function resp3Reply(command: Command, value: unknown): RedisReply {
  const [name, ...args] = command;
  const upper = name.toUpperCase();
  // RESP3 answers XREAD with a map of stream -> entries; RESP2 with [[stream, entries], ...].
  if ((upper === "XREAD" || upper === "XREADGROUP") && isMap(value)) {
    return (value instanceof Map ? [...value.entries()] : Object.entries(value)).map(([k, v]) => [
      toReply(k),
      toReply(v),
    ]);
  }
  const incr = upper === "ZADD" && args.some((a: RedisArg) => String(a).toUpperCase() === "INCR");
  let reply = SCORES.has(upper) || incr ? score(value) : toReply(value);
  if (FLAT_PAIRS.has(upper) && Array.isArray(reply) && reply.some(Array.isArray)) {
    reply = reply.flatMap((pair) => (Array.isArray(pair) ? pair : [pair]));
  }
  return reply;
}

function isMap(value: unknown): value is Record<string, unknown> | Map<unknown, unknown> {
  return value instanceof Map ||
    (typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array) &&
      !(value instanceof Set) && !(value instanceof Error));
}

/** Redis's text for a double: `inf`, `-inf`, or the shortest round-trip form. */
function score(value: unknown): RedisReply {
  if (value === Infinity) return "inf";
  if (value === -Infinity) return "-inf";
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.map(score);
  return toReply(value);
}

/** One command's outcome in a pipeline: its reply value, or why it failed. */
export type PipelineOutcome = { error: unknown } | { value: unknown };

/**
 * The one rule for a pipeline's outcomes, whatever the client's shape: if
 * any command failed, the first failure (as a `TransportError`); otherwise
 * every reply, normalised by `normalize` (default {@link toReply}).
 *
 * @example
 * ```ts
 * pipelineReplies([{ value: 1 }, { error: new Error("WRONGTYPE ...") }]); // throws, kind "wrongtype"
 * ```
 */
export function pipelineReplies(
  outcomes: readonly PipelineOutcome[],
  normalize: (value: unknown, index: number) => RedisReply = toReply,
): RedisReply[] {
  const failure = outcomes.find((o) => "error" in o && o.error);
  if (failure) throw toTransportError((failure as { error: unknown }).error);
  return outcomes.map((o, i) => normalize((o as { value: unknown }).value, i));
}
