/**
 * A window limiter's take: at most `limit` calls in any sliding interval of
 * Redis time. The calls are a sorted set scored by when each was made.
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
 * KEYS and ARGV: see `limiter_lua.ts` (the state is a sorted set: a unique token per call, scored by its time in ms).
 * Reply: per call, `ok, wait ms, calls left`; over the limit, the wait is
 * until the oldest call in the window leaves it.
 */
export const WINDOW_TAKE = defineScript<LimiterReply[]>({
  name: "limiterWindow",
  keys: LIMITER_KEYS,
  argv: LIMITER_ARGV,
  lua: LIMITER_LUA + `
local bad = check("zset")
if bad then return bad end
local now = now_ms()
local limit, per = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - per)
local n = redis.call("ZCARD", KEYS[1])
local out, before = {}, n
for i = 6, #ARGV do
  if n < limit then
    redis.call("ZADD", KEYS[1], now, ARGV[i])
    n = n + 1
    out[#out + 1], out[#out + 2], out[#out + 3] = 1, 0, limit - n
  else
    local first = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
    out[#out + 1], out[#out + 2], out[#out + 3] = 0, math.max(1, tonumber(first[2]) + per - now), 0
  end
end
if n > before then redis.call("PEXPIRE", KEYS[1], per) end
local uses, overs = tally(out)
account(uses, overs, "window", now)
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    checkLimiterKeys(redis, keys, "zset");
    const now = redisNowMs(redis);
    const limit = Number(argv[2]);
    const per = Number(argv[3]);
    redis.call("ZREMRANGEBYSCORE", keys[0], "-inf", now - per);
    let n = redis.call("ZCARD", keys[0]) as number;
    const before = n;
    const out: number[] = [];
    for (const token of argv.slice(5)) {
      if (n < limit) {
        redis.call("ZADD", keys[0], now, token);
        out.push(1, 0, limit - ++n);
      } else {
        const first = redis.call("ZRANGE", keys[0], 0, 0, "WITHSCORES") as string[];
        out.push(0, Math.max(1, Number(first[1]) + per - now), 0);
      }
    }
    if (n > before) redis.call("PEXPIRE", keys[0], per);
    accountLimiter(redis, keys, argv, { ...tally(out), kind: "window", now });
    return out;
  },
  decode: decodeLimiterReply,
});
