/**
 * The reliable-push mark: a write guard (see `write_guard.ts`) that records,
 * in the same atomic step as the write, that this client wrote a jid. A push
 * whose reply was lost is kept in the client's buffer and sent again; the
 * resend finds the mark and writes nothing, whether the first copy is still
 * queued, is running, or already ran and was acknowledged (it is then
 * nowhere else in Redis). Marks are scored by the client's push sequence
 * and trimmed below the oldest push the client has not seen confirmed, so
 * the set holds only the pushes in flight or buffered, however long an
 * outage lasts.
 *
 * @module
 */
import type { ScriptRedis } from "./transport/script.ts";
import { GUARD_STATUS, type GuardCheck, type GuardedJob, type GuardFragment } from "./write_guard.ts";

const { pushed: PUSHED, already: ALREADY } = GUARD_STATUS;

/**
 * The guard. Keys per job: the client's marks. Args per job: the job's push
 * sequence, the lowest sequence still unconfirmed (marks below it are
 * dropped; `""` for every job of a write but its first, so the trim is
 * once per write), and the marks' lifetime in milliseconds (renewed by
 * every write, so they go when the client does).
 */
export const PUSHED_MARK_GUARD: GuardFragment = {
  name: "reliable",
  keys: 1,
  args: 3,
  lua: `
local function reliable_check(j)
  if redis.call("ZSCORE", j.keys[1], j.jid) then return ALREADY end
  return PUSHED
end
local function reliable_apply(j, status)
  redis.call("ZADD", j.keys[1], j.args[1], j.jid)
  if j.args[2] ~= "" then
    redis.call("ZREMRANGEBYSCORE", j.keys[1], "-inf", "(" .. j.args[2])
    redis.call("PEXPIRE", j.keys[1], j.args[3])
  end
end
`,
  twin: {
    check(redis: ScriptRedis, j: GuardedJob): GuardCheck {
      return redis.call("ZSCORE", j.keys[0], j.jid) === null ? [PUSHED] : [ALREADY];
    },
    apply(redis: ScriptRedis, j: GuardedJob): void {
      redis.call("ZADD", j.keys[0], j.args[0], j.jid);
      if (j.args[1] === "") return;
      redis.call("ZREMRANGEBYSCORE", j.keys[0], "-inf", `(${j.args[1]}`);
      redis.call("PEXPIRE", j.keys[0], j.args[2]);
    },
  },
};
