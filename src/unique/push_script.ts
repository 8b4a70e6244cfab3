/**
 * The unique push: one write-guard script (see `write_guard.ts` for the
 * calling convention) that takes each job's lock and writes the job in the
 * same atomic step, so two clients pushing the same job at once write it
 * once. A batch of a bulk push is one call.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { decodeGuarded, GUARD_STATUS, type GuardedWrite } from "../write_guard.ts";

/** Guard keys per job: the lock, the copy of the waiting job's payload, the registry of unique queues. */
export const UNIQUE_GUARD_KEYS = 3;

const { pushed: PUSHED, duplicate: DUPLICATE, replaced: REPLACED, rescheduled: RESCHEDULED } = GUARD_STATUS;

/**
 * KEYS: `queues`, `schedule`, then per job: its queue list, its lock, the
 * copy of its payload, the registry of unique queues.
 * ARGV: 3, 2, then per job: queue name, jid, payload, run time (epoch
 * seconds, `""` for now), lock TTL (ms), conflict mode.
 *
 * Per job: a free lock is taken (`SET PX`, value the jid) and the job
 * written as a plain push writes it (with `replace`/`reschedule`, a copy of
 * its payload is kept beside the lock, same TTL). A lock held by this same
 * jid means this call already ran (a resend): nothing more is written. A
 * lock held by another jid is a conflict: with `skip`, nothing is written;
 * with `replace` or `reschedule`, the holder is looked up by its payload
 * copy in `schedule` (ZSCORE) or its queue (LPOS). `replace` swaps it for
 * the new job (in place in the queue, or at the new run time) and hands
 * the lock to the new jid; `reschedule` moves the holder to the new run
 * time and extends the lock. A holder found nowhere (running, retrying, or
 * pushed with `skip`) is left alone: a duplicate.
 * Reply: per job, status code and the holder's jid (`""` if none).
 */
export const UNIQUE_PUSH = defineScript<GuardedWrite[]>({
  name: "unique_push",
  keys: ["queues", "schedule", "...(queue:<name>, lock, payload copy, unique queues) per job"],
  argv: ["3", "2", "...(queue, jid, payload, run time, ttl ms, mode) per job"],
  lua: `
local k, a = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = (#ARGV - 2) / (4 + a)
local out = {}
local function push(qkey, queue, score, raw)
  if score == "" then
    redis.call("SADD", KEYS[1], queue)
    redis.call("LPUSH", qkey, raw)
  else
    redis.call("ZADD", KEYS[2], score, raw)
  end
end
for j = 0, n - 1 do
  local kb, ab = 3 + j * (1 + k), 3 + j * (4 + a)
  local qkey, lock, copy, registry = KEYS[kb], KEYS[kb + 1], KEYS[kb + 2], KEYS[kb + 3]
  local queue, jid, payload, score = ARGV[ab], ARGV[ab + 1], ARGV[ab + 2], ARGV[ab + 3]
  local ttl, mode = ARGV[ab + 4], ARGV[ab + 5]
  local holder = redis.call("GET", lock)
  local code, other = ${PUSHED}, ""
  if not holder then
    redis.call("SET", lock, jid, "PX", ttl)
    if mode ~= "skip" then redis.call("SET", copy, payload, "PX", ttl) end
    redis.call("SADD", registry, queue)
    push(qkey, queue, score, payload)
  elseif holder ~= jid then
    code, other = ${DUPLICATE}, holder
    local where = false
    local raw = mode ~= "skip" and redis.call("GET", copy)
    if raw and string.find(raw, '"jid":"' .. holder .. '"', 1, true) then
      if redis.call("ZSCORE", KEYS[2], raw) then where = -1 else where = redis.call("LPOS", qkey, raw) end
    end
    if where and mode == "replace" then
      if where == -1 then
        redis.call("ZREM", KEYS[2], raw)
        push(qkey, queue, score, payload)
      elseif score == "" then
        redis.call("LSET", qkey, where, payload)
      else
        redis.call("LREM", qkey, 1, raw)
        push(qkey, queue, score, payload)
      end
      redis.call("SET", lock, jid, "PX", ttl)
      redis.call("SET", copy, payload, "PX", ttl)
      code = ${REPLACED}
    elseif where then
      if where == -1 and score == "" then
        redis.call("ZREM", KEYS[2], raw)
        push(qkey, queue, "", raw)
      elseif where == -1 then
        redis.call("ZADD", KEYS[2], score, raw)
      elseif score ~= "" then
        redis.call("LREM", qkey, 1, raw)
        push(qkey, queue, score, raw)
      end
      redis.call("PEXPIRE", lock, ttl)
      redis.call("PEXPIRE", copy, ttl)
      code = ${RESCHEDULED}
    end
  end
  out[#out + 1] = code
  out[#out + 1] = other
end
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const k = Number(argv[0]);
    const a = Number(argv[1]);
    const n = (argv.length - 2) / (4 + a);
    const out: RedisReply[] = [];
    const push = (qkey: string, queue: string, score: string, raw: string) => {
      if (score === "") {
        redis.call("SADD", keys[0], queue);
        redis.call("LPUSH", qkey, raw);
      } else redis.call("ZADD", keys[1], score, raw);
    };
    for (let j = 0; j < n; j++) {
      const [qkey, lock, copy, registry] = keys.slice(2 + j * (1 + k));
      const [queue, jid, payload, score, ttl, mode] = argv.slice(2 + j * (4 + a));
      const holder = redis.call("GET", lock) as string | null;
      let code = PUSHED;
      let other = "";
      if (holder === null) {
        redis.call("SET", lock, jid, "PX", ttl);
        if (mode !== "skip") redis.call("SET", copy, payload, "PX", ttl);
        redis.call("SADD", registry, queue);
        push(qkey, queue, score, payload);
      } else if (holder !== jid) {
        code = DUPLICATE;
        other = holder;
        let where: number | null = null;
        const raw = mode !== "skip" ? redis.call("GET", copy) as string | null : null;
        if (raw !== null && raw.includes(`"jid":"${holder}"`)) {
          where = redis.call("ZSCORE", keys[1], raw) !== null ? -1 : redis.call("LPOS", qkey, raw) as number | null;
        }
        if (where !== null && mode === "replace") {
          if (where === -1) {
            redis.call("ZREM", keys[1], raw!);
            push(qkey, queue, score, payload);
          } else if (score === "") redis.call("LSET", qkey, where, payload);
          else {
            redis.call("LREM", qkey, 1, raw!);
            push(qkey, queue, score, payload);
          }
          redis.call("SET", lock, jid, "PX", ttl);
          redis.call("SET", copy, payload, "PX", ttl);
          code = REPLACED;
        } else if (where !== null) {
          if (where === -1 && score === "") {
            redis.call("ZREM", keys[1], raw!);
            push(qkey, queue, "", raw!);
          } else if (where === -1) redis.call("ZADD", keys[1], score, raw!);
          else if (score !== "") {
            redis.call("LREM", qkey, 1, raw!);
            push(qkey, queue, score, raw!);
          }
          redis.call("PEXPIRE", lock, ttl);
          redis.call("PEXPIRE", copy, ttl);
          code = RESCHEDULED;
        }
      }
      out.push(code, other);
    }
    return out;
  },
  decode: decodeGuarded,
});
