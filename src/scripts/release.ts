/**
 * The release script: at a clean stop, give back whatever a held hash still
 * holds (a job whose outcome could not be written, say) and what its landing
 * list holds, and drop the hash's registration, in one atomic step. Without
 * it an unregistered hash would be recovered by no one.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { HELD_LUA, heldTwin } from "./held.ts";

/**
 * KEYS: the held hash, its landing list, its queue list, the registry.
 * ARGV: none.
 * Returns how many jobs went back.
 */
export const RELEASE = defineScript<number>({
  name: "release",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["held", "landing", "queue:<q>", "edgekiq:inflight"],
  argv: [],
  lua: HELD_LUA + `
local back = {}
for _, b in ipairs(batches(KEYS[1])) do
  for _, job in ipairs(pending(KEYS[1], b)) do back[#back + 1] = job[2] end
end
local landed = redis.call("LRANGE", KEYS[2], 0, -1)
for i = #landed, 1, -1 do back[#back + 1] = landed[i] end
pushBack(KEYS[3], back)
redis.call("DEL", KEYS[1], KEYS[2])
redis.call("HDEL", KEYS[4], KEYS[1])
return #back
`,
  twin(redis: ScriptRedis, keys: string[]): RedisReply {
    const back: string[] = [];
    for (const b of heldTwin.batches(redis, keys[0])) {
      for (const [, raw] of heldTwin.pending(redis, keys[0], b).jobs) back.push(raw);
    }
    const landed = redis.call("LRANGE", keys[1], 0, -1) as string[];
    for (let i = landed.length - 1; i >= 0; i--) back.push(landed[i]);
    heldTwin.pushBack(redis, keys[2], back);
    redis.call("DEL", keys[0], keys[1]);
    redis.call("HDEL", keys[3], keys[0]);
    return back.length;
  },
  decode: (reply) => Number(reply),
});
