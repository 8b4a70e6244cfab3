/**
 * The held hash: where reliable fetch keeps the jobs one capsule of one
 * process took from one queue until their outcome is durable.
 *
 * Redis time per job is what a whole fleet shares (issue: one Redis core is
 * the fleet's ceiling), so the layout is chosen by measured cost. Each fetch
 * stores its batch as ONE field: the raw jobs joined by NUL bytes (no JSON
 * payload can contain a raw NUL; one that does is buried on the way in).
 * Measured with callgrind on redis-server 7.0, per job at batches of 50:
 * moving into a list as Sidekiq Pro does ~7,200 instructions, one hash field
 * per job ~11,100, one field per batch ~6,700 (and the reply is one bulk
 * string instead of fifty). Acknowledging by `LREM` of the payload cost tens
 * of thousands; here a finished batch is one `HDEL`, and a batch still partly
 * running keeps a small state string.
 *
 * Fields:
 * - `<b>`: batch b's jobs, NUL-joined; job i of batch b has token `b * 1000 + i`.
 * - `#a:<b>`: batch b's state, one character per job: `0` held, `1` done,
 *   `2` put back on its queue. Absent means all held.
 * - `#started`: the highest token that started running here (jobs start in
 *   token order), which is what poison-pill counting looks at.
 * - `#x:<b>`: a tombstone: batch b's request was released after its reply
 *   was lost, so a late run of it takes nothing.
 *
 * @module
 */

import type { ScriptRedis } from "../transport/script.ts";

/** Jobs per batch at most: the token of job i of batch b is `b * BATCH_SPAN + i`. */
export const BATCH_SPAN = 1000;

/** The separator between the jobs of a batch. */
export const SEPARATOR = "\0";

/** Lua helpers every script that touches held hashes shares. */
export const HELD_LUA = `
local SPAN = ${BATCH_SPAN}
local function split(blob)
  local out, i = {}, 1
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
-- Batch b's jobs that are still held, as {index, raw} (index from 0), and
-- its state characters.
local function pending(held, b)
  local blob = redis.call("HGET", held, b)
  if not blob then return {}, nil end
  local jobs = split(blob)
  local state = redis.call("HGET", held, "#a:" .. b)
  local chars = state and {string.byte(state, 1, -1)} or {}
  local out = {}
  for i = 1, #jobs do
    if (chars[i] or 48) == 48 then out[#out + 1] = {i - 1, jobs[i]} end
  end
  return out, chars, #jobs
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
-- Raw jobs back to the pop end of a queue, keeping their order (oldest pops first).
local function pushBack(queue, raws)
  for i = #raws, 1, -1 do redis.call("RPUSH", queue, raws[i]) end
end
-- Marks jobs of batch b with a state character; drops the batch once nothing is held.
local function mark(held, b, indexes, char, n)
  if not n then
    local blob = redis.call("HGET", held, b)
    if not blob then return end
    n = #split(blob)
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
  redis.call("HDEL", held, b, "#a:" .. b)
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
  /** Batch b's jobs still held, as [index, raw], with its state and size. */
  pending(redis: ScriptRedis, held: string, b: string | number): { jobs: Array<[number, string]>; n: number } {
    const blob = redis.call("HGET", held, b) as string | null;
    if (blob === null) return { jobs: [], n: 0 };
    const raws = blob.split(SEPARATOR);
    const state = (redis.call("HGET", held, `#a:${b}`) as string | null) ?? "";
    const jobs: Array<[number, string]> = [];
    raws.forEach((raw, i) => (state[i] ?? "0") === "0" && jobs.push([i, raw]));
    return { jobs, n: raws.length };
  },
  /** Every batch id of a held hash, oldest first. */
  batches(redis: ScriptRedis, held: string): number[] {
    return (redis.call("HKEYS", held) as string[]).filter((f) => /^\d+$/.test(f)).map(Number).sort((a, b) => a - b);
  },
  /** Raw jobs back to the pop end of a queue, oldest popping first. */
  pushBack(redis: ScriptRedis, queue: string, raws: readonly string[]): void {
    for (let i = raws.length - 1; i >= 0; i--) redis.call("RPUSH", queue, raws[i]);
  },
  /** Marks jobs of batch b; drops the batch once nothing is held. */
  mark(redis: ScriptRedis, held: string, b: string | number, indexes: readonly number[], char: string, n?: number) {
    if (n === undefined) {
      const blob = redis.call("HGET", held, b) as string | null;
      if (blob === null) return;
      n = blob.split(SEPARATOR).length;
    } else if (redis.call("HEXISTS", held, b) === 0) return;
    const chars = ((redis.call("HGET", held, `#a:${b}`) as string | null) ?? "").padEnd(n, "0").split("");
    for (const i of indexes) if (chars[i] === "0") chars[i] = char;
    if (chars.includes("0")) redis.call("HSET", held, `#a:${b}`, chars.join(""));
    else redis.call("HDEL", held, b, `#a:${b}`);
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
