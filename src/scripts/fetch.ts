/**
 * The fetch script: acknowledge finished jobs and take the next batch, in one
 * round trip. This is why a busy worker costs well under one Redis command
 * per job; the held-hash layout ({@link HELD_LUA}) is why it costs little
 * Redis time, and why that time does not grow with the number of queues.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { BATCH_SPAN, HELD_LUA, heldTwin, QUEUES_FIELD, SEPARATOR } from "./held.ts";
import { holds, KEY_TYPES_LUA, refusal } from "./key_types.ts";
import { RECOVERED_AT_END_LUA, recoveredCount, startingNow } from "./recovered_mark.ts";
import { POP_FIRST_LUA, popFirstTwin } from "./pop_first.ts";

/** What a fetch returned. */
export interface FetchResult {
  /**
   * `false` when this process's entry has expired: other processes may have
   * recovered what it held, so it must beat (re-register) before fetching.
   * Acks were applied anyway; nothing was taken.
   */
  readonly alive: boolean;
  /** Index (0-based, into the queues named in the call) of the queue the jobs came from, or -1. */
  readonly queueIndex: number;
  /** Raw jobs, oldest first; job i is index i of the batch. */
  readonly jobs: string[];
  /** How many fields of the held hash the batch was stored in: acks that drop it name them all. */
  readonly pieces: number;
  /** Whether the held hash had lost its registration (recovered by another process) and was registered again. */
  readonly reregistered: boolean;
  /** Whether the landing job named in the call was found and adopted into the held hash. */
  readonly adopted: boolean;
  /**
   * The request had run before (a resend) or was released: it took nothing
   * now, and whatever its first run took is held under its batch id, unseen.
   */
  readonly replayed: boolean;
  /**
   * The held hash must be registered again (another process recovered it)
   * and the call sent the capsule's queue names as "": nothing was done;
   * call again with them.
   */
  readonly queuesWanted: boolean;
  /** Indexes (0-based, into the queues named) of queues that are paused: nothing was taken from them. */
  readonly paused: number[];
  /** Indexes (0-based, into the queues named) of queues whose key holds another type than a list: skipped. */
  readonly broken: number[];
  /**
   * Indexes (0-based, into the queues named) of the queues the take found
   * empty: every candidate before the one it took from, or all of them.
   */
  readonly empty: number[];
}

/**
 * Keys before the queues: the process hash, the held-key registry, `dead`,
 * the held hash, the set of paused queues, the landing list adopted from
 * (the held hash again when none). {@link FETCH}'s KEYS go on with the
 * queues named, then the keys to release.
 */
export const FETCH_FIXED_KEYS = 6;

