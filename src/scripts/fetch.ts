/**
 * The fetch script: acknowledge finished jobs and take the next batch, in one
 * round trip. This is why a busy worker costs well under one Redis command
 * per job.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";

/** What a fetch returned: the index (0-based) of the queue the jobs came from, and the raw jobs. */
export interface FetchResult {
  /** Index into the queue keys passed, or -1 when nothing was taken. */
  readonly queueIndex: number;
  /** Raw job strings, oldest first. */
  readonly jobs: string[];
}

/**
 * KEYS: queue lists q1..qn in fetch order, then (reliable fetch only) the
 * process's private lists p1..pn for the same queues.
 * ARGV: count to take, ack count a, then a pairs of (queue index 1..n, raw job).
 *
 * Acks remove a job from its private list, searching from the oldest end
 * (LREM -1), where finished jobs usually are. If it is not there, hard shutdown
 * already put it back on its queue: remove that copy too, so a job finishing
 * in that window (seed 004's race) does not run twice.
 */
export const FETCH = defineScript<FetchResult>({
  name: "fetch",
  keys: ["queue:<q1>..queue:<qn>", "private list of q1..qn (reliable only)"],
  argv: ["count", "ackCount", "...(queueIndex, rawJob) pairs"],
  lua: `
local count = tonumber(ARGV[1])
local acks = tonumber(ARGV[2])
local reliable = tonumber(ARGV[3 + acks * 2]) == 1
local n = #KEYS
if reliable then n = n / 2 end
for i = 1, acks do
  local qi = tonumber(ARGV[1 + i * 2])
  local raw = ARGV[2 + i * 2]
  if redis.call("LREM", KEYS[n + qi], -1, raw) == 0 then
    redis.call("LREM", KEYS[qi], -1, raw)
  end
end
if count > 0 then
  for i = 1, n do
    local jobs = redis.call("RPOP", KEYS[i], count)
    if jobs then
      if reliable then
        for j = 1, #jobs, 1000 do
          redis.call("LPUSH", KEYS[n + i], unpack(jobs, j, math.min(j + 999, #jobs)))
        end
      end
      table.insert(jobs, 1, i - 1)
      return jobs
    end
  end
end
return {}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const count = Number(argv[0]);
    const acks = Number(argv[1]);
    const reliable = Number(argv[2 + acks * 2]) === 1;
    const n = reliable ? keys.length / 2 : keys.length;
    for (let i = 1; i <= acks; i++) {
      const qi = Number(argv[i * 2]) - 1;
      const raw = argv[i * 2 + 1];
      if (redis.call("LREM", keys[n + qi], -1, raw) === 0) redis.call("LREM", keys[qi], -1, raw);
    }
    if (count > 0) {
      for (let i = 0; i < n; i++) {
        const jobs = redis.call("RPOP", keys[i], count) as string[] | null;
        if (jobs && jobs.length) {
          if (reliable) redis.call("LPUSH", keys[n + i], ...jobs);
          return [i, ...jobs];
        }
      }
    }
    return [];
  },
  decode(reply: RedisReply): FetchResult {
    const arr = reply as (string | number)[];
    if (!arr || arr.length === 0) return { queueIndex: -1, jobs: [] };
    return { queueIndex: Number(arr[0]), jobs: arr.slice(1) as string[] };
  },
});
