/**
 * Walking a sorted set with ZSCAN, each member once.
 *
 * @module
 */
import type { Transport } from "../transport/transport.ts";
import { num, pairs, scanReply } from "../transport/reply_readers.ts";

/**
 * Walks a sorted set with ZSCAN MATCH, yielding each (member, score) once
 * even if the scan returns it twice (it may, while Redis rehashes).
 */
export async function* zscan(
  transport: Transport,
  key: string,
  pattern: string,
  count: number,
): AsyncGenerator<[string, number], void, undefined> {
  const seen = new Set<string>();
  let cursor = "0";
  do {
    const [next, items] = scanReply(await transport.call("ZSCAN", key, cursor, "MATCH", pattern, "COUNT", count));
    cursor = next;
    for (const [value, score] of pairs(items)) {
      if (seen.has(value)) continue;
      seen.add(value);
      yield [value, num(score)];
    }
  } while (cursor !== "0");
}
