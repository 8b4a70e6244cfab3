/**
 * The batch write guard (see `write_guard.ts`): a job pushed into a batch
 * is registered in the batch in the same atomic step as its write, composed
 * with any other guard the push carries (unique jobs' lock): no job of a
 * batch is ever queued unregistered, or registered without being queued.
 *
 * @module
 */
import type { ScriptRedis } from "../../transport/script.ts";
import { GUARD_STATUS, type GuardCheck, type GuardedJob, type GuardFragment } from "../../write_guard.ts";
import { UNIT } from "./counting.ts";

const { pushed: PUSHED, duplicate: DUPLICATE, already: ALREADY } = GUARD_STATUS;

/**
 * Keys per job: the batch's hash and members. Args per job: the holder
 * (the member whose registration covers this push: an open registration
 * `o:<id>`, or the running job that adds to its own batch) and the job's
 * flow policy (`""`, `i`, `c`).
 *
 * Check (reads only; the holder's state is read once per call): a holder
 * that has finished (a re-run of a job whose outcome was already recorded; a
 * registration sealed) must not add to a batch that may be done: a
 * duplicate, nothing written. A jid registered already is this same push
 * resent: nothing more. Apply: the job waits in the batch (`total` grows by
 * one, `count` by a member not run and not done).
 */
export const BATCH_GUARD: GuardFragment = {
  name: "batch",
  keys: 2,
  args: 2,
  lua: `
-- The holder's state, read once per call: a push's jobs share their holder, and nothing in a push changes it.
local batch_holders = {}
local function batch_check(j)
  local held = j.keys[2] .. "\0" .. j.args[1]
  local s = batch_holders[held]
  if s == nil then
    s = redis.call("HGET", j.keys[2], j.args[1]) or false
    batch_holders[held] = s
  end
  if not s then return DUPLICATE end
  local d = string.sub(s, 1, 1)
  if d ~= "0" and d ~= "1" then return DUPLICATE end
  if redis.call("HEXISTS", j.keys[2], j.jid) == 1 then return ALREADY end
  return PUSHED
end
local function batch_apply(j, status)
  if redis.call("HSETNX", j.keys[2], j.jid, "0" .. j.args[2]) == 1 then
    redis.call("HINCRBY", j.keys[1], "total", 1)
    redis.call("HINCRBY", j.keys[1], "count", ${UNIT + 1})
  end
end
`,
  twin: {
    check(redis: ScriptRedis, j: GuardedJob): GuardCheck {
      const s = redis.call("HGET", j.keys[1], j.args[0]) as string | null;
      if (s === null || (s[0] !== "0" && s[0] !== "1")) return [DUPLICATE];
      if (redis.call("HEXISTS", j.keys[1], j.jid) === 1) return [ALREADY];
      return [PUSHED];
    },
    apply(redis: ScriptRedis, j: GuardedJob): void {
      if (redis.call("HSETNX", j.keys[1], j.jid, "0" + j.args[1]) === 1) {
        redis.call("HINCRBY", j.keys[0], "total", 1);
        redis.call("HINCRBY", j.keys[0], "count", UNIT + 1);
      }
    },
  },
};
