/**
 * The held hash: where reliable fetch keeps the jobs one capsule of one
 * process took, from any of its queues, until their outcome is durable.
 * One hash per capsule, not per queue, so a fetch's bookkeeping (is this
 * request a resend? which jobs started?) is one field whatever the number
 * of queues: a capsule of 1,000 queues pays no more per job than one of one
 * (docs/performance.md, "Queues").
 *
 * Redis time per job is what a whole fleet shares, so the layout is chosen
 * by measured cost (docs/performance.md, "Why held hashes"): each fetch
 * stores its batch as the raw jobs joined by NUL bytes (no JSON payload can
 * contain a raw NUL; one that does is buried on the way in), in pieces of
 * at most about {@link PIECE_BYTES}. A finished batch is one `HDEL`; a batch
 * still partly running keeps a small state string.
 *
 * Fields:
 * - `<b>`: batch b: the name of the queue it came from, then its jobs, all
 *   NUL-joined; job i of batch b (counted from 0 after the name) has token
 *   `b * 1000 + i`.
 * - `<b>:2`, `<b>:3`, ...: the rest of batch b's jobs, NUL-joined, when they
 *   do not fit one piece. Whoever drops a batch names its pieces (the ack
 *   book knows how many a fetch stored); a reader that does not know looks
 *   until one is missing (they are written and dropped together).
 * - `#a:<b>`: batch b's state, one character per job: `0` held, `1` done,
 *   `2` put back on its queue. Absent means all held.
 * - `#started`: the highest token that started running here (jobs start in
 *   token order), which is what poison-pill counting looks at.
 * - `#x:<b>`: a tombstone: batch b's request was released after its reply
 *   was lost, so a late run of it takes nothing.
 * - `#queues`: the capsule's queue names, comma-joined (queue names hold no
 *   comma): recovery names their lists and landing lists from it.
 *
 * A blocking fetch moves one job into the landing list of the queue it
 * waited on (`edgekiq:landing:<identity>|<capsule>|<queue>`); the next call
 * adopts it into the hash as a batch of one.
 *
 * @module
 */

import type { ScriptRedis } from "../transport/script.ts";

/** Jobs per batch at most: the token of job i of batch b is `b * BATCH_SPAN + i`. */
export const BATCH_SPAN = 1000;

/** The separator between the jobs of a batch. */
export const SEPARATOR = "\0";

/**
 * The most bytes of jobs one field of a held batch holds, judged by the
 * batch's first job. Redis's Lua hashes every byte of every string it makes
 * (its string table is hardened against collision floods), and
 * `table.concat` builds a string over its 8 KiB buffer out of intermediate
 * strings, each hashed too: one field of 140 jobs of 150 bytes cost about
 * 2,000 more Redis instructions per job than pieces that fit the buffer
 * (callgrind, docs/performance.md "Held batches in pieces"). The margin under 8,192
 * leaves room for the queue's name in the first piece.
 */
export const PIECE_BYTES = 7680;

const encoder = new TextEncoder();

/** The held hash's field naming the capsule's queues. */
export const QUEUES_FIELD = "#queues";

