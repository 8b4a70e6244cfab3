/**
 * Type checks before a script's first write. Lua does not roll back: a
 * script that writes and then meets a key of the wrong type (another
 * producer's, a tool's, a list that emptied and came back as a string)
 * leaves its earlier writes, and a job moved out of one key but never into
 * the next is lost. Scripts that move jobs check every key they will write
 * first, and refuse with nothing written.
 *
 * @module
 */
import type { ScriptRedis } from "../transport/script.ts";

/** Lua: `holds(key, kind)` (the key is of `kind`, or absent) and `refuse(key, kind)` (the error reply). */
export const KEY_TYPES_LUA = `
local function holds(key, kind)
  local t = redis.call("TYPE", key)
  t = type(t) == "table" and t.ok or t
  return t == kind or t == "none"
end
local function refuse(key, kind)
  return redis.error_reply("WRONGTYPE " .. key .. " holds a value that is not a " .. kind .. ": nothing was written")
end
`;

/**
 * The twin of `holds`: whether `key` is of `kind`, or absent.
 *
 * @example
 * ```ts
 * if (!holds(redis, keys[2], "list")) throw refusal(keys[2], "list");
 * ```
 */
export function holds(redis: ScriptRedis, key: string, kind: string): boolean {
  const t = redis.call("TYPE", key);
  return t === kind || t === "none";
}

/**
 * The twin of `refuse`: the error a script answers with, nothing written.
 *
 * @example
 * ```ts
 * throw refusal("queue:mail", "list");
 * ```
 */
export function refusal(key: string, kind: string): Error {
  return new Error(`WRONGTYPE ${key} holds a value that is not a ${kind}: nothing was written`);
}
