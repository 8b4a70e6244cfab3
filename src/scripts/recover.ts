/**
 * The recover script: give a dead process's in-flight jobs back to their
 * queue. Any live process runs it from its poller, so recovery never waits
 * for the dead process to restart (Sidekiq Pro's weakness, #6951).
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";

/** What a recovery did. */
export interface RecoverResult {
  /** False when the owner turned out to be alive; nothing was touched. */
  readonly ownerDead: boolean;
  /** Jobs pushed back to the queue. */
  readonly requeued: number;
  /** Raw jobs moved to the dead set because they were recovered too often (poison pills). */
  readonly poisoned: string[];
}

/**
 * KEYS: the private list, its queue list, the private-list registry hash,
 * the owner's process hash, the recoveries hash, `dead`.
 * ARGV: the private list's registry field, max recoveries, now (epoch seconds).
 *
 * The owner's liveness is checked inside the script, so a process whose
 * heartbeat returns at the last moment never has its jobs taken.
 */
export const RECOVER = defineScript<RecoverResult>({
  name: "recover",
  keys: ["private list", "queue:<q>", "edgekiq:inflight", "<identity>", "edgekiq:recoveries", "dead"],
  argv: ["registryField", "maxRecoveries", "now"],
  lua: `
if redis.call("EXISTS", KEYS[4]) == 1 then return {0, 0} end
local max = tonumber(ARGV[2])
local requeued = 0
local out = {1, 0}
while true do
  local raw = redis.call("RPOP", KEYS[1])
  if not raw then break end
  local ok, job = pcall(cjson.decode, raw)
  local jid = (ok and type(job) == "table" and type(job.jid) == "string") and job.jid or raw
  local seen = redis.call("HINCRBY", KEYS[5], jid, 1)
  if seen >= max then
    redis.call("HDEL", KEYS[5], jid)
    redis.call("ZADD", KEYS[6], ARGV[3], raw)
    table.insert(out, raw)
  else
    redis.call("RPUSH", KEYS[2], raw)
    requeued = requeued + 1
  end
end
redis.call("EXPIRE", KEYS[5], 604800)
redis.call("HDEL", KEYS[3], ARGV[1])
out[2] = requeued
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    if (redis.call("EXISTS", keys[3]) === 1) return [0, 0];
    const max = Number(argv[1]);
    const out: RedisReply[] = [1, 0];
    let requeued = 0;
    for (;;) {
      const raw = redis.call("RPOP", keys[0]) as string | null;
      if (raw === null) break;
      let jid = raw;
      try {
        const job = JSON.parse(raw);
        if (typeof job?.jid === "string") jid = job.jid;
      } catch { /* unreadable: count it by its raw text */ }
      const seen = redis.call("HINCRBY", keys[4], jid, 1) as number;
      if (seen >= max) {
        redis.call("HDEL", keys[4], jid);
        redis.call("ZADD", keys[5], argv[2], raw);
        out.push(raw);
      } else {
        redis.call("RPUSH", keys[1], raw);
        requeued++;
      }
    }
    redis.call("EXPIRE", keys[4], 604800);
    redis.call("HDEL", keys[2], argv[0]);
    out[1] = requeued;
    return out;
  },
  decode(reply: RedisReply): RecoverResult {
    const arr = reply as (number | string)[];
    return { ownerDead: arr[0] === 1, requeued: Number(arr[1]), poisoned: arr.slice(2) as string[] };
  },
});
