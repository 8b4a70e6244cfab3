/**
 * The fetch script: acknowledge finished jobs and take the next batch, in one
 * round trip. This is why a busy worker costs well under one Redis command
 * per job; the held-hash layout ({@link HELD_LUA}) is why it costs little
 * Redis time.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { BATCH_SPAN, HELD_LUA, heldTwin, SEPARATOR } from "./held.ts";
import { RECOVERED_AT_END_LUA, startingNow } from "./recover.ts";

/** What a fetch returned. */
export interface FetchResult {
  /**
   * `false` when this process's entry has expired: other processes may have
   * recovered what it held, so it must beat (re-register) before fetching.
   * Acks were applied anyway; nothing was taken.
   */
  readonly alive: boolean;
  /** Index (0-based, into the capsule's queues) of the queue the jobs came from, or -1. */
  readonly queueIndex: number;
  /** Raw jobs, oldest first; job i is index i of the batch. */
  readonly jobs: string[];
  /** Whether the held hashes had lost their registration (recovered by another process) and were registered again. */
  readonly reregistered: boolean;
  /** Whether the landing job named in the call was found and adopted into its held hash. */
  readonly adopted: boolean;
  /**
   * The request had run before (a resend) or was released: it took nothing
   * now, and whatever its first run took is held under its batch id, unseen.
   */
  readonly replayed: boolean;
}

/**
 * KEYS: the process hash, the held-key registry, `dead`, then for the
 * capsule's n queues: queue lists q1..qn, held hashes h1..hn, landing lists
 * l1..ln, then u keys to release.
 * ARGV: identity, ttl, count, batch id, startNow, started mark, landing queue
 * index (0 = none), landing batch id, now (epoch seconds), u, the n queue
 * names, the u values the keys to release must still hold,
 * then o and a fetch order of o queue indexes; r and r batch ids to release;
 * d and d (queue index, batch id) pairs of batches done; p and p partial acks
 * (queue index, batch id, batch size, k, k job indexes); m and m (queue
 * index, batch id, job index, raw) acks of jobs that may have been requeued.
 *
 * In order: adopt the landing job as a one-job batch; release batches whose
 * request's reply was lost (their held jobs go back to the queue, and a
 * tombstone makes a late run of that request take nothing); acks; release
 * keys that still hold their value (locks middleware let go of: a
 * compare-and-delete, so a lock taken since by another job stays); refresh
 * the process entry's TTL (a missing entry means this process was presumed
 * dead: reply -2 and take nothing); re-register the held hashes if another
 * process recovered them; record the started mark; take up to `count` jobs
 * from the first non-empty queue in the fetch order as one batch, and mark
 * its first `startNow` as started, up to the first recovered job (a
 * recovered job writes its own start, and a suspect may wait its turn).
 *
 * An ack of a job that is no longer held because it was put back (hard
 * shutdown, or recovery while this process stalled) takes the requeued copy
 * back if it is within the first 1,000 jobs at the queue's pop end, so a job
 * finishing in that window does not run twice. The scan is bounded: no
 * script here walks a whole queue.
 *
 * Reply: [-2] presumed dead, [-3] request released or already run, else [queue index
 * (1-based, 0 if none), reregistered, adopted, job count, NUL-joined jobs].
 */
