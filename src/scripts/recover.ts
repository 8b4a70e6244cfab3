/**
 * The recover script: give a dead process's held jobs back to their queue.
 * Any live process runs it from its poller, so recovery never waits for the
 * dead process to restart (Sidekiq Pro's weakness, #6951).
 *
 * Poison pills: a job that keeps killing its process must end in the dead
 * set, not loop. Only jobs that were *running* when their process died are
 * counted: tokens up to the held hash's `#started` mark, and the landing job.
 * (The held hash's layout is described in `held.ts`.) The count travels in
 * the payload itself (`"edgekiq_recovered":N`, appended as its last field;
 * Ruby ignores unknown fields). Jobs fetched ahead (the prefetch) keep their
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
import { BATCH_SPAN, HELD_LUA, heldTwin } from "./held.ts";

/** What a recovery did. */
export interface RecoverResult {
  /** False when the owner turned out to be alive; nothing was touched. */
  readonly ownerDead: boolean;
  /** Jobs pushed back to the queue. */
  readonly requeued: number;
  /** Raw jobs (as buried) moved to the dead set as poison pills. */
  readonly poisoned: string[];
}

/** The payload field counting how many dead processes a job was running in. */
export const RECOVERED_FIELD = "edgekiq_recovered";

/**
 * Lua: read and write the recovery count at the end of a payload, and build
 * a poison pill's dead-set entry by appending Sidekiq's error fields. Plain
 * string edits, not `cjson`: re-encoding would round floats to 14 digits and
 * could change arguments, and string edits keep bytes that are not UTF-8.
 * The count is only ever read as the object's last field, which is where it
 * is written, so a key of that name inside the arguments is never mistaken
 * for it.
 */
const TAG_LUA = `
local function recovered(raw)
  return tonumber(string.match(raw, '"${RECOVERED_FIELD}":(%d+)}%s*$')) or 0
end
local function withFields(raw, fields)
  local s, c = string.gsub(raw, ',?"${RECOVERED_FIELD}":%d+}%s*$', "}")
  if c == 0 then s = raw end
  local body = string.match(s, "^(%s*{.-)}%s*$")
  if not body then return raw end
  if string.match(body, "^%s*{%s*$") then return body .. fields .. "}" end
  return body .. "," .. fields .. "}"
end
local function wireNow(raw, seconds, millis)
  local created = string.match(raw, '"created_at":(%d+)[,}]')
  if created and #created >= 12 then return millis end
  return seconds
end
`;

/**
 * KEYS: the held hash (or an 0.1 private list), its landing list, its queue
 * list, the registry, the owner's process hash, `dead`.
 * ARGV: max recoveries, now in seconds, now in milliseconds, dead-set cutoff
 * score, dead-set trim rank.
 *
 * The owner's liveness is checked inside the script, so a process whose
 * heartbeat returns at the last moment never has its jobs taken.
 * Reply: [0] if the owner is alive, else [1, requeued, ...buried raws].
 */
