/**
 * Renews holders' leases on concurrent limiters, for jobs that run longer
 * than a quarter of their lease: their slots stay theirs while they run.
 * One call renews every such slot of a process's running jobs.
 *
 * @module
 */
import { KEY_TYPES_LUA } from "../../scripts/key_types.ts";
import { holds } from "../../scripts/key_types.ts";
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { NOW_MS_LUA, redisNowMs } from "./limiter_lua.ts";

/**
 * KEYS: concurrent limiters' holders (sorted sets).
 * ARGV: the lease in ms, then the holder of each key, in order.
 * Reply: how many leases were renewed (a lease that already ended is not
 * taken again: the slot may be another's by now).
 */
export const CONCURRENT_RENEW = defineScript<number>({
  name: "limiterRenew",
  idempotent: true,
  keys: ["edgekiq:limiter:<name>", "..."],
  argv: ["lease ms", "holder of KEYS[1]", "..."],
  lua: KEY_TYPES_LUA + NOW_MS_LUA + `
local now = now_ms()
local lease = tonumber(ARGV[1])
local renewed = 0
for i = 1, #KEYS do
  local ends = holds(KEYS[i], "zset") and redis.call("ZSCORE", KEYS[i], ARGV[i + 1])
  if ends and tonumber(ends) > now then
    redis.call("ZADD", KEYS[i], now + lease, ARGV[i + 1])
    if redis.call("PTTL", KEYS[i]) < lease then redis.call("PEXPIRE", KEYS[i], lease) end
    renewed = renewed + 1
  end
end
return renewed
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const now = redisNowMs(redis);
    const lease = Number(argv[0]);
    let renewed = 0;
    for (const [i, key] of keys.entries()) {
      const ends = holds(redis, key, "zset") ? redis.call("ZSCORE", key, argv[i + 1]) : null;
      if (ends !== null && Number(ends) > now) {
        redis.call("ZADD", key, now + lease, argv[i + 1]);
        if ((redis.call("PTTL", key) as number) < lease) redis.call("PEXPIRE", key, lease);
        renewed++;
      }
    }
    return renewed;
  },
  decode: (reply) => Number(reply) || 0,
});
