/**
 * The requeue script: put jobs a process holds back at the front of their
 * queue (the end fetch pops from), atomically and in their original order,
 * so they run next. Used at quiet (jobs fetched but not started), at hard
 * shutdown (jobs cut off) and for a job `perform` asked to requeue.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { HELD_LUA, heldTwin, SEPARATOR } from "./held.ts";

/**
 * KEYS: for the capsule's n queues: queue lists q1..qn, held hashes h1..hn,
 * landing lists l1..ln.
 * ARGV: landing queue index (0 = none), landing batch id, then groups of
 * (queue index, batch id, k, k job indexes), oldest first.
 *
 * A job goes back only if it is still held: a job already acknowledged, or
 * already recovered by another process, is never duplicated. It is marked
 * `2` (put back), so a late acknowledgement knows to take the copy back.
 * Only this process's own held hashes are ever named, so one capsule's stop
 * cannot touch another's jobs (Sidekiq #6379).
 * Returns how many jobs went back.
 */
export const REQUEUE = defineScript<number>({
  name: "requeue",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["queue:<q1>..<qn>", "held h1..hn", "landing l1..ln"],
  argv: ["landingQueue", "landingBatch", "...(queue, batch, k, ...indexes)"],
  lua: HELD_LUA + `
local n = #KEYS / 3
local lq = tonumber(ARGV[1])
if lq > 0 then
  local raw = redis.call("RPOP", KEYS[2 * n + lq])
  -- A job holding a NUL byte stays in transit: the next fetch buries it.
  if raw and string.find(raw, "\\0", 1, true) then redis.call("RPUSH", KEYS[2 * n + lq], raw)
  elseif raw then redis.call("HSET", KEYS[n + lq], ARGV[2], raw) end
end
local back, moved = {}, 0
for i = 1, n do back[i] = {} end
local a = 3
while a <= #ARGV do
  local qi, b, k = tonumber(ARGV[a]), ARGV[a + 1], tonumber(ARGV[a + 2])
  local want = {}
  for j = 1, k do want[tonumber(ARGV[a + 2 + j])] = true end
  local indexes = {}
  for _, job in ipairs(pending(KEYS[n + qi], b)) do
    if want[job[1]] then
      table.insert(back[qi], job[2])
      indexes[#indexes + 1] = job[1]
    end
  end
  if #indexes > 0 then mark(KEYS[n + qi], b, indexes, 50) end
  moved = moved + #indexes
  a = a + 3 + k
end
for i = 1, n do pushBack(KEYS[i], back[i]) end
return moved
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const n = keys.length / 3;
    const lq = Number(argv[0]);
    if (lq > 0) {
      const raw = redis.call("RPOP", keys[2 * n + lq - 1]) as string | null;
      if (raw !== null && raw.includes(SEPARATOR)) redis.call("RPUSH", keys[2 * n + lq - 1], raw);
      else if (raw !== null) redis.call("HSET", keys[n + lq - 1], argv[1], raw);
    }
    const back: string[][] = Array.from({ length: n }, () => []);
    let moved = 0;
    for (let a = 2; a < argv.length;) {
      const qi = Number(argv[a]), b = argv[a + 1], k = Number(argv[a + 2]);
      const want = new Set(argv.slice(a + 3, a + 3 + k).map(Number));
      const indexes: number[] = [];
      for (const [i, raw] of heldTwin.pending(redis, keys[n + qi - 1], b).jobs) {
        if (!want.has(i)) continue;
        back[qi - 1].push(raw);
        indexes.push(i);
      }
      if (indexes.length) heldTwin.mark(redis, keys[n + qi - 1], b, indexes, "2");
      moved += indexes.length;
      a += 3 + k;
    }
    back.forEach((raws, i) => heldTwin.pushBack(redis, keys[i], raws));
    return moved;
  },
  decode: (reply) => Number(reply),
});
