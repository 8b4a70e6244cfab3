/**
 * The recover script: give a dead process's held jobs back to their queue.
 * Any live process runs it from its poller, so recovery never waits for the
 * dead process to restart (Sidekiq Pro's weakness, #6951).
 *
 * Poison pills: a job that keeps killing its process must end in the dead
 * set, not loop. Only jobs that were *running* when their process died are
 * counted: tokens up to the held hash's `#started` mark, and the landing job.
 * (The held hash's layout is described in `held.ts`.) The count travels in
 * the payload itself (the recovered mark, `recovered_mark.ts`; Ruby ignores
 * unknown fields). Jobs fetched ahead (the prefetch) keep their
 * count but are tagged too, with 0 if they had none: the mark of a job that
 * started is sent with the next call, so a pill that killed its process at
 * once may have died uncounted, and must not come back as an ordinary job.
 *
 * The next process writes a recovered job's start before running it, so a
 * pill is counted on every death after its first; and it runs the counted
 * ones (suspects) one at a time, each one's ack written before the next
 * starts, so an innocent job that once ran beside a pill is not buried with it.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { HELD_LUA, heldTwin } from "./held.ts";
import { holds, KEY_TYPES_LUA, refusal } from "./key_types.ts";
import { RECOVERED_FIELD, RECOVERED_LUA, recoveredCount, withFields } from "./recovered_mark.ts";

/** What a recovery did. */
export interface RecoverResult {
  /** False when the owner turned out to be alive; nothing was touched. */
  readonly ownerDead: boolean;
  /** A batch's queue that was not among the keys given: nothing was touched; call again naming it. */
  readonly missingQueue: string | undefined;
  /** Jobs pushed back to their queues. */
  readonly requeued: number;
  /** Raw jobs (as buried) moved to the dead set as poison pills. */
  readonly poisoned: string[];
}

/**
 * KEYS: the held hash, the registry, the owner's process hash, `dead`, the
 * capsule's n queue lists, then their n landing lists.
 * ARGV: max recoveries, now in seconds, now in milliseconds, dead-set cutoff
 * score, dead-set trim rank, the queue keys' prefix (`queue:`).
 *
 * The owner's liveness is checked inside the script, so a process whose
 * heartbeat returns at the last moment never has its jobs taken. The queues
 * and `dead` are type-checked, and every batch's queue must be among the
 * keys, before anything moves: a key of another type refuses the call, and
 * the jobs stay held for the next try.
 * Reply: [0] if the owner is alive, [-1, name] if a batch's queue was not
 * named, else [1, requeued, ...buried raws].
 */
