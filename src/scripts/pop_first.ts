/**
 * Taking a batch from the first non-empty of several queues, as the fetch
 * scripts of both strategies do. One `LMPOP` (Redis 7) finds the queue: the
 * walk over empty ones costs a key lookup each inside Redis, not a script
 * call each. On a server without `LMPOP`, or when a queue key holds another
 * type, it walks them one by one (a broken queue is skipped and reported).
 * The first job popped sizes the batch: at most {@link FETCH_BYTES} of jobs
 * like it, one at least, since a script moving large jobs holds Redis while
 * it runs.
 *
 * @module
 */
import type { ScriptRedis } from "../transport/script.ts";

/**
 * The most bytes of jobs one fetch moves, judged by its first job: a batch
 * of thirty 1 MB jobs held every other client of Redis for 380 ms; at 1 MiB
 * a fetch holds it for a few milliseconds, and a job over 1 MiB comes alone.
 */
export const FETCH_BYTES = 1 << 20;

/**
 * Lua: `popFirst(keys, count, broken, empty)` pops up to `count` jobs from
 * the first non-empty list of `keys` (in order) and answers its index in
 * `keys` and the jobs, oldest first (or 0, nil). It appends to `broken` the
 * indexes of keys holding another type, and to `empty` those found empty.
 */
export const POP_FIRST_LUA = `
local function popFirst(keys, count, broken, empty)
  local function walk(from)
    for c = from, #keys do
      local jobs = redis.pcall("RPOP", keys[c], 1)
      if type(jobs) == "table" and jobs.err then
        broken[#broken + 1] = c
      elseif jobs then
        return c, jobs
      else
        empty[#empty + 1] = c
      end
    end
    return 0, nil
  end
  local function first()
    if #keys < 2 then return walk(1) end
    -- 1,000 keys a call: unpack has a stack limit.
    for c0 = 1, #keys, 1000 do
      local c1 = math.min(c0 + 999, #keys)
      local args = {"LMPOP", c1 - c0 + 1}
      for c = c0, c1 do args[#args + 1] = keys[c] end
      args[#args + 1] = "RIGHT"
      args[#args + 1] = "COUNT"
      args[#args + 1] = 1
      local r = redis.pcall(unpack(args))
      if type(r) == "table" and r.err then return walk(c0) end
      for c = c0, c1 do
        if r and keys[c] == r[1] then return c, r[2] end
        empty[#empty + 1] = c
      end
    end
    return 0, nil
  end
  local c, jobs = first()
  if not jobs then return 0, nil end
  local want = math.min(count, math.max(1, math.floor(${FETCH_BYTES} / #jobs[1])))
  if want > 1 then
    local more = redis.call("RPOP", keys[c], want - 1)
    if more then
      -- The first goes in front of the rest: appending the rest one by one
      -- to the first's table cost ~100k Redis instructions per fetch
      -- (callgrind, a 50-job batch), a fifth of the whole call.
      table.insert(more, 1, jobs[1])
      jobs = more
    end
  end
  return c, jobs
end
`;

/**
 * The twin of `popFirst`: [index in `keys` (1-based, 0 if none), jobs].
 *
 * @example
 * ```ts
 * const [c, jobs] = popFirstTwin(redis, ["queue:a", "queue:b"], 10, broken, empty);
 * ```
 */
export function popFirstTwin(
  redis: ScriptRedis,
  keys: readonly string[],
  count: number,
  found: { broken: number[]; empty: number[] },
): [number, string[] | null] {
  for (let c = 1; c <= keys.length; c++) {
    const type = redis.call("TYPE", keys[c - 1]);
    if (type !== "list" && type !== "none") {
      found.broken.push(c);
      continue;
    }
    const jobs = redis.call("RPOP", keys[c - 1], 1) as string[] | null;
    if (!jobs || jobs.length === 0) {
      found.empty.push(c);
      continue;
    }
    const want = Math.min(count, Math.max(1, Math.floor(FETCH_BYTES / jobs[0].length)));
    if (want > 1) jobs.push(...((redis.call("RPOP", keys[c - 1], want - 1) as string[] | null) ?? []));
    return [c, jobs];
  }
  return [0, null];
}
