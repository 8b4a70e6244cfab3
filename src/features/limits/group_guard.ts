/**
 * The grouped push: a write guard (see `write_guard.ts`) that puts a job
 * pushed with `{ group }` on its group's list instead of its queue, in the
 * same atomic step as the push, and marks the group ready (unless paused).
 * The mover (`group_move_script.ts`) feeds the queue from the ready groups
 * in turn. Only jobs pushed to run now are grouped: a scheduled one joins
 * its queue directly when it comes due.
 *
 * @module
 */
import type { ScriptRedis } from "../../transport/script.ts";
import { holds, refusal } from "../../scripts/key_types.ts";
import { GUARD_STATUS, type GuardCheck, type GuardedJob, type GuardFragment } from "../../write_guard.ts";

const { pushed: PUSHED } = GUARD_STATUS;

/**
 * The group guard. Keys per job: the group's list, the queue's ready
 * groups, the queue's paused groups, the registry of grouped queues. Args
 * per job: the group's name.
 *
 * Check (reads only): the key types, so a key of another type refuses the
 * push before anything is written. Apply (once the plain write put the job
 * at the head of its queue): the job moves from there to its group's list,
 * and the group joins the ready set behind every group already there.
 */
export const GROUP_GUARD: GuardFragment = {
  name: "grouped",
  keys: 4,
  args: 1,
  lua: `
local function grouped_check(j)
  if j.score ~= "" then return PUSHED end
  local kinds = {"list", "zset", "set", "set"}
  for i = 1, 4 do
    local t = redis.call("TYPE", j.keys[i])
    t = type(t) == "table" and t.ok or t
    if t ~= kinds[i] and t ~= "none" then
      return error("WRONGTYPE " .. j.keys[i] .. " holds a value that is not a " .. kinds[i] .. ": nothing was written")
    end
  end
  return PUSHED
end
local function grouped_apply(j, status)
  if j.score ~= "" then return end
  if redis.call("LINDEX", j.qkey, 0) ~= j.payload then return end
  redis.call("LPOP", j.qkey)
  redis.call("LPUSH", j.keys[1], j.payload)
  redis.call("SADD", j.keys[4], j.queue)
  if redis.call("SISMEMBER", j.keys[3], j.args[1]) == 1 then return end
  local last = redis.call("ZRANGE", j.keys[2], -1, -1, "WITHSCORES")
  redis.call("ZADD", j.keys[2], "NX", (tonumber(last[2]) or 0) + 1, j.args[1])
end
`,
  twin: {
    check(redis: ScriptRedis, j: GuardedJob): GuardCheck {
      if (j.score !== "") return [PUSHED];
      const kinds = ["list", "zset", "set", "set"];
      for (let i = 0; i < 4; i++) if (!holds(redis, j.keys[i], kinds[i])) throw refusal(j.keys[i], kinds[i]);
      return [PUSHED];
    },
    apply(redis: ScriptRedis, j: GuardedJob): void {
      if (j.score !== "") return;
      if (redis.call("LINDEX", j.qkey, 0) !== j.payload) return;
      redis.call("LPOP", j.qkey);
      redis.call("LPUSH", j.keys[0], j.payload);
      redis.call("SADD", j.keys[3], j.queue);
      if (redis.call("SISMEMBER", j.keys[2], j.args[0]) === 1) return;
      const last = redis.call("ZRANGE", j.keys[1], -1, -1, "WITHSCORES") as string[];
      redis.call("ZADD", j.keys[1], "NX", (Number(last[1]) || 0) + 1, j.args[0]);
    },
  },
};
