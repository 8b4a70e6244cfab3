/**
 * The requeue script: put unfinished jobs back, atomically, at the front of
 * their queue (the end fetch pops from), so they run next.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";

/**
 * KEYS: the queue list, then (reliable fetch only) the private list.
 * ARGV: raw jobs.
 *
 * With a private list, a job is pushed back only if it was still in that
 * list: a job already acknowledged, or already recovered by another process,
 * is never duplicated. Only this process's own private list is ever named,
 * so one capsule's stop cannot touch another's jobs (Sidekiq #6379).
 * Returns how many jobs went back.
 */
export const REQUEUE = defineScript<number>({
  name: "requeue",
  keys: ["queue:<q>", "private list of q (reliable only)"],
  argv: ["...rawJobs"],
  lua: `
local n = 0
for i = 1, #ARGV do
  if #KEYS == 1 or redis.call("LREM", KEYS[2], -1, ARGV[i]) == 1 then
    redis.call("RPUSH", KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    let n = 0;
    for (const raw of argv) {
      if (keys.length === 1 || redis.call("LREM", keys[1], -1, raw) === 1) {
        redis.call("RPUSH", keys[0], raw);
        n++;
      }
    }
    return n;
  },
  decode: (reply) => Number(reply),
});
