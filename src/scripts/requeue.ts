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
import { holds, KEY_TYPES_LUA, refusal } from "./key_types.ts";

/**
 * KEYS: the held hash, the landing list to adopt from (or the held hash
 * again), then the capsule's queue lists q1..qn.
 * ARGV: landing queue (1..n, 0 = none), landing batch id, the queue keys'
 * prefix (`queue:`), then groups of (queue, batch id, k, k job indexes),
 * oldest first.
 *
 * Every queue a job goes back to is checked to be a list first (or the
 * script refuses with nothing written: the jobs stay held, and the release
 * at stop or recovery tries again). A job goes back only if it is still
 * held: a job already acknowledged, or already recovered by another
 * process, is never duplicated. It is marked `2` (put back), so a late
 * acknowledgement knows to take the copy back. Only this capsule's own held
 * hash is ever named, so one capsule's stop cannot touch another's jobs
 * (Sidekiq #6379).
 * Returns how many jobs went back.
 */
export const REQUEUE = defineScript<number>({
  name: "requeue",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["held", "landing|held", "...queue:<q1>..<qn>"],
  argv: ["landingQueue", "landingBatch", "queuePrefix", "...(queue, batch, k, ...indexes)"],
  lua: HELD_LUA + KEY_TYPES_LUA + `
local held, landing = KEYS[1], KEYS[2]
local n = #KEYS - 2
local function q(i) return KEYS[2 + i] end
-- Every queue jobs go back to must be a list before anything moves: a job
-- marked put back but never pushed would be lost.
local a0 = 4
while a0 <= #ARGV do
  local qi = tonumber(ARGV[a0])
  if not holds(q(qi), "list") then return refuse(q(qi), "list") end
  a0 = a0 + 3 + tonumber(ARGV[a0 + 2])
end
local lq = tonumber(ARGV[1])
if lq > 0 then
  local raw = redis.call("RPOP", landing)
  -- A job holding a NUL byte stays in transit: the next fetch buries it.
  if raw and string.find(raw, "\\0", 1, true) then redis.call("RPUSH", landing, raw)
  elseif raw then redis.call("HSET", held, ARGV[2], string.sub(q(lq), #ARGV[3] + 1) .. "\\0" .. raw) end
end
local back, moved = {}, 0
for i = 1, n do back[i] = {} end
local a = 4
while a <= #ARGV do
  local qi, b, k = tonumber(ARGV[a]), ARGV[a + 1], tonumber(ARGV[a + 2])
  local want = {}
  for j = 1, k do want[tonumber(ARGV[a + 2 + j])] = true end
  local indexes = {}
  local jobs, _, size, _, pieces = pending(held, b)
  for _, job in ipairs(jobs) do
    if want[job[1]] then
      table.insert(back[qi], job[2])
      indexes[#indexes + 1] = job[1]
    end
  end
  if #indexes > 0 then mark(held, b, indexes, 50, size, pieces) end
  moved = moved + #indexes
  a = a + 3 + k
end
for i = 1, n do pushBack(q(i), back[i]) end
return moved
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const [held, landing] = keys;
    const n = keys.length - 2;
    const q = (i: number) => keys[1 + i];
    for (let a = 3; a < argv.length; a += 3 + Number(argv[a + 2])) {
      const qi = Number(argv[a]);
      if (!holds(redis, q(qi), "list")) throw refusal(q(qi), "list");
    }
    const lq = Number(argv[0]);
    if (lq > 0) {
      const raw = redis.call("RPOP", landing) as string | null;
      if (raw !== null && raw.includes(SEPARATOR)) redis.call("RPUSH", landing, raw);
      else if (raw !== null) redis.call("HSET", held, argv[1], `${q(lq).slice(argv[2].length)}${SEPARATOR}${raw}`);
    }
    const back: string[][] = Array.from({ length: n }, () => []);
    let moved = 0;
    for (let a = 3; a < argv.length;) {
      const qi = Number(argv[a]), b = argv[a + 1], k = Number(argv[a + 2]);
      const want = new Set(argv.slice(a + 3, a + 3 + k).map(Number));
      const indexes: number[] = [];
      const { jobs, n: size, pieces } = heldTwin.pending(redis, held, b);
      for (const [i, raw] of jobs) {
        if (!want.has(i)) continue;
        back[qi - 1].push(raw);
        indexes.push(i);
      }
      if (indexes.length) heldTwin.mark(redis, held, b, indexes, "2", { n: size, pieces });
      moved += indexes.length;
      a += 3 + k;
    }
    back.forEach((raws, i) => heldTwin.pushBack(redis, q(i + 1), raws));
    return moved;
  },
  decode: (reply) => Number(reply),
});