/** Lua helpers every script that touches held hashes shares. */
export const HELD_LUA = `
local SPAN = ${BATCH_SPAN}
local function split(blob, out)
  out = out or {}
  local i = 1
  while true do
    local j = string.find(blob, "\\0", i, true)
    if not j then
      out[#out + 1] = string.sub(blob, i)
      return out
    end
    out[#out + 1] = string.sub(blob, i, j - 1)
    i = j + 1
  end
end
-- Batch b as stored: {queue, job, job, ...} and how many pieces it is in (nil, 0 if it is not held).
local function loadBatch(held, b)
  local blob = redis.call("HGET", held, b)
  if not blob then return nil, 0 end
  local parts, k = split(blob), 1
  while true do
    local more = redis.call("HGET", held, b .. ":" .. (k + 1))
    if not more then return parts, k end
    split(more, parts)
    k = k + 1
  end
end
-- Stores jobs[0..n] (jobs[0] the queue's name) as batch b, in pieces of at
-- most PIECE bytes judged by jobs[1]: each is built inside table.concat's
-- buffer and hashed once. Answers the pieces. One piece, the common case,
-- skips the argument table (~300 instructions a job at 49 jobs, callgrind).
local function storeBatch(held, b, jobs)
  local n = #jobs
  local per = math.max(1, math.floor(${PIECE_BYTES} / (#jobs[1] + 1)))
  if n < per then
    local blob = table.concat(jobs, "\\0", 0, n)
    redis.call("HSET", held, b, blob)
    return {blob}
  end
  local args, pieces = {"HSET", held}, {}
  for from = 0, n, per do
    local piece = table.concat(jobs, "\\0", from, math.min(from + per - 1, n))
    pieces[#pieces + 1] = piece
    args[#args + 1] = #pieces == 1 and b or b .. ":" .. #pieces
    args[#args + 1] = piece
  end
  redis.call(unpack(args))
  return pieces
end
-- Appends to fields the names of batch b's fields (its k pieces and its state).
local function batchFields(b, k, fields)
  fields[#fields + 1] = b
  fields[#fields + 1] = "#a:" .. b
  for j = 2, k do fields[#fields + 1] = b .. ":" .. j end
  return fields
end
-- Batch b's jobs that are still held, as {index, raw} (index from 0), its
-- state characters, its size, the queue it came from and its piece count.
local function pending(held, b)
  local parts, k = loadBatch(held, b)
  if not parts then return {}, nil, 0, nil, 0 end
  local state = redis.call("HGET", held, "#a:" .. b)
  local chars = state and {string.byte(state, 1, -1)} or {}
  local out = {}
  for i = 2, #parts do
    if (chars[i - 1] or 48) == 48 then out[#out + 1] = {i - 2, parts[i]} end
  end
  return out, chars, #parts - 1, parts[1], k
end
-- Name -> index of the queue keys KEYS[first + 1 .. first + count], whose
-- names follow a prefix of plen bytes.
local function queueIndex(first, count, plen)
  local index = {}
  for i = 1, count do index[string.sub(KEYS[first + i], plen + 1)] = i end
  return index
end
-- Every batch id of a held hash, oldest first.
local function batches(held)
  local ids = {}
  for _, f in ipairs(redis.call("HKEYS", held)) do
    local b = tonumber(f)
    if b then ids[#ids + 1] = b end
  end
  table.sort(ids)
  return ids
end
-- Everything a held hash and its landing lists still hold, per queue: the
-- queue keys are KEYS[qfirst + 1 .. qfirst + n], their landing lists
-- KEYS[lfirst + 1 .. lfirst + n]. Per queue, oldest first: {raw, token} for
-- a held job, {raw, false} for a landed one. Reads only; answers nil and
-- the name of a batch's queue that is not among the keys.
local function gather(held, qfirst, lfirst, n, plen)
  local index = queueIndex(qfirst, n, plen)
  local out = {}
  for i = 1, n do out[i] = {} end
  for _, b in ipairs(batches(held)) do
    local jobs, _, _, queue = pending(held, b)
    if #jobs > 0 then
      local i = index[queue]
      if not i then return nil, queue end
      for _, job in ipairs(jobs) do table.insert(out[i], {job[2], b * SPAN + job[1]}) end
    end
  end
  for i = 1, n do
    local landed = redis.call("LRANGE", KEYS[lfirst + i], 0, -1)
    for j = #landed, 1, -1 do table.insert(out[i], {landed[j], false}) end
  end
  return out
end
-- Raw jobs back to the pop end of a queue, keeping their order (oldest pops first).
local function pushBack(queue, raws)
  for i = #raws, 1, -1 do redis.call("RPUSH", queue, raws[i]) end
end
-- Marks jobs of batch b with a state character; drops the batch once
-- nothing is held. n (its size) and k (its pieces) are read when not given.
local function mark(held, b, indexes, char, n, k)
  if not n then
    local parts
    parts, k = loadBatch(held, b)
    if not parts then return end
    n = #parts - 1
  elseif redis.call("HEXISTS", held, b) == 0 then
    return
  end
  local state = redis.call("HGET", held, "#a:" .. b)
  local chars = state and {string.byte(state, 1, -1)} or {}
  for i = 1, n do chars[i] = chars[i] or 48 end
  for _, i in ipairs(indexes) do
    if chars[i + 1] == 48 then chars[i + 1] = char end
  end
  for i = 1, n do
    if chars[i] == 48 then
      local parts = {}
      for k = 1, n, 4000 do parts[#parts + 1] = string.char(unpack(chars, k, math.min(k + 3999, n))) end
      redis.call("HSET", held, "#a:" .. b, table.concat(parts))
      return
    end
  end
  redis.call("HDEL", held, unpack(batchFields(b, k, {})))
end
-- A raw job that cannot live in a batch (it holds a NUL byte, so it is not
-- JSON) goes to the dead set inside a readable envelope.
local function buryNul(dead, queue, raw, jid, now)
  redis.call("ZADD", dead, now, '{"class":"Edgekiq::InvalidPayload","args":[' .. cjson.encode(raw) ..
    '],"queue":' .. cjson.encode(queue) .. ',"jid":"' .. jid ..
    '","error_class":"PayloadError","error_message":"Cannot read job as its payload holds a NUL byte: it is not JSON","failed_at":' ..
    now .. '}')
end
`;

