/**
 * The unique push: the write guard (see `write_guard.ts`) that takes each
 * job's lock in the same atomic step as its write, so two clients pushing
 * the same job at once write it once. Composed with any other guard a push
 * carries; a batch of a bulk push is one call.
 *
 * @module
 */
import type { ScriptRedis } from "../../transport/script.ts";
import { GUARD_STATUS, type GuardCheck, type GuardedJob, type GuardFragment } from "../../write_guard.ts";

const { pushed: PUSHED, duplicate: DUPLICATE, replaced: REPLACED, rescheduled: RESCHEDULED, already: ALREADY } =
  GUARD_STATUS;

/**
 * How far into a queue, from each end, `replace` and `reschedule` look for
 * the waiting copy: a copy deeper than this in a long backlog is not moved
 * (the push is a duplicate, and the copy runs where it waits). It bounds a
 * push's Redis time to about 20 µs whatever the backlog (docs/unique.md); a
 * copy waiting in `schedule` is found by score lookup at any depth.
 */
export const UNIQUE_SCAN_DEPTH = 500;

/** Where a conflicting push found the waiting copy. */
type Found = [where: number, raw: string];

/**
 * The unique guard. Keys per job: the lock, the copy of the waiting job's
 * payload, the registry of unique queues. Args per job: the lock's TTL
 * (ms) and the conflict mode.
 *
 * Check (reads only): a free lock lets the push go on. A lock held by this
 * same jid means this push already ran (a resend whose reply was lost):
 * nothing more is written. A lock held by another jid is a conflict: with
 * `skip`, a duplicate; with `replace` or `reschedule`, the holder is looked
 * up by its payload copy in `schedule` (ZSCORE) or within
 * {@link UNIQUE_SCAN_DEPTH} of either end of its queue (a negative index:
 * found from the pop end). Found, the guard writes: `replace` swaps the
 * holder for the new job (in place in the queue, or at the new run time);
 * `reschedule` moves the holder to the new run time. Not found (running,
 * retrying, deep in a backlog, or pushed with `skip`): a duplicate.
 *
 * Apply (once the job is written): take the lock for this jid (with
 * `replace`/`reschedule`, keep a copy of the payload beside it, same TTL)
 * and register the queue; after `reschedule`, extend the holder's lock.
 */
export const UNIQUE_GUARD: GuardFragment = {
  name: "unique",
  keys: 3,
  args: 2,
  lua: `
local function unique_check(j)
  local holder = redis.call("GET", j.keys[1])
  if not holder then return PUSHED end
  if holder == j.jid then return ALREADY end
  if j.args[2] == "skip" then return DUPLICATE, holder end
  local raw = redis.call("GET", j.keys[2])
  if not raw or not string.find(raw, '"jid":"' .. holder .. '"', 1, true) then return DUPLICATE, holder end
  local code = j.args[2] == "replace" and REPLACED or RESCHEDULED
  if redis.call("ZSCORE", j.schedule, raw) then return code, holder, {false, raw} end
  local where = redis.call("LPOS", j.qkey, raw, "MAXLEN", ${UNIQUE_SCAN_DEPTH})
  if not where then
    where = redis.call("LPOS", j.qkey, raw, "RANK", -1, "MAXLEN", ${UNIQUE_SCAN_DEPTH})
    if where then where = where - redis.call("LLEN", j.qkey) end
  end
  if not where then return DUPLICATE, holder end
  return code, holder, {where, raw}
end
local function unique_write(j, plan)
  local where, raw = plan[1], plan[2]
  local count = (where and where < 0) and -1 or 1
  -- The new write goes first and the holder's removal after: a push Redis
  -- refuses (a queue key of another type) must not leave the holder removed.
  if j.args[2] == "replace" then
    if not where then
      push(j, j.payload, j.score)
      redis.call("ZREM", j.schedule, raw)
    elseif j.score == "" then
      redis.call("LSET", j.qkey, where, j.payload)
    else
      push(j, j.payload, j.score)
      redis.call("LREM", j.qkey, count, raw)
    end
  elseif not where and j.score == "" then
    push(j, raw, "")
    redis.call("ZREM", j.schedule, raw)
  elseif not where then
    redis.call("ZADD", j.schedule, j.score, raw)
  elseif j.score ~= "" then
    push(j, raw, j.score)
    redis.call("LREM", j.qkey, count, raw)
  end
end
local function unique_apply(j, status)
  local ttl = j.args[1]
  if status == RESCHEDULED then
    redis.call("PEXPIRE", j.keys[1], ttl)
    redis.call("PEXPIRE", j.keys[2], ttl)
    return
  end
  redis.call("SET", j.keys[1], j.jid, "PX", ttl)
  if j.args[2] ~= "skip" then redis.call("SET", j.keys[2], j.payload, "PX", ttl) end
  redis.call("SADD", j.keys[3], j.queue)
end
`,
  twin: {
    check(redis: ScriptRedis, j: GuardedJob): GuardCheck {
      const holder = redis.call("GET", j.keys[0]) as string | null;
      if (holder === null) return [PUSHED];
      if (holder === j.jid) return [ALREADY];
      if (j.args[1] === "skip") return [DUPLICATE, holder];
      const raw = redis.call("GET", j.keys[1]) as string | null;
      if (raw === null || !raw.includes(`"jid":"${holder}"`)) return [DUPLICATE, holder];
      const code = j.args[1] === "replace" ? REPLACED : RESCHEDULED;
      if (redis.call("ZSCORE", j.schedule, raw) !== null) return [code, holder, [false, raw]];
      let where = redis.call("LPOS", j.qkey, raw, "MAXLEN", UNIQUE_SCAN_DEPTH) as number | null;
      if (where === null) {
        where = redis.call("LPOS", j.qkey, raw, "RANK", -1, "MAXLEN", UNIQUE_SCAN_DEPTH) as number | null;
        if (where !== null) where -= Number(redis.call("LLEN", j.qkey));
      }
      return where === null ? [DUPLICATE, holder] : [code, holder, [where, raw]];
    },
    write(redis: ScriptRedis, j: GuardedJob, plan: unknown, push: (raw: string, score: string) => void): void {
      const [where, raw] = plan as [number | false, string] | Found;
      const count = where !== false && where < 0 ? -1 : 1;
      if (j.args[1] === "replace") {
        if (where === false) {
          push(j.payload, j.score);
          redis.call("ZREM", j.schedule, raw);
        } else if (j.score === "") redis.call("LSET", j.qkey, where, j.payload);
        else {
          push(j.payload, j.score);
          redis.call("LREM", j.qkey, count, raw);
        }
      } else if (where === false && j.score === "") {
        push(raw, "");
        redis.call("ZREM", j.schedule, raw);
      } else if (where === false) redis.call("ZADD", j.schedule, j.score, raw);
      else if (j.score !== "") {
        push(raw, j.score);
        redis.call("LREM", j.qkey, count, raw);
      }
    },
    apply(redis: ScriptRedis, j: GuardedJob, status: number): void {
      const ttl = j.args[0];
      if (status === RESCHEDULED) {
        redis.call("PEXPIRE", j.keys[0], ttl);
        redis.call("PEXPIRE", j.keys[1], ttl);
        return;
      }
      redis.call("SET", j.keys[0], j.jid, "PX", ttl);
      if (j.args[1] !== "skip") redis.call("SET", j.keys[1], j.payload, "PX", ttl);
      redis.call("SADD", j.keys[2], j.queue);
    },
  },
};
