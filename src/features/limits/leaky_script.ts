/**
 * A leaky-bucket limiter's take: the bucket holds `burst` calls and drains
 * at `limit` per interval of Redis time; a call that would overflow it
 * waits. Over any span T, at most `burst + T * limit / interval` calls.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import {
  accountLimiter,
  checkLimiterKeys,
  decodeLimiterReply,
  LIMITER_ARGV,
  LIMITER_KEYS,
  LIMITER_LUA,
  type LimiterReply,
  redisNowMs,
  tally,
} from "./limiter_lua.ts";

/**
 * KEYS and ARGV: see `limiter_lua.ts` (the state is a hash: `level`, `at` the time it was read, ms).
 * Reply: per call, `ok, wait ms, room left`; over, the wait is until one call's room has drained.
 */
export const LEAKY_TAKE = defineScript<LimiterReply[]>({
  name: "limiterLeaky",
  keys: LIMITER_KEYS,
  argv: LIMITER_ARGV,
  lua: LIMITER_LUA + `
local bad = check("hash")
if bad then return bad end
local now = now_ms()
local rate, burst = tonumber(ARGV[3]) / tonumber(ARGV[4]), tonumber(ARGV[5])
local level = tonumber(redis.call("HGET", KEYS[1], "level") or "0")
local at = tonumber(redis.call("HGET", KEYS[1], "at") or now)
level = math.max(0, level - math.max(0, now - at) * rate)
local out = {}
for i = 6, #ARGV do
  if level + 1 <= burst then
    level = level + 1
    out[#out + 1], out[#out + 2], out[#out + 3] = 1, 0, math.floor(burst - level)
  else
    out[#out + 1], out[#out + 2], out[#out + 3] = 0, math.max(1, math.ceil((level + 1 - burst) / rate)), 0
  end
end
redis.call("HSET", KEYS[1], "level", string.format("%.6f", level), "at", now)
redis.call("PEXPIRE", KEYS[1], math.ceil(level / rate) + 1)
local uses, overs = tally(out)
account(uses, overs, "leaky", now)
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    checkLimiterKeys(redis, keys, "hash");
    const now = redisNowMs(redis);
    const rate = Number(argv[2]) / Number(argv[3]);
    const burst = Number(argv[4]);
    let level = Number(redis.call("HGET", keys[0], "level") ?? 0);
    const at = Number(redis.call("HGET", keys[0], "at") ?? now);
    level = Math.max(0, level - Math.max(0, now - at) * rate);
    const out: number[] = [];
    for (let i = 5; i < argv.length; i++) {
      if (level + 1 <= burst) {
        level++;
        out.push(1, 0, Math.floor(burst - level));
      } else out.push(0, Math.max(1, Math.ceil((level + 1 - burst) / rate)), 0);
    }
    redis.call("HSET", keys[0], "level", level.toFixed(6), "at", now);
    redis.call("PEXPIRE", keys[0], Math.ceil(level / rate) + 1);
    accountLimiter(redis, keys, argv, { ...tally(out), kind: "leaky", now });
    return out;
  },
  decode: decodeLimiterReply,
});
