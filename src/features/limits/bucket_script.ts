/**
 * A bucket limiter's take: at most `limit` calls per fixed interval of
 * Redis time (the intervals start at multiples of it since the epoch).
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
 * KEYS and ARGV: see `limiter_lua.ts` (the state is a hash: `w` the interval's start, `n` its calls).
 * Reply: per call, `ok, wait ms, calls left in this interval`; over the limit, the wait is the rest of the interval.
 */
export const BUCKET_TAKE = defineScript<LimiterReply[]>({
  name: "limiterBucket",
  keys: LIMITER_KEYS,
  argv: LIMITER_ARGV,
  lua: LIMITER_LUA + `
local bad = check("hash")
if bad then return bad end
local now = now_ms()
local limit, per = tonumber(ARGV[3]), tonumber(ARGV[4])
local start = now - (now % per)
local n = 0
if tonumber(redis.call("HGET", KEYS[1], "w") or "-1") == start then
  n = tonumber(redis.call("HGET", KEYS[1], "n") or "0")
end
local out, before = {}, n
for i = 6, #ARGV do
  if n < limit then
    n = n + 1
    out[#out + 1], out[#out + 2], out[#out + 3] = 1, 0, limit - n
  else
    out[#out + 1], out[#out + 2], out[#out + 3] = 0, start + per - now, 0
  end
end
if n > before then
  redis.call("HSET", KEYS[1], "w", start, "n", n)
  redis.call("PEXPIRE", KEYS[1], start + per - now)
end
local uses, overs = tally(out)
account(uses, overs, "bucket", now)
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    checkLimiterKeys(redis, keys, "hash");
    const now = redisNowMs(redis);
    const limit = Number(argv[2]);
    const per = Number(argv[3]);
    const start = now - (now % per);
    let n = 0;
    if (Number(redis.call("HGET", keys[0], "w") ?? -1) === start) n = Number(redis.call("HGET", keys[0], "n") ?? 0);
    const before = n;
    const out: number[] = [];
    for (let i = 5; i < argv.length; i++) {
      if (n < limit) out.push(1, 0, limit - ++n);
      else out.push(0, start + per - now, 0);
    }
    if (n > before) {
      redis.call("HSET", keys[0], "w", start, "n", n);
      redis.call("PEXPIRE", keys[0], start + per - now);
    }
    accountLimiter(redis, keys, argv, { ...tally(out), kind: "bucket", now });
    return out;
  },
  decode: decodeLimiterReply,
});
