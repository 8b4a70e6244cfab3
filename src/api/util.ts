/**
 * Small helpers the API classes share: reading normalised Redis replies,
 * walking ZSCAN cursors, and the error message style for bad input.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { describe, type JobPayload, TIME_FIELDS, type TimeFormat } from "../payload.ts";
import type { Transport } from "../transport/transport.ts";
import { num, pairs, scanReply } from "../transport/reply_readers.ts";

/** A ConfigError in edgekiq's message style: `Cannot <action> as '<field>' must be <rule>: current value is <v>`. */
export function invalid(action: string, field: string, rule: string, value: unknown): ConfigError {
  return new ConfigError(`Cannot ${action} as '${field}' must be ${rule}: current value is ${describe(value)}`);
}

/** Checks a `(start, count)` page request. */
export function checkPage(action: string, start: number, count: number): void {
  if (!Number.isInteger(start) || start < 0) throw invalid(action, "start", "a whole number >= 0", start);
  if (!Number.isInteger(count) || count <= 0) throw invalid(action, "count", "a whole number > 0", count);
}

/** Checks a jid argument. */
export function checkJid(action: string, jid: unknown): asserts jid is string {
  if (typeof jid !== "string" || jid === "") throw invalid(action, "jid", "a non-empty string", jid);
}

/**
 * The time format to rewrite a payload in: the one its own time fields
 * already use (a Sidekiq 8 job keeps integer milliseconds, a Sidekiq 7 job
 * keeps float seconds), else the client's. Writing a millisecond time in
 * seconds format would append `.0` and turn it into a far-future float.
 */
export function formatOf(payload: JobPayload, fallback: TimeFormat): TimeFormat {
  for (const field of TIME_FIELDS) {
    const value = payload[field];
    if (typeof value === "number" && Number.isFinite(value) && value !== 0) return value > 1e11 ? "millis" : "seconds";
  }
  return fallback;
}

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
