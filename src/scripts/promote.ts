/**
 * The promote script: move due jobs from `schedule` or `retry` to their
 * queues. The poller reads up to a batch of due entries, rewrites each in
 * JavaScript (enqueued_at, client middleware), then this script moves them
 * all in one round trip. `ZREM` guards each move, so two pollers racing for
 * one entry move it once.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";

/**
 * KEYS: the sorted set, `queues`, `dead`, then queue lists k1..km.
 * ARGV: m, queue names for k1..km, now (epoch seconds), then triples of
 * (raw entry, new payload, target) where target is a queue index 1..m, 0
 * for the dead set (an entry that cannot be read), or -1 to drop it (client
 * middleware stopped the push).
 * Returns how many entries moved.
 */
export const PROMOTE = defineScript<number>({
  name: "promote",
  keys: ["schedule|retry", "queues", "dead", "...queue:<name> lists"],
  argv: ["m", "...queue names", "now", "...(raw, payload, target) triples"],
  lua: `
local m = tonumber(ARGV[1])
local now = ARGV[m + 2]
local moved = 0
for i = m + 3, #ARGV, 3 do
  if redis.call("ZREM", KEYS[1], ARGV[i]) == 1 then
    local target = tonumber(ARGV[i + 2])
    if target == 0 then
      redis.call("ZADD", KEYS[3], now, ARGV[i + 1])
    elseif target > 0 then
      redis.call("SADD", KEYS[2], ARGV[1 + target])
      redis.call("LPUSH", KEYS[3 + target], ARGV[i + 1])
    end
    moved = moved + 1
  end
end
return moved
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const m = Number(argv[0]);
    const now = argv[m + 1];
    let moved = 0;
    for (let i = m + 2; i < argv.length; i += 3) {
      if (redis.call("ZREM", keys[0], argv[i]) !== 1) continue;
      const target = Number(argv[i + 2]);
      if (target === 0) redis.call("ZADD", keys[2], now, argv[i + 1]);
      else if (target > 0) {
        redis.call("SADD", keys[1], argv[target]);
        redis.call("LPUSH", keys[2 + target], argv[i + 1]);
      }
      moved++;
    }
    return moved;
  },
  decode: (reply) => Number(reply),
});
