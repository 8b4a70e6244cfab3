/**
 * The recovered mark: how many dead processes a job was running in, carried
 * in its own payload as its last field (`"edgekiq_recovered":N`) so any
 * process (and Ruby, which ignores it) passes it along. This module owns the
 * field: the Lua that writes and reads it (recovery writes it; the fetch
 * script reads whether a job carries it), the JavaScript readers, and its
 * removal once the job fails in its own right. Plain string edits, never a
 * JSON round trip: re-encoding could change a float argument or bytes that
 * are not UTF-8.
 *
 * @module
 */
import type { JobPayload } from "../payload.ts";

/** The payload field counting how many dead processes a job was running in. */
export const RECOVERED_FIELD = "edgekiq_recovered";

/**
 * Lua: `recovered(raw)` reads the recovery count at the end of a payload,
 * `withFields(raw, fields)` appends fields (replacing the count), and
 * `wireNow(raw, seconds, millis)` picks the payload's own time format; they build
 * a poison pill's dead-set entry by appending Sidekiq's error fields. Plain
 * string edits, not `cjson`: re-encoding would round floats to 14 digits and
 * could change arguments, and string edits keep bytes that are not UTF-8.
 * The count is only ever read as the object's last field, which is where it
 * is written, so a key of that name inside the arguments is never mistaken
 * for it.
 */
export const RECOVERED_LUA = `
local function recovered(raw)
  -- The mark is the last field: search the tail only, never a whole large payload.
  return tonumber(string.match(raw, '"${RECOVERED_FIELD}":(%d+)}%s*$', -64)) or 0
end
local function withFields(raw, fields)
  local s, c = string.gsub(raw, ',?"${RECOVERED_FIELD}":%d+}%s*$', "}")
  if c == 0 then s = raw end
  local body = string.match(s, "^(%s*{.-)}%s*$")
  if not body then return raw end
  if string.match(body, "^%s*{%s*$") then return body .. fields .. "}" end
  return body .. "," .. fields .. "}"
end
local function wireNow(raw, seconds, millis)
  local created = string.match(raw, '"created_at":(%d+)[,}]')
  if created and #created >= 12 then return millis end
  return seconds
end
`;

const COUNT_AT_END = new RegExp(`"${RECOVERED_FIELD}":(\\d+)}\\s*$`);

/**
 * How many dead processes a raw job was running in: `undefined` if it was
 * never recovered, 0 if it was recovered from a process where it had not
 * started (or whose start was not yet written).
 *
 * @example
 * ```ts
 * recoveredCount('{"class":"A","edgekiq_recovered":2}'); // 2
 * recoveredCount('{"class":"A"}'); // undefined
 * ```
 */
export function recoveredCount(raw: string): number | undefined {
  // Cheap when absent (every job): the field is only ever the last one.
  if (raw.charCodeAt(raw.length - 1) !== 125 || !raw.includes(RECOVERED_FIELD, raw.length - 40)) return undefined;
  const count = COUNT_AT_END.exec(raw)?.[1];
  return count === undefined ? undefined : Number(count);
}

/** A Lua pattern matching a payload that carries a recovery count (as its last field). */
export const RECOVERED_AT_END_LUA = `"${RECOVERED_FIELD}":%d+}%s*$`;

/**
 * How many of a new batch's first `startNow` jobs start as it arrives, and
 * are marked started by the fetch itself: those before the first recovered
 * job (a recovered job writes its own start, and a suspect may wait its turn).
 *
 * @example
 * ```ts
 * startingNow(['{"a":1}', '{"a":2,"edgekiq_recovered":0}'], 2); // 1
 * ```
 */
export function startingNow(raws: readonly string[], startNow: number): number {
  const limit = Math.min(startNow, raws.length);
  let s = 0;
  while (s < limit && recoveredCount(raws[s]) === undefined) s++;
  return s;
}

/**
 * Appends JSON fields to a raw payload, replacing its recovery count (the
 * twin of the Lua helper of the same name).
 *
 * @example
 * ```ts
 * withFields('{"class":"A","edgekiq_recovered":1}', '"edgekiq_recovered":2'); // '{"class":"A","edgekiq_recovered":2}'
 * ```
 */
export function withFields(raw: string, fields: string): string {
  const stripped = raw.replace(new RegExp(`,?"${RECOVERED_FIELD}":\\d+}\\s*$`), "}");
  const m = /^(\s*\{[\s\S]*?)\}\s*$/.exec(stripped);
  if (!m) return raw;
  return /^\s*\{\s*$/.test(m[1]) ? `${m[1]}${fields}}` : `${m[1]},${fields}}`;
}

/**
 * Removes the mark from a parsed payload: a job that failed in its own
 * right is no longer a suspect.
 *
 * @example
 * ```ts
 * clearRecovered(payload);
 * ```
 */
export function clearRecovered(payload: JobPayload): void {
  delete payload[RECOVERED_FIELD];
}