export const RECOVER = defineScript<RecoverResult>({
  name: "recover",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["held", "landing", "queue:<q>", "edgekiq:inflight", "<identity>", "dead"],
  argv: ["maxRecoveries", "nowSeconds", "nowMillis", "deadCutoff", "deadTrimRank"],
  lua: HELD_LUA + TAG_LUA + `
if redis.call("EXISTS", KEYS[5]) == 1 then return {0} end
local max = tonumber(ARGV[1])
local jobs = {}
if redis.call("TYPE", KEYS[1]).ok == "list" then
  -- An 0.1 private list did not record starts: every job counts.
  local list = redis.call("LRANGE", KEYS[1], 0, -1)
  for i = #list, 1, -1 do jobs[#jobs + 1] = {list[i], true} end
else
  local started = tonumber(redis.call("HGET", KEYS[1], "#started")) or 0
  for _, b in ipairs(batches(KEYS[1])) do
    for _, job in ipairs(pending(KEYS[1], b)) do jobs[#jobs + 1] = {job[2], b * SPAN + job[1] <= started} end
  end
end
local landed = redis.call("LRANGE", KEYS[2], 0, -1)
for i = #landed, 1, -1 do jobs[#jobs + 1] = {landed[i], true} end
local back, out = {}, {1, 0}
for _, job in ipairs(jobs) do
  local raw = job[1]
  if job[2] then
    local n = recovered(raw) + 1
    if n >= max then
      raw = withFields(raw, '"error_class":"Edgekiq::PoisonPill","error_message":"Job was running in ' .. n ..
        ' processes that died; moved to the dead set as a poison pill","failed_at":' .. wireNow(raw, ARGV[2], ARGV[3]))
      redis.call("ZADD", KEYS[6], ARGV[2], raw)
      out[#out + 1] = raw
      raw = nil
    else
      raw = withFields(raw, '"${RECOVERED_FIELD}":' .. n)
    end
  else
    raw = withFields(raw, '"${RECOVERED_FIELD}":' .. recovered(raw))
  end
  if raw then back[#back + 1] = raw end
end
pushBack(KEYS[3], back)
if #out > 2 then
  redis.call("ZREMRANGEBYSCORE", KEYS[6], "-inf", ARGV[4])
  redis.call("ZREMRANGEBYRANK", KEYS[6], 0, ARGV[5])
end
redis.call("DEL", KEYS[1], KEYS[2])
redis.call("HDEL", KEYS[4], KEYS[1])
out[2] = #back
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    if (redis.call("EXISTS", keys[4]) === 1) return [0];
    const max = Number(argv[0]);
    const jobs: Array<[string, boolean]> = [];
    if (redis.call("TYPE", keys[0]) === "list") {
      const list = redis.call("LRANGE", keys[0], 0, -1) as string[];
      for (let i = list.length - 1; i >= 0; i--) jobs.push([list[i], true]);
    } else {
      const started = Number(redis.call("HGET", keys[0], "#started") ?? 0) || 0;
      for (const b of heldTwin.batches(redis, keys[0])) {
        for (const [i, raw] of heldTwin.pending(redis, keys[0], b).jobs) {
          jobs.push([raw, b * BATCH_SPAN + i <= started]);
        }
      }
    }
    const landed = redis.call("LRANGE", keys[1], 0, -1) as string[];
    for (let i = landed.length - 1; i >= 0; i--) jobs.push([landed[i], true]);
    const back: string[] = [];
    const out: RedisReply[] = [1, 0];
    for (const [raw, started] of jobs) {
      if (!started) {
        back.push(withFields(raw, `"${RECOVERED_FIELD}":${recoveredCount(raw) ?? 0}`));
        continue;
      }
      const n = (recoveredCount(raw) ?? 0) + 1;
      if (n >= max) {
        const created = /"created_at":(\d+)[,}]/.exec(raw)?.[1];
        const now = created && created.length >= 12 ? argv[2] : argv[1];
        const buried = withFields(
          raw,
          `"error_class":"Edgekiq::PoisonPill","error_message":"Job was running in ${n} processes that died; moved to the dead set as a poison pill","failed_at":${now}`,
        );
        redis.call("ZADD", keys[5], argv[1], buried);
        out.push(buried);
      } else back.push(withFields(raw, `"${RECOVERED_FIELD}":${n}`));
    }
    heldTwin.pushBack(redis, keys[2], back);
    if (out.length > 2) {
      redis.call("ZREMRANGEBYSCORE", keys[5], "-inf", argv[3]);
      redis.call("ZREMRANGEBYRANK", keys[5], 0, argv[4]);
    }
    redis.call("DEL", keys[0], keys[1]);
    redis.call("HDEL", keys[3], keys[0]);
    out[1] = back.length;
    return out;
  },
  decode(reply: RedisReply): RecoverResult {
    const arr = reply as (number | string)[];
    return { ownerDead: arr[0] === 1, requeued: Number(arr[1] ?? 0), poisoned: arr.slice(2) as string[] };
  },
});

const COUNT_AT_END = new RegExp(`"${RECOVERED_FIELD}":(\\d+)}\\s*$`);

/**
 * How many dead processes a raw job was running in: `undefined` if it was
 * never recovered, 0 if it was recovered from a process where it had not
 * started (or whose start was not yet written).
 *
 * @example
 * ```ts
 * recoveredCount('{"class":"A","edgekiq_recovered":2}'); // 2
 * recoveredCount('{"class":"A"}'); // undefined
 * ```
 */
export function recoveredCount(raw: string): number | undefined {
  // Cheap when absent (every job): the field is only ever the last one.
  if (raw.charCodeAt(raw.length - 1) !== 125 || !raw.includes(RECOVERED_FIELD, raw.length - 40)) return undefined;
  const count = COUNT_AT_END.exec(raw)?.[1];
  return count === undefined ? undefined : Number(count);
}

/** A Lua pattern matching a payload that carries a recovery count (as its last field). */
export const RECOVERED_AT_END_LUA = `"${RECOVERED_FIELD}":%d+}%s*$`;

/**
 * How many of a new batch's first `startNow` jobs start as it arrives, and
 * are marked started by the fetch itself: those before the first recovered
 * job (a recovered job writes its own start, and a suspect may wait its turn).
 *
 * @example
 * ```ts
 * startingNow(['{"a":1}', '{"a":2,"edgekiq_recovered":0}'], 2); // 1
 * ```
 */
export function startingNow(raws: readonly string[], startNow: number): number {
  const limit = Math.min(startNow, raws.length);
  let s = 0;
  while (s < limit && recoveredCount(raws[s]) === undefined) s++;
  return s;
}

function withFields(raw: string, fields: string): string {
  const stripped = raw.replace(new RegExp(`,?"${RECOVERED_FIELD}":\\d+}\\s*$`), "}");
  const m = /^(\s*\{[\s\S]*?)\}\s*$/.exec(stripped);
  if (!m) return raw;
  return /^\s*\{\s*$/.test(m[1]) ? `${m[1]}${fields}}` : `${m[1]},${fields}}`;
}
