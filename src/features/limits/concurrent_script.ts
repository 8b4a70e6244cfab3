/**
 * A concurrent limiter's take: at most `limit` holders at once, each holding
 * a lease that expires (a holder whose process died gives its slot back
 * when its lease ends). The holders are a sorted set scored by when each
 * lease ends, in Redis time.
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

/** With no hold time measured yet, the wait hinted to a caller over the limit (capped by the first lease's end). */
const FIRST_GUESS_MS = 1000;

/**
 * KEYS and ARGV: see `limiter_lua.ts` (the interval is the lease; one holder per call).
 * Reply: per call, `ok, wait ms, free slots`.
 *
 * Expired leases are dropped first. A holder already in the set renews its
 * lease (a job run again after its process died takes its own slot back);
 * a new one gets a slot if fewer than `limit` are held. Over the limit, the
 * wait is the measured mean hold time (or a first guess), never past the
 * end of the first lease.
 */
export const CONCURRENT_TAKE = defineScript<LimiterReply[]>({
  name: "limiterConcurrent",
  keys: LIMITER_KEYS,
  argv: LIMITER_ARGV,
  lua: LIMITER_LUA + `
local bad = check("zset")
if bad then return bad end
local now = now_ms()
local limit, lease = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
local out, taken = {}, false
for i = 6, #ARGV do
  local ok, wait = 0, 0
  if redis.call("ZSCORE", KEYS[1], ARGV[i]) or redis.call("ZCARD", KEYS[1]) < limit then
    redis.call("ZADD", KEYS[1], now + lease, ARGV[i])
    ok, taken = 1, true
  else
    local first = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
    local ends = tonumber(first[2]) - now
    local hold = tonumber(redis.call("HGET", KEYS[2], "hold") or "0")
    if hold <= 0 then hold = ${FIRST_GUESS_MS} end
    wait = math.ceil(math.max(1, math.min(hold, ends)))
  end
  out[#out + 1] = ok
  out[#out + 1] = wait
  out[#out + 1] = math.max(0, limit - redis.call("ZCARD", KEYS[1]))
end
-- Only ever extended: a holder with a longer lease (another definition of the name) keeps it.
if taken and redis.call("PTTL", KEYS[1]) < lease then redis.call("PEXPIRE", KEYS[1], lease) end
local uses, overs = tally(out)
account(uses, overs, "concurrent", now)
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    checkLimiterKeys(redis, keys, "zset");
    const now = redisNowMs(redis);
    const limit = Number(argv[2]);
    const lease = Number(argv[3]);
    redis.call("ZREMRANGEBYSCORE", keys[0], "-inf", now);
    const out: number[] = [];
    let taken = false;
    for (const holder of argv.slice(5)) {
      let ok = 0;
      let wait = 0;
      if (redis.call("ZSCORE", keys[0], holder) !== null || (redis.call("ZCARD", keys[0]) as number) < limit) {
        redis.call("ZADD", keys[0], now + lease, holder);
        ok = 1;
        taken = true;
      } else {
        const first = redis.call("ZRANGE", keys[0], 0, 0, "WITHSCORES") as string[];
        const ends = Number(first[1]) - now;
        let hold = Number(redis.call("HGET", keys[1], "hold") ?? 0);
        if (hold <= 0) hold = FIRST_GUESS_MS;
        wait = Math.ceil(Math.max(1, Math.min(hold, ends)));
      }
      out.push(ok, wait, Math.max(0, limit - (redis.call("ZCARD", keys[0]) as number)));
    }
    if (taken && (redis.call("PTTL", keys[0]) as number) < lease) redis.call("PEXPIRE", keys[0], lease);
    accountLimiter(redis, keys, argv, { ...tally(out), kind: "concurrent", now });
    return out;
  },
  decode: decodeLimiterReply,
});