/** The memory transport's twins of {@link HELD_LUA}'s helpers, over the same `redis.call`. */
export const heldTwin = {
  /** Batch b's jobs still held, as [index, raw], with its size and the queue it came from. */
  pending(
    redis: ScriptRedis,
    held: string,
    b: string | number,
  ): { jobs: Array<[number, string]>; n: number; queue: string | undefined; pieces: number } {
    const { parts, pieces } = heldTwin.loadBatch(redis, held, b);
    if (parts === null) return { jobs: [], n: 0, queue: undefined, pieces };
    const [queue, ...raws] = parts;
    const state = (redis.call("HGET", held, `#a:${b}`) as string | null) ?? "";
    const jobs: Array<[number, string]> = [];
    raws.forEach((raw, i) => (state[i] ?? "0") === "0" && jobs.push([i, raw]));
    return { jobs, n: raws.length, queue, pieces };
  },
  /** Twin of Lua `loadBatch`: batch b as stored (its queue's name, then its jobs) and its piece count. */
  loadBatch(redis: ScriptRedis, held: string, b: string | number): { parts: string[] | null; pieces: number } {
    const blob = redis.call("HGET", held, b) as string | null;
    if (blob === null) return { parts: null, pieces: 0 };
    const parts = blob.split(SEPARATOR);
    let pieces = 1;
    for (;;) {
      const more = redis.call("HGET", held, `${b}:${pieces + 1}`) as string | null;
      if (more === null) return { parts, pieces };
      parts.push(...more.split(SEPARATOR));
      pieces++;
    }
  },
  /** Twin of Lua `storeBatch`: `jobs[0]` is the queue's name; the pieces split where Lua's do (by UTF-8 bytes). */
  storeBatch(redis: ScriptRedis, held: string, b: string | number, jobs: readonly string[]): string[] {
    const per = Math.max(1, Math.floor(PIECE_BYTES / (encoder.encode(jobs[1]).length + 1)));
    const pieces: string[] = [];
    for (let from = 0; from < jobs.length; from += per) pieces.push(jobs.slice(from, from + per).join(SEPARATOR));
    redis.call("HSET", held, ...pieces.flatMap((piece, k) => [k === 0 ? String(b) : `${b}:${k + 1}`, piece]));
    return pieces;
  },
  /** Twin of Lua `batchFields`: batch b's fields (its pieces and its state). */
  batchFields(b: string | number, pieces: number): string[] {
    return [String(b), `#a:${b}`, ...Array.from({ length: pieces - 1 }, (_, j) => `${b}:${j + 2}`)];
  },
  /** Twin of Lua `queueIndex`: name -> index (from 1) of `queueKeys`, whose names follow `plen` characters. */
  queueIndex(queueKeys: readonly string[], plen: number): Map<string, number> {
    return new Map(queueKeys.map((key, i) => [key.slice(plen), i + 1]));
  },
  /** Every batch id of a held hash, oldest first. */
  batches(redis: ScriptRedis, held: string): number[] {
    return (redis.call("HKEYS", held) as string[]).filter((f) => /^\d+$/.test(f)).map(Number).sort((a, b) => a - b);
  },
  /**
   * Twin of Lua `gather`: per queue of `queueKeys`, what the held hash and
   * the landing lists hold, as [raw, token] (token `false` for a landed
   * job); or the name of a batch's queue not among them.
   */
  gather(
    redis: ScriptRedis,
    held: string,
    lists: { queueKeys: readonly string[]; landingKeys: readonly string[]; plen: number },
  ): Array<Array<[string, number | false]>> | { missing: string } {
    const index = heldTwin.queueIndex(lists.queueKeys, lists.plen);
    const out: Array<Array<[string, number | false]>> = lists.queueKeys.map(() => []);
    for (const b of heldTwin.batches(redis, held)) {
      const { jobs, queue } = heldTwin.pending(redis, held, b);
      if (jobs.length === 0) continue;
      const i = index.get(queue!);
      if (i === undefined) return { missing: queue! };
      for (const [j, raw] of jobs) out[i - 1].push([raw, b * BATCH_SPAN + j]);
    }
    lists.landingKeys.forEach((key, i) => {
      const landed = redis.call("LRANGE", key, 0, -1) as string[];
      for (let j = landed.length - 1; j >= 0; j--) out[i].push([landed[j], false]);
    });
    return out;
  },
  /** Raw jobs back to the pop end of a queue, oldest popping first. */
  pushBack(redis: ScriptRedis, queue: string, raws: readonly string[]): void {
    for (let i = raws.length - 1; i >= 0; i--) redis.call("RPUSH", queue, raws[i]);
  },
  /** Marks jobs of batch b; drops the batch once nothing is held. */
  mark(
    redis: ScriptRedis,
    held: string,
    b: string | number,
    indexes: readonly number[],
    char: string,
    size?: { n: number; pieces: number },
  ) {
    let n: number, pieces: number;
    if (size === undefined) {
      const stored = heldTwin.loadBatch(redis, held, b);
      if (stored.parts === null) return;
      [n, pieces] = [stored.parts.length - 1, stored.pieces];
    } else if (redis.call("HEXISTS", held, b) === 0) return;
    else ({ n, pieces } = size);
    const chars = ((redis.call("HGET", held, `#a:${b}`) as string | null) ?? "").padEnd(n, "0").split("");
    for (const i of indexes) if (chars[i] === "0") chars[i] = char;
    if (chars.includes("0")) redis.call("HSET", held, `#a:${b}`, chars.join(""));
    else redis.call("HDEL", held, ...heldTwin.batchFields(b, pieces));
  },
  /** A raw job holding a NUL byte to the dead set, in a readable envelope. */
  buryNul(redis: ScriptRedis, dead: string, queue: string, raw: string, jid: string, now: string): void {
    redis.call(
      "ZADD",
      dead,
      now,
      `{"class":"Edgekiq::InvalidPayload","args":[${JSON.stringify(raw)}],"queue":${
        JSON.stringify(queue)
      },"jid":"${jid}","error_class":"PayloadError","error_message":"Cannot read job as its payload holds a NUL byte: it is not JSON","failed_at":${now}}`,
    );
  },
};