/**
 * KEYS: the process hash, the held-key registry, `dead`, the held hash, the
 * set of paused queues, the landing list to adopt from (or the held hash
 * again), then n queue lists in the order to try them, then u keys to
 * release.
 * ARGV: identity, ttl, count (negative: take -count only if the landing
 * job was adopted), batch id, startNow, started mark, landing
 * queue (1..n, 0 = none), landing batch id, now (epoch seconds), u, the
 * queue keys' prefix (`queue:`), the capsule's queue names
 * (comma-joined; "" unless a [-4] reply asked for them), the u values the keys to release must still hold; then
 * r and r batch ids to release; d and d done batches (batch id, pieces); p
 * and p partial acks (batch id, batch size, pieces, k, k job indexes); m and
 * m (queue, batch id, job index, raw) acks of jobs that may have been
 * requeued. A batch's pieces are how many fields the fetch that took it
 * stored it in (the number of pieces its reply carried).
 *
 * In order: adopt the landing job as a batch of one (or, if that batch was
 * released already, put it back on its queue); release batches whose
 * request's reply was lost (their held jobs go back to their queues, and a
 * tombstone makes a late run of that request take nothing; such a call
 * names every queue of the capsule); acks; release keys that still hold
 * their value (locks middleware let go of: a compare-and-delete, so a lock
 * taken since by another job stays); refresh the process entry's TTL (a
 * missing entry means this process was presumed dead: reply -2 and take
 * nothing); re-register the held hash if another process recovered it;
 * record the started mark; take up to `count` jobs (none when `count` is
 * negative and no landing job was adopted: a call sent behind a blocking
 * pop that timed out or was aborted takes nothing) from the first non-empty
 * queue in the order named that is not paused, as one batch, and mark its
 * first `startNow` as started, up to the first recovered job (a recovered
 * job writes its own start, and a suspect may wait its turn).
 *
 * The take is one `LMPOP` over the candidates (Redis 7): the walk over empty
 * queues costs a key lookup each inside Redis, not a script call each. On a
 * server without `LMPOP`, or when a queue key holds another type, it walks
 * them one by one (a broken queue is skipped and reported). The caller
 * decides which queues to name (all of them, or those not found empty a
 * moment ago), so nothing here is per queue of the capsule.
 *
 * An ack of a job that is no longer held because it was put back (hard
 * shutdown, or recovery while this process stalled) takes the requeued copy
 * back if it is within the first 1,000 jobs at the queue's pop end, so a job
 * finishing in that window does not run twice. The scan is bounded: no
 * script here walks a whole queue.
 *
 * Faults of the keyspace do not lose jobs: a key to release that is not a
 * string is not a lock of ours and is left alone; jobs with a NUL byte are
 * buried in `dead` only if `dead` is a sorted set, or else put back where
 * they were and the call refused; a release whose queues are not all named,
 * or whose queue key holds another type, is refused before it writes.
 *
 * Reply: [-2] presumed dead, [-3] request released or already run, [-4]
 * the held hash must be registered again and the call did not name the
 * capsule's queues (sent as "" unless asked for): nothing was done, else
 * [queue (1..n, 0 if none), reregistered, adopted, paused queues, broken
 * queues, queues found empty (each 1-based, comma-joined), then the batch
 * as stored, piece by piece (its queue's name and its jobs, NUL-joined;
 * none if nothing was taken)].
 */