export const FETCH = defineScript<FetchResult>({
  name: "fetch",
  keys: [
    "<identity>",
    "edgekiq:inflight",
    "dead",
    "queue:<q1>..<qn>",
    "held h1..hn",
    "landing l1..ln",
    "...keys to release",
  ],
  argv: [
    "identity",
    "ttl",
    "count",
    "batch",
    "startNow",
    "startedMark",
    "landingQueue",
    "landingBatch",
    "now",
    "u",
    "...queue names",
    "...values of the keys to release",
    "o",
    "...order",
    "r",
    "...batches to release",
    "d",
    "...(queue, batch)",
    "p",
    "...(queue, batch, size, k, ...indexes)",
    "m",
    "...(queue, batch, index, raw)",
  ],
  lua: HELD_LUA + `
local RECOVERED_AT_END = '${RECOVERED_AT_END_LUA}'
local u = tonumber(ARGV[10])
local n = (#KEYS - 3 - u) / 3
local function q(i) return KEYS[3 + i] end
local function h(i) return KEYS[3 + n + i] end
local count = math.min(tonumber(ARGV[3]), SPAN)
local batch = ARGV[4]
local now = ARGV[9]
local adopted = 0
local lq = tonumber(ARGV[7])
if lq > 0 then
  local raw = redis.call("RPOP", KEYS[3 + 2 * n + lq])
  if raw then
    if string.find(raw, "\\0", 1, true) then
      buryNul(KEYS[3], ARGV[10 + lq], raw, "nul-" .. ARGV[8], now)
    else
      redis.call("HSET", h(lq), ARGV[8], raw)
    end
    adopted = 1
  end
end
for j = 1, u do
  if redis.call("GET", KEYS[3 + 3 * n + j]) == ARGV[10 + n + j] then redis.call("DEL", KEYS[3 + 3 * n + j]) end
end
local a = 11 + n + u
local order = {}
for i = 1, tonumber(ARGV[a]) do order[i] = tonumber(ARGV[a + i]) end
a = a + #order + 1
for _ = 1, tonumber(ARGV[a]) do
  a = a + 1
  local b = ARGV[a]
  for i = 1, n do
    local back = {}
    for _, job in ipairs(pending(h(i), b)) do back[#back + 1] = job[2] end
    pushBack(q(i), back)
    redis.call("HDEL", h(i), b, "#a:" .. b)
  end
  redis.call("HSET", h(1), "#x:" .. b, 1)
end
a = a + 1
for _ = 1, tonumber(ARGV[a]) do
  redis.call("HDEL", h(tonumber(ARGV[a + 1])), ARGV[a + 2], "#a:" .. ARGV[a + 2])
  a = a + 2
end
a = a + 1
for _ = 1, tonumber(ARGV[a]) do
  local qi, b, size, k = tonumber(ARGV[a + 1]), ARGV[a + 2], tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local indexes = {}
  for j = 1, k do indexes[j] = tonumber(ARGV[a + 4 + j]) end
  mark(h(qi), b, indexes, 49, size)
  a = a + 4 + k
end
a = a + 1
for _ = 1, tonumber(ARGV[a]) do
  local qi, b, i, raw = tonumber(ARGV[a + 1]), ARGV[a + 2], tonumber(ARGV[a + 3]), ARGV[a + 4]
  local state = redis.call("HGET", h(qi), "#a:" .. b)
  local held = redis.call("HEXISTS", h(qi), b) == 1
  local c = state and string.byte(state, i + 1) or 48
  if held and c == 48 then
    mark(h(qi), b, {i}, 49)
  elseif (not held or c == 50) and redis.call("LPOS", q(qi), raw, "RANK", -1, "MAXLEN", 1000) then
    redis.call("LREM", q(qi), -1, raw)
  end
  a = a + 4
end
if redis.call("EXPIRE", KEYS[1], ARGV[2]) == 0 then return {-2} end
local reregistered = 0
if redis.call("HEXISTS", KEYS[2], h(1)) == 0 then
  reregistered = 1
  for i = 1, n do redis.call("HSET", KEYS[2], h(i), ARGV[1]) end
end
local started = tonumber(ARGV[6])
local startNow = tonumber(ARGV[5])
if started > 0 then
  for i = 1, n do redis.call("HSET", h(i), "#started", started) end
end
if count > 0 then
  if redis.call("HEXISTS", h(1), "#x:" .. batch) == 1 then return {-3} end
  -- The same request run twice (a resend after a lost reply) must not take
  -- a second batch under the same id, nor overwrite the first.
  for i = 1, n do
    if redis.call("HEXISTS", h(i), batch) == 1 then return {-3} end
  end
  for _, i in ipairs(order) do
    local jobs = redis.call("RPOP", q(i), count)
    if jobs then
      local kept = jobs
      for j = 1, #jobs do
        if string.find(jobs[j], "\\0", 1, true) then
          kept = {}
          for k = 1, #jobs do
            if string.find(jobs[k], "\\0", 1, true) then
              buryNul(KEYS[3], ARGV[10 + i], jobs[k], "nul-" .. batch .. "-" .. k, now)
            else
              kept[#kept + 1] = jobs[k]
            end
          end
          break
        end
      end
      if #kept == 0 then return {i, reregistered, adopted, 0, ""} end
      local blob = table.concat(kept, "\\0")
      redis.call("HSET", h(i), batch, blob)
      -- The first startNow start at once, up to the first recovered job (which writes its own start).
      local s = 0
      while s < math.min(startNow, #kept) and not string.find(kept[s + 1], RECOVERED_AT_END) do s = s + 1 end
      if s > 0 and tonumber(batch) * SPAN + s - 1 > started then
        for j = 1, n do redis.call("HSET", h(j), "#started", tonumber(batch) * SPAN + s - 1) end
      end
      return {i, reregistered, adopted, #kept, blob}
    end
  end
end
return {0, reregistered, adopted, 0, ""}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const u = Number(argv[9]);
    const n = (keys.length - 3 - u) / 3;
    const q = (i: number) => keys[2 + i];
    const h = (i: number) => keys[2 + n + i];
    const count = Math.min(Number(argv[2]), BATCH_SPAN);
    const batch = argv[3];
    const now = argv[8];
    let adopted = 0;
    const lq = Number(argv[6]);
    if (lq > 0) {
      const raw = redis.call("RPOP", keys[2 + 2 * n + lq]) as string | null;
      if (raw !== null) {
        if (raw.includes(SEPARATOR)) heldTwin.buryNul(redis, keys[2], argv[9 + lq], raw, `nul-${argv[7]}`, now);
        else redis.call("HSET", h(lq), argv[7], raw);
        adopted = 1;
      }
    }
    for (let j = 1; j <= u; j++) {
      if (redis.call("GET", keys[2 + 3 * n + j]) === argv[9 + n + j]) redis.call("DEL", keys[2 + 3 * n + j]);
    }
    let a = 10 + n + u;
    const order = argv.slice(a + 1, a + 1 + Number(argv[a])).map(Number);
    a += order.length + 1;
    for (let r = Number(argv[a]); r > 0; r--) {
      const b = argv[++a];
      for (let i = 1; i <= n; i++) {
        heldTwin.pushBack(redis, q(i), heldTwin.pending(redis, h(i), b).jobs.map(([, raw]) => raw));
        redis.call("HDEL", h(i), b, `#a:${b}`);
      }
      redis.call("HSET", h(1), `#x:${b}`, 1);
    }
    a++;
    for (let d = Number(argv[a]); d > 0; d--) {
      redis.call("HDEL", h(Number(argv[a + 1])), argv[a + 2], `#a:${argv[a + 2]}`);
      a += 2;
    }
    a++;
    for (let p = Number(argv[a]); p > 0; p--) {
      const qi = Number(argv[a + 1]), b = argv[a + 2], size = Number(argv[a + 3]), k = Number(argv[a + 4]);
      heldTwin.mark(redis, h(qi), b, argv.slice(a + 5, a + 5 + k).map(Number), "1", size);
      a += 4 + k;
    }
    a++;
    for (let m = Number(argv[a]); m > 0; m--) {
      const qi = Number(argv[a + 1]), b = argv[a + 2], i = Number(argv[a + 3]), raw = argv[a + 4];
      const state = redis.call("HGET", h(qi), `#a:${b}`) as string | null;
      const held = redis.call("HEXISTS", h(qi), b) === 1;
      const c = state?.[i] ?? "0";
      if (held && c === "0") heldTwin.mark(redis, h(qi), b, [i], "1");
      else if ((!held || c === "2") && redis.call("LPOS", q(qi), raw, "RANK", -1, "MAXLEN", 1000) !== null) {
        redis.call("LREM", q(qi), -1, raw);
      }
      a += 4;
    }
    if (redis.call("EXPIRE", keys[0], argv[1]) === 0) return [-2];
    let reregistered = 0;
    if (redis.call("HEXISTS", keys[1], h(1)) === 0) {
      reregistered = 1;
      for (let i = 1; i <= n; i++) redis.call("HSET", keys[1], h(i), argv[0]);
    }
    const started = Number(argv[5]);
    const startNow = Number(argv[4]);
    if (started > 0) { for (let i = 1; i <= n; i++) redis.call("HSET", h(i), "#started", started); }
    if (count > 0) {
      if (redis.call("HEXISTS", h(1), `#x:${batch}`) === 1) return [-3];
      for (let i = 1; i <= n; i++) if (redis.call("HEXISTS", h(i), batch) === 1) return [-3];
      for (const i of order) {
        const jobs = redis.call("RPOP", q(i), count) as string[] | null;
        if (!jobs || jobs.length === 0) continue;
        const kept = jobs.filter((raw, k) => {
          if (!raw.includes(SEPARATOR)) return true;
          heldTwin.buryNul(redis, keys[2], argv[9 + i], raw, `nul-${batch}-${k + 1}`, now);
          return false;
        });
        if (kept.length === 0) return [i, reregistered, adopted, 0, ""];
        const blob = kept.join(SEPARATOR);
        redis.call("HSET", h(i), batch, blob);
        const s = startingNow(kept, startNow);
        if (s > 0 && Number(batch) * BATCH_SPAN + s - 1 > started) {
          for (let j = 1; j <= n; j++) redis.call("HSET", h(j), "#started", Number(batch) * BATCH_SPAN + s - 1);
        }
        return [i, reregistered, adopted, kept.length, blob];
      }
    }
    return [0, reregistered, adopted, 0, ""];
  },
  decode(reply: RedisReply): FetchResult {
    const arr = reply as (string | number)[];
    const head = Number(arr[0]);
    if (head < 0) {
      return {
        alive: head !== -2,
        queueIndex: -1,
        jobs: [],
        reregistered: false,
        adopted: false,
        replayed: head === -3,
      };
    }
    const count = Number(arr[3]);
    return {
      alive: true,
      queueIndex: head - 1,
      jobs: count > 0 ? String(arr[4]).split(SEPARATOR) : [],
      reregistered: Number(arr[1]) === 1,
      adopted: Number(arr[2]) === 1,
      replayed: false,
    };
  },
});

