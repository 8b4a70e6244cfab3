/**
 * Gives concurrent limiters' slots back, many at once: the writes of jobs
 * that finish together share one call (the settler's coalesced framing,
 * see `OutcomeWrite.coalesce`), and each records how long its slot was
 * held, which is the wait the limiter hints to callers over its limit, and
 * the uses of a slot kept between jobs (`slot_pool.ts`) beyond its take.
 *
 * @module
 */
import { KEY_TYPES_LUA } from "../../scripts/key_types.ts";
import { holds } from "../../scripts/key_types.ts";
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";

/**
 * KEYS: per write, pairs of (a concurrent limiter's holders, its stats hash).
 * ARGV: per write, its number of keys (or `-n`: the keys of the nth write), its number of args, then for each pair of
 * keys: the mean ms a job held the slot, the uses to count beyond its take (jobs run in a kept slot after the first),
 * its holder.
 * Reply: how many slots were given back.
 *
 * Idempotent: a holder no longer in the set (released already, or its
 * lease ended) is passed over. A key of the wrong type is passed over too,
 * so one bad key never fails the writes of other jobs.
 */
export const CONCURRENT_RELEASE = defineScript<number>({
  name: "limiterRelease",
  idempotent: true,
  keys: ["edgekiq:limiter:<name>", "edgekiq:limiter-stats:<name>", "..."],
  argv: ["number of keys", "number of args", "held ms", "extra uses", "holder", "...", "..."],
  lua: KEY_TYPES_LUA + `
local spans = {}
local k, a, w, released = 1, 1, 0, 0
while a <= #ARGV do
  w = w + 1
  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local span
  if nk >= 0 then
    span = {k, nk}
    k = k + nk
  else
    span = spans[-nk]
  end
  spans[w] = span
  local j = a + 2
  for i = span[1], span[1] + span[2] - 1, 2 do
    local held, extra, holder = tonumber(ARGV[j]) or 0, tonumber(ARGV[j + 1]) or 0, ARGV[j + 2]
    j = j + 3
    if holder and j <= a + 2 + na and holds(KEYS[i], "zset") and holds(KEYS[i + 1], "hash")
      and redis.call("ZREM", KEYS[i], holder) == 1 and redis.call("EXISTS", KEYS[i + 1]) == 1 then
      local hold = tonumber(redis.call("HGET", KEYS[i + 1], "hold") or "0")
      if hold > 0 then hold = hold * 0.8 + held * 0.2 else hold = held end
      redis.call("HSET", KEYS[i + 1], "hold", math.floor(hold))
      if extra > 0 then
        redis.call("HINCRBY", KEYS[i + 1], "use", extra)
        redis.call("HINCRBY", KEYS[i + 1], "use_m", extra)
      end
      released = released + 1
    end
  end
  a = a + 2 + na
end
return released
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const spans: [number, number][] = [];
    let k = 0;
    let a = 0;
    let released = 0;
    while (a < argv.length) {
      const nk = Number(argv[a]);
      const na = Number(argv[a + 1]);
      let span: [number, number];
      if (nk >= 0) {
        span = [k, nk];
        k += nk;
      } else span = spans[-nk - 1];
      spans.push(span);
      let j = a + 2;
      for (let i = span[0]; i < span[0] + span[1]; i += 2) {
        const held = Number(argv[j]) || 0;
        const extra = Number(argv[j + 1]) || 0;
        const holder = argv[j + 2];
        j += 3;
        if (
          holder !== undefined && j <= a + 2 + na && holds(redis, keys[i], "zset") &&
          holds(redis, keys[i + 1], "hash") &&
          redis.call("ZREM", keys[i], holder) === 1 && redis.call("EXISTS", keys[i + 1]) === 1
        ) {
          let hold = Number(redis.call("HGET", keys[i + 1], "hold") ?? 0);
          hold = hold > 0 ? hold * 0.8 + held * 0.2 : held;
          redis.call("HSET", keys[i + 1], "hold", Math.floor(hold));
          if (extra > 0) {
            redis.call("HINCRBY", keys[i + 1], "use", extra);
            redis.call("HINCRBY", keys[i + 1], "use_m", extra);
          }
          released++;
        }
      }
      a += 2 + na;
    }
    return released;
  },
  decode: (reply) => Number(reply) || 0,
});
