/**
 * A points limiter's take: each call spends a cost from a budget of
 * `limit` points that refills at `limit` per interval of Redis time
 * (continuously), GraphQL-style. A call the budget cannot pay waits.
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
 * KEYS and ARGV: see `limiter_lua.ts` (the state is a hash: `points`, `at` the time it was read, ms; one cost per call).
 * Reply: per call, `ok, wait ms, points left`; over, the wait is until the budget can pay the cost.
 */
export const POINTS_TAKE = defineScript<LimiterReply[]>({
  name: "limiterPoints",
  keys: LIMITER_KEYS,
  argv: LIMITER_ARGV,
  lua: LIMITER_LUA + `
local bad = check("hash")
if bad then return bad end
local now = now_ms()
local limit, per = tonumber(ARGV[3]), tonumber(ARGV[4])
local rate = limit / per
local points = tonumber(redis.call("HGET", KEYS[1], "points") or ARGV[3])
local at = tonumber(redis.call("HGET", KEYS[1], "at") or now)
points = math.min(limit, points + math.max(0, now - at) * rate)
local out = {}
for i = 6, #ARGV do
  local cost = tonumber(ARGV[i])
  if points >= cost then
    points = points - cost
    out[#out + 1], out[#out + 2], out[#out + 3] = 1, 0, math.floor(points)
  else
    out[#out + 1], out[#out + 2], out[#out + 3] = 0, math.max(1, math.ceil((cost - points) / rate)), math.floor(points)
  end
end
redis.call("HSET", KEYS[1], "points", string.format("%.6f", points), "at", now)
redis.call("PEXPIRE", KEYS[1], math.ceil((limit - points) / rate) + 1)
local uses, overs = tally(out)
account(uses, overs, "points", now)
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    checkLimiterKeys(redis, keys, "hash");
    const now = redisNowMs(redis);
    const limit = Number(argv[2]);
    const rate = limit / Number(argv[3]);
    let points = Number(redis.call("HGET", keys[0], "points") ?? limit);
    const at = Number(redis.call("HGET", keys[0], "at") ?? now);
    points = Math.min(limit, points + Math.max(0, now - at) * rate);
    const out: number[] = [];
    for (const value of argv.slice(5)) {
      const cost = Number(value);
      if (points >= cost) {
        points -= cost;
        out.push(1, 0, Math.floor(points));
      } else out.push(0, Math.max(1, Math.ceil((cost - points) / rate)), Math.floor(points));
    }
    redis.call("HSET", keys[0], "points", points.toFixed(6), "at", now);
    redis.call("PEXPIRE", keys[0], Math.ceil((limit - points) / rate) + 1);
    accountLimiter(redis, keys, argv, { ...tally(out), kind: "points", now });
    return out;
  },
  decode: decodeLimiterReply,
});
