/**
 * Lua helpers the periodic scripts share, each with its JavaScript twin for
 * the memory transport.
 *
 * A schedule's hash holds one `lease:<owner>` field per owner that declares
 * it, valued with the owner's lease expiry (epoch seconds). A schedule is
 * live while one lease has not expired. A schedule that is no longer live is
 * dropped: out of the due set, its hash reduced to a tombstone holding only
 * its last tick for a day, so a schedule declared again soon after does not
 * enqueue a tick it already enqueued.
 *
 * @module
 */
import type { ScriptRedis } from "../../transport/script.ts";

/** Seconds a dropped schedule's tombstone (its last tick) is kept. */
export const TOMBSTONE_SECONDS = 86400;

/** Lua: `live(hashKey, now)` and `drop(hashKey, dueKey, name)`. Prepend to a script body. */
export const LEASE_LUA = `
local function live(h, now)
  local f = redis.call("HGETALL", h)
  for i = 1, #f, 2 do
    if string.sub(f[i], 1, 6) == "lease:" and (tonumber(f[i + 1]) or 0) >= now then return true end
  end
  return false
end
local function drop(h, due, name)
  local last = redis.call("HGET", h, "last")
  redis.call("DEL", h)
  redis.call("ZREM", due, name)
  if last then
    redis.call("HSET", h, "last", last)
    redis.call("EXPIRE", h, ${TOMBSTONE_SECONDS})
  end
end
`;

/**
 * Twin of Lua `live`: whether any owner's lease on the schedule is unexpired.
 *
 * @example
 * ```ts
 * if (!isLive(redis, keys[2], now)) dropSchedule(redis, keys[2], keys[0], name);
 * ```
 */
export function isLive(redis: ScriptRedis, hash: string, now: number): boolean {
  const fields = redis.call("HGETALL", hash) as string[];
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i].startsWith("lease:") && Number(fields[i + 1]) >= now) return true;
  }
  return false;
}

/**
 * Twin of Lua `drop`: removes a schedule, keeping its last tick as a tombstone.
 *
 * @example
 * ```ts
 * dropSchedule(redis, "edgekiq:periodic:schedule:Ping every 60s", "edgekiq:periodic:due", "Ping every 60s");
 * ```
 */
export function dropSchedule(redis: ScriptRedis, hash: string, due: string, name: string): void {
  const last = redis.call("HGET", hash, "last");
  redis.call("DEL", hash);
  redis.call("ZREM", due, name);
  if (last !== null) {
    redis.call("HSET", hash, "last", last as string);
    redis.call("EXPIRE", hash, TOMBSTONE_SECONDS);
  }
}

/**
 * A tick as a Redis score argument: `Infinity` (never again) becomes `+inf`.
 *
 * @example
 * ```ts
 * scoreArg(Infinity); // "+inf"
 * ```
 */
export function scoreArg(tick: number): string {
  return tick === Infinity ? "+inf" : String(tick);
}