export const FETCH = defineScript<FetchResult>({
  name: "fetch",
  keys: [
    "<identity>",
    "edgekiq:inflight",
    "dead",
    "held",
    "edgekiq:paused",
    "landing|held",
    "...queue:<q> in the order to try",
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
    "queuePrefix",
    "capsuleQueues",
    "...values of the keys to release",
    "r",
    "...batches to release",
    "d",
    "...(batch, pieces)",
    "p",
    "...(batch, size, pieces, k, ...indexes)",
    "m",
    "...(queue, batch, index, raw)",
  ],
  lua: HELD_LUA + KEY_TYPES_LUA + POP_FIRST_LUA + `
local RECOVERED_AT_END = '${RECOVERED_AT_END_LUA}'
local u = tonumber(ARGV[10])
local n = #KEYS - ${FETCH_FIXED_KEYS} - u
local plen = #ARGV[11]
local held, dead, paused = KEYS[4], KEYS[3], KEYS[5]
local function q(i) return KEYS[${FETCH_FIXED_KEYS} + i] end
local function nameOf(i) return string.sub(KEYS[${FETCH_FIXED_KEYS} + i], plen + 1) end
local count = tonumber(ARGV[3])
local ifLanded = count < 0
count = math.min(math.abs(count), SPAN)
local batch = ARGV[4]
local now = ARGV[9]
-- The capsule's queue names are sent only when asked for: with 1,000 queues they are kilobytes a call, needed only
-- to register the held hash again. A call without them that finds it unregistered writes nothing and asks.
local registered = redis.call("HEXISTS", KEYS[2], held) == 1
if not registered and ARGV[12] == "" then return {-4} end
local adopted = 0
local landedSuspect = false
local lq = tonumber(ARGV[7])
if lq > 0 then
  local raw = redis.call("RPOP", KEYS[6])
  if raw and redis.call("HEXISTS", held, "#x:" .. ARGV[8]) == 1 then
    -- Its batch was released already (a call that ran late, after its reply was given up for lost): the job goes
    -- back to its queue, to be fetched again, never held under a batch nobody runs.
    if not holds(q(lq), "list") then
      redis.call("RPUSH", KEYS[6], raw)
      return refuse(q(lq), "list")
    end
    redis.call("RPUSH", q(lq), raw)
  elseif raw then
    if string.find(raw, "\\0", 1, true) then
      if not holds(dead, "zset") then
        redis.call("RPUSH", KEYS[6], raw)
        return refuse(dead, "zset")
      end
      buryNul(dead, nameOf(lq), raw, "nul-" .. ARGV[8], now)
    else
      redis.call("HSET", held, ARGV[8], nameOf(lq) .. "\\0" .. raw)
      landedSuspect = string.find(raw, RECOVERED_AT_END, -64) ~= nil
    end
    adopted = 1
  end
end
if ifLanded and adopted == 0 then count = 0 end
for j = 1, u do
  local key = KEYS[${FETCH_FIXED_KEYS} + n + j]
  if holds(key, "string") and redis.call("GET", key) == ARGV[12 + j] then redis.call("DEL", key) end
end
local a = 13 + u
local r = tonumber(ARGV[a])
if r > 0 then
  -- Every queue the released jobs go back to is checked before any moves.
  local index = queueIndex(${FETCH_FIXED_KEYS}, n, plen)
  local moves, fields = {}, {}
  for k = 1, r do
    local b = ARGV[a + k]
    local jobs, _, _, queue, pieces = pending(held, b)
    batchFields(b, pieces, fields)
    if #jobs > 0 then
      local i = index[queue]
      if not i then return redis.error_reply("ERR cannot release batch " .. b .. ": its queue is not named") end
      if not holds(q(i), "list") then return refuse(q(i), "list") end
      local back = {}
      for _, job in ipairs(jobs) do back[#back + 1] = job[2] end
      moves[#moves + 1] = {i, back}
    end
  end
  for _, move in ipairs(moves) do pushBack(q(move[1]), move[2]) end
  redis.call("HDEL", held, unpack(fields))
  for k = 1, r do redis.call("HSET", held, "#x:" .. ARGV[a + k], 1) end
end
a = a + r + 1
-- Finished batches leave in one HDEL per 1,000 fields or so (unpack has a stack limit).
local fields = {}
for _ = 1, tonumber(ARGV[a]) do
  batchFields(ARGV[a + 1], tonumber(ARGV[a + 2]), fields)
  if #fields >= 1000 then
    redis.call("HDEL", held, unpack(fields))
    fields = {}
  end
  a = a + 2
end
if #fields > 0 then redis.call("HDEL", held, unpack(fields)) end
a = a + 1
for _ = 1, tonumber(ARGV[a]) do
  local b, size, pieces, k = ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local indexes = {}
  for j = 1, k do indexes[j] = tonumber(ARGV[a + 4 + j]) end
  mark(held, b, indexes, 49, size, pieces)
  a = a + 4 + k
end
a = a + 1
for _ = 1, tonumber(ARGV[a]) do
  local qi, b, i, raw = tonumber(ARGV[a + 1]), ARGV[a + 2], tonumber(ARGV[a + 3]), ARGV[a + 4]
  local state = redis.call("HGET", held, "#a:" .. b)
  local isHeld = redis.call("HEXISTS", held, b) == 1
  local c = state and string.byte(state, i + 1) or 48
  if isHeld and c == 48 then
    mark(held, b, {i}, 49)
  elseif (not isHeld or c == 50) and redis.call("LPOS", q(qi), raw, "RANK", -1, "MAXLEN", 1000) then
    redis.call("LREM", q(qi), -1, raw)
  end
  a = a + 4
end
if redis.call("EXPIRE", KEYS[1], ARGV[2]) == 0 then return {-2} end
local reregistered = 0
if not registered then
  reregistered = 1
  redis.call("HSET", KEYS[2], held, ARGV[1])
  redis.call("HSET", held, "${QUEUES_FIELD}", ARGV[12])
end
local isPaused, pausedList = {}, {}
if redis.call("SCARD", paused) > 0 then
  local names = {}
  for _, name in ipairs(redis.call("SMEMBERS", paused)) do names[name] = true end
  for i = 1, n do
    if names[nameOf(i)] then
      isPaused[i] = true
      pausedList[#pausedList + 1] = i
    end
  end
end
local started = tonumber(ARGV[6])
local startNow = tonumber(ARGV[5])
-- Behind a wait, a recovered job that landed waits its turn as a suspect: what comes after it does not start at once.
if ifLanded and landedSuspect then startNow = 0 end
if started > 0 then redis.call("HSET", held, "#started", started) end
-- The batch goes back as the pieces stored (its queue's name first): a few
-- strings, not one reply element per job, are less work on both sides.
local function reply(i, pieces, broken, empty)
  local out = {i, reregistered, adopted, table.concat(pausedList, ","), table.concat(broken, ","),
    table.concat(empty, ",")}
  for _, piece in ipairs(pieces) do out[#out + 1] = piece end
  return out
end
if count <= 0 then return reply(0, {}, {}, {}) end
local seen = redis.call("HMGET", held, batch, "#x:" .. batch)
-- The same request run twice (a resend after a lost reply, or a late run of
-- one released since) must not take a second batch under the same id.
if seen[1] or seen[2] then return {-3} end
local candidates = {}
for i = 1, n do
  if not isPaused[i] then candidates[#candidates + 1] = i end
end
local keys, broken, empty = {}, {}, {}
for c, i in ipairs(candidates) do keys[c] = q(i) end
local c, jobs = popFirst(keys, count, broken, empty)
-- Indexes into the candidates, as indexes into the queues named.
for k, b in ipairs(broken) do broken[k] = candidates[b] end
for k, e in ipairs(empty) do empty[k] = candidates[e] end
if not jobs then return reply(0, {}, broken, empty) end
local i = candidates[c]
local kept = jobs
for j = 1, #jobs do
  if string.find(jobs[j], "\\0", 1, true) then
    if not holds(dead, "zset") then
      for k = #jobs, 1, -1 do redis.call("RPUSH", q(i), jobs[k]) end
      return refuse(dead, "zset")
    end
    kept = {}
    for k = 1, #jobs do
      if string.find(jobs[k], "\\0", 1, true) then
        buryNul(dead, nameOf(i), jobs[k], "nul-" .. batch .. "-" .. k, now)
      else
        kept[#kept + 1] = jobs[k]
      end
    end
    break
  end
end
if #kept == 0 then return reply(i, {}, broken, empty) end
-- The queue's name leads the batch: put at index 0, it costs no shift of the jobs in and out.
kept[0] = nameOf(i)
local pieces = storeBatch(held, batch, kept)
-- The first startNow start at once, up to the first recovered job (which
-- writes its own start). The mark is the payload's last field: only its
-- tail is searched, so a large payload costs no scan.
local s = 0
while s < math.min(startNow, #kept) and not string.find(kept[s + 1], RECOVERED_AT_END, -64) do s = s + 1 end
if s > 0 and tonumber(batch) * SPAN + s - 1 > started then
  redis.call("HSET", held, "#started", tonumber(batch) * SPAN + s - 1)
end
return reply(i, pieces, broken, empty)
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const F = FETCH_FIXED_KEYS;
    const u = Number(argv[9]);
    const n = keys.length - F - u;
    const plen = argv[10].length;
    const [, registry, dead, held, pausedKey, landing] = keys;
    const q = (i: number) => keys[F + i - 1];
    const nameOf = (i: number) => q(i).slice(plen);
    let count = Math.min(Math.abs(Number(argv[2])), BATCH_SPAN);
    const ifLanded = Number(argv[2]) < 0;
    const batch = argv[3];
    const now = argv[8];
    const registered = redis.call("HEXISTS", registry, held) === 1;
    if (!registered && argv[11] === "") return [-4];
    let adopted = 0;
    let landedSuspect = false;
    const lq = Number(argv[6]);
    if (lq > 0) {
      const raw = redis.call("RPOP", landing) as string | null;
      if (raw !== null && redis.call("HEXISTS", held, `#x:${argv[7]}`) === 1) {
        if (!holds(redis, q(lq), "list")) {
          redis.call("RPUSH", landing, raw);
          throw refusal(q(lq), "list");
        }
        redis.call("RPUSH", q(lq), raw);
      } else if (raw !== null) {
        if (raw.includes(SEPARATOR)) {
          if (!holds(redis, dead, "zset")) {
            redis.call("RPUSH", landing, raw);
            throw refusal(dead, "zset");
          }
          heldTwin.buryNul(redis, dead, nameOf(lq), raw, `nul-${argv[7]}`, now);
        } else {
          redis.call("HSET", held, argv[7], `${nameOf(lq)}${SEPARATOR}${raw}`);
          landedSuspect = recoveredCount(raw) !== undefined;
        }
        adopted = 1;
      }
    }
    if (ifLanded && adopted === 0) count = 0;
    for (let j = 1; j <= u; j++) {
      const key = keys[F + n + j - 1];
      if (holds(redis, key, "string") && redis.call("GET", key) === argv[11 + j]) redis.call("DEL", key);
    }
    let a = 12 + u;
    const r = Number(argv[a]);
    if (r > 0) {
      const index = heldTwin.queueIndex(keys.slice(F, F + n), plen);
      const moves: Array<[number, string[]]> = [];
      const fields: string[] = [];
      for (let k = 1; k <= r; k++) {
        const { jobs, queue, pieces } = heldTwin.pending(redis, held, argv[a + k]);
        fields.push(...heldTwin.batchFields(argv[a + k], pieces));
        if (jobs.length === 0) continue;
        const i = index.get(queue!);
        if (i === undefined) throw new Error(`ERR cannot release batch ${argv[a + k]}: its queue is not named`);
        if (!holds(redis, q(i), "list")) throw refusal(q(i), "list");
        moves.push([i, jobs.map(([, raw]) => raw)]);
      }
      for (const [i, back] of moves) heldTwin.pushBack(redis, q(i), back);
      redis.call("HDEL", held, ...fields);
      for (let k = 1; k <= r; k++) redis.call("HSET", held, `#x:${argv[a + k]}`, 1);
    }
    a += r + 1;
    const done: string[] = [];
    for (let d = Number(argv[a]); d > 0; d--, a += 2) {
      done.push(...heldTwin.batchFields(argv[a + 1], Number(argv[a + 2])));
    }
    if (done.length > 0) redis.call("HDEL", held, ...done);
    a++;
    for (let p = Number(argv[a]); p > 0; p--) {
      const b = argv[a + 1], size = { n: Number(argv[a + 2]), pieces: Number(argv[a + 3]) }, k = Number(argv[a + 4]);
      heldTwin.mark(redis, held, b, argv.slice(a + 5, a + 5 + k).map(Number), "1", size);
      a += 4 + k;
    }
    a++;
    for (let m = Number(argv[a]); m > 0; m--) {
      const qi = Number(argv[a + 1]), b = argv[a + 2], i = Number(argv[a + 3]), raw = argv[a + 4];
      const state = redis.call("HGET", held, `#a:${b}`) as string | null;
      const isHeld = redis.call("HEXISTS", held, b) === 1;
      const c = state?.[i] ?? "0";
      if (isHeld && c === "0") heldTwin.mark(redis, held, b, [i], "1");
      else if ((!isHeld || c === "2") && redis.call("LPOS", q(qi), raw, "RANK", -1, "MAXLEN", 1000) !== null) {
        redis.call("LREM", q(qi), -1, raw);
      }
      a += 4;
    }
    if (redis.call("EXPIRE", keys[0], argv[1]) === 0) return [-2];
    let reregistered = 0;
    if (!registered) {
      reregistered = 1;
      redis.call("HSET", registry, held, argv[0]);
      redis.call("HSET", held, QUEUES_FIELD, argv[11]);
    }
    const paused: number[] = [];
    if (Number(redis.call("SCARD", pausedKey)) > 0) {
      const names = new Set(redis.call("SMEMBERS", pausedKey) as string[]);
      for (let i = 1; i <= n; i++) if (names.has(nameOf(i))) paused.push(i);
    }
    const started = Number(argv[5]);
    const startNow = ifLanded && landedSuspect ? 0 : Number(argv[4]);
    if (started > 0) redis.call("HSET", held, "#started", started);
    const broken: number[] = [];
    const empty: number[] = [];
    const reply = (i: number, pieces: string[]): RedisReply => [
      i,
      reregistered,
      adopted,
      paused.join(","),
      broken.join(","),
      empty.join(","),
      ...pieces,
    ];
    if (count <= 0) return reply(0, []);
    const [seen, tombstone] = redis.call("HMGET", held, batch, `#x:${batch}`) as (string | null)[];
    if (seen !== null || tombstone !== null) return [-3];
    const candidates = Array.from({ length: n }, (_, k) => k + 1).filter((i) => !paused.includes(i));
    const found = { broken: [] as number[], empty: [] as number[] };
    const [c, jobs] = popFirstTwin(redis, candidates.map(q), count, found);
    broken.push(...found.broken.map((b) => candidates[b - 1]));
    empty.push(...found.empty.map((e) => candidates[e - 1]));
    if (jobs) {
      const i = candidates[c - 1];
      if (jobs.some((raw) => raw.includes(SEPARATOR)) && !holds(redis, dead, "zset")) {
        for (let k = jobs.length - 1; k >= 0; k--) redis.call("RPUSH", q(i), jobs[k]);
        throw refusal(dead, "zset");
      }
      const kept = jobs.filter((raw, k) => {
        if (!raw.includes(SEPARATOR)) return true;
        heldTwin.buryNul(redis, dead, nameOf(i), raw, `nul-${batch}-${k + 1}`, now);
        return false;
      });
      if (kept.length === 0) return reply(i, []);
      const pieces = heldTwin.storeBatch(redis, held, batch, [nameOf(i), ...kept]);
      const s = startingNow(kept, startNow);
      if (s > 0 && Number(batch) * BATCH_SPAN + s - 1 > started) {
        redis.call("HSET", held, "#started", Number(batch) * BATCH_SPAN + s - 1);
      }
      return reply(i, pieces);
    }
    return reply(0, []);
  },
  decode(reply: RedisReply): FetchResult {
    const arr = reply as (string | number)[];
    const head = Number(arr[0]);
    if (head < 0) {
      return {
        alive: head !== -2,
        queueIndex: -1,
        jobs: [],
        pieces: 0,
        reregistered: false,
        adopted: false,
        replayed: head === -3,
        queuesWanted: head === -4,
        paused: [],
        broken: [],
        empty: [],
      };
    }
    return {
      alive: true,
      queueIndex: head - 1,
      // The pieces as stored: the queue's name, then the jobs.
      jobs: arr.length > 6 ? arr.slice(6).flatMap((piece) => String(piece).split(SEPARATOR)).slice(1) : [],
      pieces: arr.length - 6,
      reregistered: Number(arr[1]) === 1,
      adopted: Number(arr[2]) === 1,
      replayed: false,
      queuesWanted: false,
      paused: queueIndexes(arr[3]),
      broken: queueIndexes(arr[4]),
      empty: queueIndexes(arr[5]),
    };
  },
});

