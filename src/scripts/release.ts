/**
 * The release script: at a clean stop, give back whatever a capsule's held
 * hash still holds (a job whose outcome could not be written, say) and what
 * its landing lists hold, and drop the hash's registration, in one atomic
 * step. Without it an unregistered hash would be recovered by no one.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { HELD_LUA, heldTwin } from "./held.ts";
import { holds, KEY_TYPES_LUA, refusal } from "./key_types.ts";

/** What the release's refusal says when a held batch's queue is not among those named (nothing was written). */
export const RELEASE_NOT_NAMED = "is not named";

/**
 * KEYS: the held hash, the registry, n queue lists of the capsule (all of
 * them, or those its held batches and landing lists may name), then their
 * n landing lists.
 * ARGV: the queue keys' prefix (`queue:`).
 * Every queue list is type-checked, and every batch's queue must be among
 * them, before anything moves: otherwise it refuses with nothing written.
 * Returns how many jobs went back.
 */
export const RELEASE = defineScript<number>({
  name: "release",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["held", "edgekiq:inflight", "...queue:<q1>..<qn>", "...landing lists l1..ln"],
  argv: ["queuePrefix"],
  lua: HELD_LUA + KEY_TYPES_LUA + `
local n = (#KEYS - 2) / 2
for i = 1, n do
  if not holds(KEYS[2 + i], "list") then return refuse(KEYS[2 + i], "list") end
end
local lists, missing = gather(KEYS[1], 2, 2 + n, n, #ARGV[1])
if not lists then return redis.error_reply("ERR cannot release: queue " .. missing .. " ${RELEASE_NOT_NAMED}") end
local moved = 0
for i = 1, n do
  local back = {}
  for _, job in ipairs(lists[i]) do back[#back + 1] = job[1] end
  pushBack(KEYS[2 + i], back)
  moved = moved + #back
end
redis.call("DEL", KEYS[1])
for i = 1, n do redis.call("DEL", KEYS[2 + n + i]) end
redis.call("HDEL", KEYS[2], KEYS[1])
return moved
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const n = (keys.length - 2) / 2;
    const queueKeys = keys.slice(2, 2 + n);
    for (const key of queueKeys) if (!holds(redis, key, "list")) throw refusal(key, "list");
    const lists = heldTwin.gather(redis, keys[0], { queueKeys, landingKeys: keys.slice(2 + n), plen: argv[0].length });
    if (!Array.isArray(lists)) throw new Error(`ERR cannot release: queue ${lists.missing} ${RELEASE_NOT_NAMED}`);
    let moved = 0;
    lists.forEach((jobs, i) => {
      heldTwin.pushBack(redis, queueKeys[i], jobs.map(([raw]) => raw));
      moved += jobs.length;
    });
    redis.call("DEL", keys[0], ...keys.slice(2 + n));
    redis.call("HDEL", keys[1], keys[0]);
    return moved;
  },
  decode: (reply) => Number(reply),
});