export const RECOVER = defineScript<RecoverResult>({
  name: "recover",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["held", "edgekiq:inflight", "<identity>", "dead", "...queue:<q1>..<qn>", "...landing lists l1..ln"],
  argv: ["maxRecoveries", "nowSeconds", "nowMillis", "deadCutoff", "deadTrimRank", "queuePrefix"],
  lua: HELD_LUA + RECOVERED_LUA + KEY_TYPES_LUA + `
if redis.call("EXISTS", KEYS[3]) == 1 then return {0} end
local n = (#KEYS - 4) / 2
if not holds(KEYS[4], "zset") then return refuse(KEYS[4], "zset") end
for i = 1, n do
  if not holds(KEYS[4 + i], "list") then return refuse(KEYS[4 + i], "list") end
end
local lists, missing = gather(KEYS[1], 4, 4 + n, n, #ARGV[6])
if not lists then return {-1, missing} end
local max = tonumber(ARGV[1])
local started = tonumber(redis.call("HGET", KEYS[1], "#started")) or 0
local out, requeued = {1, 0}, 0
for i = 1, n do
  local back = {}
  for _, job in ipairs(lists[i]) do
    local raw = job[1]
    -- Running when the owner died: a landed job, or a token up to the started mark.
    if job[2] == false or job[2] <= started then
      local count = recovered(raw) + 1
      if count >= max then
        raw = withFields(raw, '"error_class":"Edgekiq::PoisonPill","error_message":"Job was running in ' .. count ..
          ' processes that died; moved to the dead set as a poison pill","failed_at":' .. wireNow(raw, ARGV[2], ARGV[3]))
        redis.call("ZADD", KEYS[4], ARGV[2], raw)
        out[#out + 1] = raw
        raw = nil
      else
        raw = withFields(raw, '"${RECOVERED_FIELD}":' .. count)
      end
    else
      raw = withFields(raw, '"${RECOVERED_FIELD}":' .. recovered(raw))
    end
    if raw then back[#back + 1] = raw end
  end
  pushBack(KEYS[4 + i], back)
  requeued = requeued + #back
end
if #out > 2 then
  redis.call("ZREMRANGEBYSCORE", KEYS[4], "-inf", ARGV[4])
  redis.call("ZREMRANGEBYRANK", KEYS[4], 0, ARGV[5])
end
redis.call("DEL", KEYS[1])
for i = 1, n do redis.call("DEL", KEYS[4 + n + i]) end
redis.call("HDEL", KEYS[2], KEYS[1])
out[2] = requeued
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    if (redis.call("EXISTS", keys[2]) === 1) return [0];
    const n = (keys.length - 4) / 2;
    const queueKeys = keys.slice(4, 4 + n);
    if (!holds(redis, keys[3], "zset")) throw refusal(keys[3], "zset");
    for (const key of queueKeys) if (!holds(redis, key, "list")) throw refusal(key, "list");
    const lists = heldTwin.gather(redis, keys[0], { queueKeys, landingKeys: keys.slice(4 + n), plen: argv[5].length });
    if (!Array.isArray(lists)) return [-1, lists.missing];
    const max = Number(argv[0]);
    const started = Number(redis.call("HGET", keys[0], "#started") ?? 0) || 0;
    const out: RedisReply[] = [1, 0];
    let requeued = 0;
    lists.forEach((jobs, i) => {
      const back: string[] = [];
      for (const [raw, token] of jobs) {
        if (token !== false && token > started) {
          back.push(withFields(raw, `"${RECOVERED_FIELD}":${recoveredCount(raw) ?? 0}`));
          continue;
        }
        const count = (recoveredCount(raw) ?? 0) + 1;
        if (count >= max) {
          const created = /"created_at":(\d+)[,}]/.exec(raw)?.[1];
          const now = created && created.length >= 12 ? argv[2] : argv[1];
          const buried = withFields(
            raw,
            `"error_class":"Edgekiq::PoisonPill","error_message":"Job was running in ${count} processes that died; moved to the dead set as a poison pill","failed_at":${now}`,
          );
          redis.call("ZADD", keys[3], argv[1], buried);
          out.push(buried);
        } else back.push(withFields(raw, `"${RECOVERED_FIELD}":${count}`));
      }
      heldTwin.pushBack(redis, queueKeys[i], back);
      requeued += back.length;
    });
    if (out.length > 2) {
      redis.call("ZREMRANGEBYSCORE", keys[3], "-inf", argv[3]);
      redis.call("ZREMRANGEBYRANK", keys[3], 0, argv[4]);
    }
    redis.call("DEL", keys[0], ...keys.slice(4 + n));
    redis.call("HDEL", keys[1], keys[0]);
    out[1] = requeued;
    return out;
  },
  decode(reply: RedisReply): RecoverResult {
    const arr = reply as (number | string)[];
    if (Number(arr[0]) === -1) return { ownerDead: true, missingQueue: String(arr[1]), requeued: 0, poisoned: [] };
    return {
      ownerDead: arr[0] === 1,
      missingQueue: undefined,
      requeued: Number(arr[1] ?? 0),
      poisoned: arr.slice(2) as string[],
    };
  },
});