/** Queue indexes (1-based, comma-joined) as 0-based numbers. */
function queueIndexes(text: unknown): number[] {
  return typeof text === "string" && text !== "" ? text.split(",").map((i) => Number(i) - 1) : [];
}

/** What a basic fetch popped. */
export interface PopResult {
  /** Index (0-based, into the fetch order) of the queue the jobs came from, or -1. */
  readonly queueIndex: number;
  readonly jobs: string[];
  /** Indexes (0-based, into the fetch order) of the queues that are paused. */
  readonly paused: number[];
  /** Indexes (0-based, into the fetch order) of queues whose key holds another type than a list: skipped. */
  readonly broken: number[];
  /** Indexes (0-based, into the fetch order) of the queues found empty: every one before the one taken from, or all. */
  readonly empty: number[];
}

/**
 * Basic fetch (Sidekiq OSS): pop up to `count` jobs (at most 1 MiB, judged
 * by the first) from the first non-empty queue in the order given that is
 * not paused. A crash mid-job loses the job.
 *
 * KEYS: queue lists in fetch order, then the set of paused queues.
 * ARGV: count, then the queue names in fetch order.
 * Reply: [queue index (1-based, 0 if none), paused indexes, broken indexes,
 * empty indexes (each comma-joined), ...jobs].
 */
