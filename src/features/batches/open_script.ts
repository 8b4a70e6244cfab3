/**
 * The open script: creates a batch (a root, or a child registered in its
 * parent in the same step) or reopens one, with an open registration (a
 * hold, `o:<id>`) that keeps it from completing until it is sealed. A crash
 * between open and seal leaves a batch that cannot complete early: it waits
 * (and expires) instead.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/redis_values.ts";
import { UNIT } from "./counting.ts";

/** What opening a batch found. */
export type OpenVerdict =
  | "ok"
  | "gone"
  | "succeeded"
  | "cancelled"
  | "parent-gone"
  | "parent-closed";

const VERDICTS: readonly OpenVerdict[] = ["ok", "gone", "succeeded", "cancelled", "parent-gone", "parent-closed"];

/**
 * KEYS: the batch's hash, its members, failures and results, the
 * `batches` index, then for a child: the parent's hash and members.
 * ARGV: mode (`new` or `reopen`), bid, hold member, now (ms), expiry (ms),
 * parent holder (the parent's member whose registration covers this child,
 * `""` for a root), the child's policy in its parent (`""`, `i`, `c`), time
 * format (`s`, `ms`), description, flow (`1` or `""`), then per callback:
 * event, queue, jid, payload.
 *
 * `new`: a batch that exists already is this same call resent (its hold is
 * there: `ok`). A child is registered in its parent only while the parent's
 * holder has not finished (`parent-closed` otherwise: a re-run of a job
 * whose outcome was recorded must not add to a batch that may be done).
 * `reopen`: refused for a batch gone (expired or never made), succeeded or
 * cancelled. Either way the hold is added and the batch's keys get their
 * expiry again. Reply: a verdict.
 */
export const OPEN_BATCH = defineScript<OpenVerdict>({
  name: "openBatch",
  idempotent: true,
  keys: ["batch", "members", "failed", "results", "batches", "...parent batch, parent members (a child)"],
  argv: [
    "mode",
    "bid",
    "hold",
    "now",
    "expiry ms",
    "parent holder",
    "policy",
    "time format",
    "description",
    "flow",
    "...(event, queue, jid, payload) per callback",
  ],
  lua: `
local meta, jobs = KEYS[1], KEYS[2]
local bid, hold, now, expiry = ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local function holder_open(pjobs, holder)
  local s = redis.call("HGET", pjobs, holder)
  return s and (string.sub(s, 1, 1) == "0" or string.sub(s, 1, 1) == "1")
end
if ARGV[1] == "new" then
  if redis.call("EXISTS", meta) == 1 then
    if redis.call("HEXISTS", jobs, hold) == 1 then return "ok" end
    return "gone"
  end
  if KEYS[6] then
    if redis.call("EXISTS", KEYS[6]) == 0 then return "parent-gone" end
    if not holder_open(KEYS[7], ARGV[6]) then return "parent-closed" end
    if redis.call("HSETNX", KEYS[7], "b:" .. bid, "0" .. ARGV[7]) == 1 then
      redis.call("HINCRBY", KEYS[6], "kids", 1)
      redis.call("HINCRBY", KEYS[6], "kpend", 1)
      redis.call("HINCRBY", KEYS[6], "count", ${UNIT + 1})
    end
  end
  redis.call("HSET", meta, "created", now, "exp", expiry, "tf", ARGV[8], "total", 0, "failures", 0, "kids", 0,
    "kpend", 0, "holds", 1, "count", ${UNIT + 1})
  if ARGV[9] ~= "" then redis.call("HSET", meta, "desc", ARGV[9]) end
  if ARGV[10] ~= "" then redis.call("HSET", meta, "flow", ARGV[10]) end
  for i = 11, #ARGV, 4 do
    local event = ARGV[i]
    redis.call("HSET", meta, "cbq:" .. event, ARGV[i + 1], "cbj:" .. event, ARGV[i + 2], "cb:" .. event, ARGV[i + 3])
  end
  redis.call("HSET", jobs, hold, "0")
else
  local v = redis.call("HMGET", meta, "exp", "fired:success", "cancelled")
  if not v[1] then return "gone" end
  if v[3] then return "cancelled" end
  if redis.call("HEXISTS", jobs, hold) == 1 then return "ok" end
  if v[2] then return "succeeded" end
  expiry = tonumber(v[1])
  redis.call("HSET", jobs, hold, "0")
  redis.call("HINCRBY", meta, "holds", 1)
  redis.call("HINCRBY", meta, "count", ${UNIT + 1})
end
for i = 1, 4 do redis.call("PEXPIRE", KEYS[i], expiry) end
redis.call("ZREMRANGEBYSCORE", KEYS[5], "-inf", now)
redis.call("ZADD", KEYS[5], now + expiry, bid)
return "ok"
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const [meta, jobs] = keys;
    const [mode, bid, hold] = argv;
    const now = Number(argv[3]);
    let expiry = Number(argv[4]);
    const holderOpen = (pjobs: string, holder: string) => {
      const s = redis.call("HGET", pjobs, holder) as string | null;
      return s !== null && (s[0] === "0" || s[0] === "1");
    };
    if (mode === "new") {
      if (redis.call("EXISTS", meta) === 1) return redis.call("HEXISTS", jobs, hold) === 1 ? "ok" : "gone";
      if (keys[5] !== undefined) {
        if (redis.call("EXISTS", keys[5]) === 0) return "parent-gone";
        if (!holderOpen(keys[6], argv[5])) return "parent-closed";
        if (redis.call("HSETNX", keys[6], `b:${bid}`, "0" + argv[6]) === 1) {
          redis.call("HINCRBY", keys[5], "kids", 1);
          redis.call("HINCRBY", keys[5], "kpend", 1);
          redis.call("HINCRBY", keys[5], "count", UNIT + 1);
        }
      }
      redis.call("HSET", meta, "created", now, "exp", expiry, "tf", argv[7], "total", 0, "failures", 0, "kids", 0);
      redis.call("HSET", meta, "kpend", 0, "holds", 1, "count", UNIT + 1);
      if (argv[8] !== "") redis.call("HSET", meta, "desc", argv[8]);
      if (argv[9] !== "") redis.call("HSET", meta, "flow", argv[9]);
      for (let i = 10; i < argv.length; i += 4) {
        const event = argv[i];
        redis.call("HSET", meta, `cbq:${event}`, argv[i + 1], `cbj:${event}`, argv[i + 2], `cb:${event}`, argv[i + 3]);
      }
      redis.call("HSET", jobs, hold, "0");
    } else {
      const [exp, succeeded, cancelled] = redis.call("HMGET", meta, "exp", "fired:success", "cancelled") as (
        | string
        | null
      )[];
      if (exp === null) return "gone";
      if (cancelled !== null) return "cancelled";
      if (redis.call("HEXISTS", jobs, hold) === 1) return "ok";
      if (succeeded !== null) return "succeeded";
      expiry = Number(exp);
      redis.call("HSET", jobs, hold, "0");
      redis.call("HINCRBY", meta, "holds", 1);
      redis.call("HINCRBY", meta, "count", UNIT + 1);
    }
    for (let i = 0; i < 4; i++) redis.call("PEXPIRE", keys[i], expiry);
    redis.call("ZREMRANGEBYSCORE", keys[4], "-inf", now);
    redis.call("ZADD", keys[4], now + expiry, bid);
    return "ok";
  },
  decode(reply) {
    const verdict = String(reply) as OpenVerdict;
    if (!VERDICTS.includes(verdict)) throw new TypeError(`unknown openBatch reply ${String(reply)}`);
    return verdict;
  },
});