/**
 * Basic fetch (Sidekiq OSS): pop up to `count` jobs from the first non-empty
 * queue in the order given. A crash mid-job loses the job.
 *
 * KEYS: queue lists in fetch order. ARGV: count.
 * Reply: [queue index (1-based, 0 if none), ...jobs].
 */
export const POP = defineScript<{ queueIndex: number; jobs: string[] }>({
  name: "pop",
  keys: ["queue:<q1>..<qn> in fetch order"],
  argv: ["count"],
  lua: `
for i = 1, #KEYS do
  local jobs = redis.call("RPOP", KEYS[i], ARGV[1])
  if jobs then
    table.insert(jobs, 1, i)
    return jobs
  end
end
return {0}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    for (let i = 0; i < keys.length; i++) {
      const jobs = redis.call("RPOP", keys[i], argv[0]) as string[] | null;
      if (jobs && jobs.length) return [i + 1, ...jobs];
    }
    return [0];
  },
  decode(reply: RedisReply): { queueIndex: number; jobs: string[] } {
    const arr = reply as (string | number)[];
    return { queueIndex: Number(arr[0]) - 1, jobs: arr.slice(1) as string[] };
  },
});

/**
 * Deletes each key that still holds its value (basic fetch has no fetch call
 * to carry lock releases, so it sends them on their own).
 *
 * KEYS: keys to release. ARGV: the value each must still hold.
 * Reply: how many were deleted.
 */
export const RELEASE_KEYS = defineScript<number>({
  name: "releaseKeys",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["...keys to release"],
  argv: ["...values they must still hold"],
  lua: `
local n = 0
for i = 1, #KEYS do
  if redis.call("GET", KEYS[i]) == ARGV[i] then n = n + redis.call("DEL", KEYS[i]) end
end
return n
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    let n = 0;
    keys.forEach((key, i) => {
      if (redis.call("GET", key) === argv[i]) n += redis.call("DEL", key) as number;
    });
    return n;
  },
  decode: (reply) => Number(reply),
});