export const POP = defineScript<PopResult>({
  name: "pop",
  keys: ["queue:<q1>..<qn> in fetch order", "edgekiq:paused"],
  argv: ["count", "...queue names in fetch order"],
  lua: POP_FIRST_LUA + `
local n = #KEYS - 1
local paused, pausedList = {}, {}
if redis.call("SCARD", KEYS[#KEYS]) > 0 then
  for i = 1, n do
    if redis.call("SISMEMBER", KEYS[#KEYS], ARGV[1 + i]) == 1 then
      paused[i] = true
      pausedList[#pausedList + 1] = i
    end
  end
end
local keys, index, broken = {}, {}, {}
for i = 1, n do
  if not paused[i] then
    keys[#keys + 1] = KEYS[i]
    index[#keys] = i
  end
end
local empty = {}
local c, jobs = popFirst(keys, tonumber(ARGV[1]), broken, empty)
for k, b in ipairs(broken) do broken[k] = index[b] end
for k, e in ipairs(empty) do empty[k] = index[e] end
local out = {jobs and index[c] or 0, table.concat(pausedList, ","), table.concat(broken, ","), table.concat(empty, ",")}
for _, raw in ipairs(jobs or {}) do out[#out + 1] = raw end
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const n = keys.length - 1;
    const paused: number[] = [];
    if (Number(redis.call("SCARD", keys[n])) > 0) {
      for (let i = 1; i <= n; i++) if (redis.call("SISMEMBER", keys[n], argv[i]) === 1) paused.push(i);
    }
    const index = Array.from({ length: n }, (_, k) => k + 1).filter((i) => !paused.includes(i));
    const found = { broken: [] as number[], empty: [] as number[] };
    const [c, jobs] = popFirstTwin(redis, index.map((i) => keys[i - 1]), Number(argv[0]), found);
    return [
      jobs ? index[c - 1] : 0,
      paused.join(","),
      found.broken.map((b) => index[b - 1]).join(","),
      found.empty.map((e) => index[e - 1]).join(","),
      ...(jobs ?? []),
    ];
  },
  decode(reply: RedisReply): PopResult {
    const arr = reply as (string | number)[];
    return {
      queueIndex: Number(arr[0]) - 1,
      paused: queueIndexes(arr[1]),
      broken: queueIndexes(arr[2]),
      empty: queueIndexes(arr[3]),
      jobs: arr.slice(4) as string[],
    };
  },
});
