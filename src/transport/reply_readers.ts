/**
 * Reading replies: the transport contract promises RESP2 shapes (strings,
 * numbers, nil, flat arrays); these turn them into what the code wants, with
 * Ruby's forgiving `to_i`/`to_s` manners for nil and garbage.
 *
 * @module
 */
import type { RedisReply } from "./transport.ts";

/**
 * A reply as a string, or `null` for nil.
 *
 * @example
 * ```ts
 * str(await transport.call("GET", "k")); // "v" or null
 * ```
 */
export function str(reply: RedisReply | undefined): string | null {
  if (reply === null || reply === undefined) return null;
  return typeof reply === "string" ? reply : String(reply);
}

/**
 * A reply as a number; nil and garbage read as 0, as Ruby's `to_i`.
 *
 * @example
 * ```ts
 * num(await transport.call("LLEN", "queue:default")); // 3
 * ```
 */
export function num(reply: RedisReply | undefined): number {
  if (reply === null || reply === undefined) return 0;
  const n = Number(reply);
  return Number.isFinite(n) ? n : 0;
}

/**
 * A reply as an array (nil reads as empty).
 *
 * @example
 * ```ts
 * arr(await transport.call("SMEMBERS", "queues")); // ["default"]
 * ```
 */
export function arr(reply: RedisReply | undefined): RedisReply[] {
  return Array.isArray(reply) ? reply : [];
}

/**
 * Member/value pairs from a WITHSCORES, HGETALL or ZSCAN reply. Every
 * transport returns these flat (`[m1, s1, m2, s2]`, RESP2's shape; the
 * Bun adapter flattens RESP3's nested pairs), so this only pairs them up.
 */
export function pairs(reply: RedisReply | undefined): [string, RedisReply][] {
  const list = arr(reply);
  const out: [string, RedisReply][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) out.push([str(list[i]) ?? "", list[i + 1]]);
  return out;
}

/**
 * The next cursor and the items of one SCAN-family reply.
 *
 * @example
 * ```ts
 * const [cursor, items] = scanReply(await transport.call("SCAN", "0"));
 * ```
 */
export function scanReply(reply: RedisReply): [cursor: string, items: RedisReply] {
  const [cursor, items] = arr(reply);
  return [str(cursor) ?? "0", items ?? []];
}
