/**
 * Compare-and-delete: the release of keys whose value names their owner.
 *
 * @module
 */
import { holds, KEY_TYPES_LUA } from "./key_types.ts";
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";

/**
 * Deletes each key that still holds its value: a lock let go of by its
 * owner, never one taken since by another (basic fetch has no fetch call to
 * carry such releases, so it sends them on their own; the orphan sweep of
 * unique locks sends its own too).
 *
 * A key of another type is not a lock of ours: it is left alone (a GET on
 * it would fail the call half-way, with the keys before it deleted).
 *
 * KEYS: keys to release. ARGV: the value each must still hold.
 * Reply: how many were deleted.
 */
export const COMPARE_AND_DELETE = defineScript<number>({
  name: "compareAndDelete",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["...keys to release"],
  argv: ["...values they must still hold"],
  lua: KEY_TYPES_LUA + `
local n = 0
for i = 1, #KEYS do
  if holds(KEYS[i], "string") and redis.call("GET", KEYS[i]) == ARGV[i] then n = n + redis.call("DEL", KEYS[i]) end
end
return n
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    let n = 0;
    keys.forEach((key, i) => {
      if (holds(redis, key, "string") && redis.call("GET", key) === argv[i]) n += redis.call("DEL", key) as number;
    });
    return n;
  },
  decode: (reply) => Number(reply),
});
