/**
 * The release script: at a clean stop, give back whatever is still in this
 * process's private list (a job whose outcome could not be written, say)
 * and drop the list's registration, in one atomic step. Without it an
 * unregistered list would be recovered by no one.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";

/**
 * KEYS: the private list, its queue list, the private-list registry hash.
 * ARGV: the private list's registry field.
 * Returns how many jobs went back.
 */
export const RELEASE = defineScript<number>({
  name: "release",
  keys: ["private list", "queue:<q>", "edgekiq:inflight"],
  argv: ["registryField"],
  lua: `
local n = 0
while redis.call("LMOVE", KEYS[1], KEYS[2], "RIGHT", "RIGHT") do n = n + 1 end
redis.call("HDEL", KEYS[3], ARGV[1])
return n
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    let n = 0;
    while (redis.call("LMOVE", keys[0], keys[1], "RIGHT", "RIGHT") !== null) n++;
    redis.call("HDEL", keys[2], argv[0]);
    return n;
  },
  decode: (reply) => Number(reply),
});
