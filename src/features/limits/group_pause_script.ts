/**
 * Pauses or resumes one group of a grouped queue: a paused group leaves the
 * ready set (the mover never sees it, so it holds nobody back) and keeps
 * its jobs; resumed, it joins the back of the turn if it has work.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { KEY_TYPES_LUA } from "../../scripts/key_types.ts";
import { holds, refusal } from "../../scripts/key_types.ts";

/**
 * KEYS: the group's list, the queue's ready groups, the queue's paused groups.
 * ARGV: the group, `"pause"` or `"resume"`.
 * Reply: 1 when it changed something, else 0.
 */
export const GROUP_PAUSE = defineScript<number>({
  name: "groupPause",
  idempotent: true,
  keys: ["edgekiq:group:<queue>,<group>", "edgekiq:groups:<queue>", "edgekiq:groups-paused:<queue>"],
  argv: ["group", "pause | resume"],
  lua: KEY_TYPES_LUA + `
if not holds(KEYS[1], "list") then return refuse(KEYS[1], "list") end
if not holds(KEYS[2], "zset") then return refuse(KEYS[2], "zset") end
if not holds(KEYS[3], "set") then return refuse(KEYS[3], "set") end
if ARGV[2] == "pause" then
  redis.call("ZREM", KEYS[2], ARGV[1])
  return redis.call("SADD", KEYS[3], ARGV[1])
end
local changed = redis.call("SREM", KEYS[3], ARGV[1])
if changed == 1 and redis.call("LLEN", KEYS[1]) > 0 then
  local last = redis.call("ZRANGE", KEYS[2], -1, -1, "WITHSCORES")
  redis.call("ZADD", KEYS[2], "NX", (tonumber(last[2]) or 0) + 1, ARGV[1])
end
return changed
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    for (const [i, kind] of [[0, "list"], [1, "zset"], [2, "set"]] as const) {
      if (!holds(redis, keys[i], kind)) throw refusal(keys[i], kind);
    }
    if (argv[1] === "pause") {
      redis.call("ZREM", keys[1], argv[0]);
      return redis.call("SADD", keys[2], argv[0]);
    }
    const changed = redis.call("SREM", keys[2], argv[0]);
    if (changed === 1 && (redis.call("LLEN", keys[0]) as number) > 0) {
      const last = redis.call("ZRANGE", keys[1], -1, -1, "WITHSCORES") as string[];
      redis.call("ZADD", keys[1], "NX", (Number(last[1]) || 0) + 1, argv[0]);
    }
    return changed;
  },
  decode: (reply) => Number(reply) || 0,
});
