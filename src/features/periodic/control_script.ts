/**
 * The control script behind `PeriodicSet`: pause, resume, enqueue now, and
 * drop a schedule whose owners are all gone; and the mark a process leaves
 * on a schedule it cannot enqueue (`broken`, shown by the dashboard). Each
 * checks the schedule still exists, so an action racing a removal never
 * re-creates half a schedule.
 *
 * Pausing moves the schedule's score to `+inf`: the due check skips it, and
 * a claim already in flight (it compares the old score) is refused.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { dropSchedule, isLive, LEASE_LUA } from "./lua_common.ts";

/** The actions. */
export type ControlOp = "pause" | "resume" | "enqueue" | "gc" | "broken";

/**
 * `ok`, `missing` (no such schedule), `respec` (its spec or timing changed
 * since the caller read it), and for `gc`: `live` or `expired` (dropped).
 */
export type ControlReply = "ok" | "missing" | "respec" | "live" | "expired";

/**
 * KEYS: `edgekiq:periodic:due`, the schedule hash, `queues`, the target queue list (enqueue; else any key).
 * ARGV: op, name, now (epoch s), then for resume: timing digest, next tick;
 * for enqueue: spec digest, queue name, payload JSON, jid; for broken: the reason.
 */
export const PERIODIC_CONTROL = defineScript<ControlReply>({
  name: "periodicControl",
  keys: ["edgekiq:periodic:due", "edgekiq:periodic:schedule:<name>", "queues", "queue:<name>"],
  argv: ["op", "name", "now", "...timing+next (resume) | sdig+queue+json+jid (enqueue) | reason (broken)"],
  lua: LEASE_LUA + `
local op, name, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local due, h = KEYS[1], KEYS[2]
-- Only informs: never removes, even a schedule some other tool wrote without its timing.
if op == "broken" then
  if redis.call("EXISTS", h) == 0 then return "missing" end
  redis.call("HSET", h, "broken", ARGV[4], "broken_at", ARGV[3])
  return "ok"
end
if redis.call("HEXISTS", h, "timing") == 0 then
  redis.call("ZREM", due, name)
  return "missing"
end
if op == "pause" then
  redis.call("HSET", h, "paused", "1")
  redis.call("ZADD", due, "+inf", name)
elseif op == "resume" then
  if redis.call("HGET", h, "timing") ~= ARGV[4] then return "respec" end
  redis.call("HDEL", h, "paused")
  redis.call("ZADD", due, ARGV[5], name)
elseif op == "enqueue" then
  if redis.call("HGET", h, "sdig") ~= ARGV[4] then return "respec" end
  redis.call("SADD", KEYS[3], ARGV[5])
  redis.call("LPUSH", KEYS[4], ARGV[6])
  redis.call("HSET", h, "last_jid", ARGV[7], "last_at", ARGV[3])
elseif live(h, now) then
  return "live"
else
  drop(h, due, name)
  return "expired"
end
return "ok"
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const [op, name, nowText] = argv;
    const [due, h] = keys;
    if (op === "broken") {
      if (redis.call("EXISTS", h) === 0) return "missing";
      redis.call("HSET", h, "broken", argv[3], "broken_at", nowText);
      return "ok";
    }
    if (redis.call("HEXISTS", h, "timing") === 0) {
      redis.call("ZREM", due, name);
      return "missing";
    }
    if (op === "pause") {
      redis.call("HSET", h, "paused", "1");
      redis.call("ZADD", due, "+inf", name);
    } else if (op === "resume") {
      if (redis.call("HGET", h, "timing") !== argv[3]) return "respec";
      redis.call("HDEL", h, "paused");
      redis.call("ZADD", due, argv[4], name);
    } else if (op === "enqueue") {
      if (redis.call("HGET", h, "sdig") !== argv[3]) return "respec";
      redis.call("SADD", keys[2], argv[4]);
      redis.call("LPUSH", keys[3], argv[5]);
      redis.call("HSET", h, "last_jid", argv[6], "last_at", nowText);
    } else if (isLive(redis, h, Number(nowText))) return "live";
    else {
      dropSchedule(redis, h, due, name);
      return "expired";
    }
    return "ok";
  },
  decode: (reply) => reply as ControlReply,
});
