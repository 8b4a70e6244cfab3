/**
 * The settle script: write a job's outcome (its retry entry, its dead
 * entry, its postponed copy) and acknowledge it, in one atomic step that
 * applies once. A resend after a lost reply, or a retry after a failed
 * attempt, finds the job no longer held and writes nothing: a job never gets
 * two retry entries, whatever happens to the replies.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { HELD_LUA, heldTwin } from "./held.ts";

/**
 * KEYS: the held hash, the job's queue list, the set to write to (`retry`,
 * `dead` or `schedule`).
 * ARGV: batch id, job index, the job's raw text as fetched, score, the
 * payload to write, then for `dead`: oldest score kept and trim rank
 * (negative), else nothing.
 *
 * The job is this process's to settle when it is still held here (state
 * `0`), or when it was put back on its queue (hard shutdown, or recovery
 * while this process stalled) and its copy is still within the 1,000 jobs
 * at the queue's pop end: that copy is taken back, so the job does not run
 * again beside its outcome. Which it is, is decided by reads alone; then the
 * payload is written first (a key of the wrong type refuses it with nothing
 * else changed: the job stays held), the job marked done (or its copy
 * taken back), and the set trimmed if it is `dead`. Otherwise (settled by an earlier
 * run of this same request, or already taken elsewhere) nothing is written.
 * Reply: 1 if it wrote, 0 if not.
 */
export const SETTLE = defineScript<boolean>({
  name: "settle",
  // Applies once by construction: a second run finds the job settled.
  idempotent: true,
  keys: ["held", "queue:<q>", "retry|dead|schedule"],
  argv: ["batch", "index", "raw", "score", "payload", "...cutoff, trimRank (dead only)"],
  lua: HELD_LUA + `
local b, i = ARGV[1], tonumber(ARGV[2])
local held = redis.call("HEXISTS", KEYS[1], b) == 1
local state = held and redis.call("HGET", KEYS[1], "#a:" .. b)
local c = state and string.byte(state, i + 1) or 48
-- Decided by reads only; the entry is written first, so a write Redis
-- refuses (a key of the wrong type) leaves the job held and unacknowledged.
local own = 0
if held and c == 48 then
  own = 1
elseif (not held or c == 50) and redis.call("LPOS", KEYS[2], ARGV[3], "RANK", -1, "MAXLEN", 1000) then
  own = 2
end
if own == 0 then return 0 end
redis.call("ZADD", KEYS[3], ARGV[4], ARGV[5])
if own == 1 then mark(KEYS[1], b, {i}, 49) else redis.call("LREM", KEYS[2], -1, ARGV[3]) end
if ARGV[6] then
  redis.call("ZREMRANGEBYSCORE", KEYS[3], "-inf", ARGV[6])
  redis.call("ZREMRANGEBYRANK", KEYS[3], 0, ARGV[7])
end
return 1
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const [b, index] = [argv[0], Number(argv[1])];
    const held = redis.call("HEXISTS", keys[0], b) === 1;
    const state = held ? redis.call("HGET", keys[0], `#a:${b}`) as string | null : null;
    const c = state?.[index] ?? "0";
    const own = held && c === "0"
      ? 1
      : (!held || c === "2") && redis.call("LPOS", keys[1], argv[2], "RANK", -1, "MAXLEN", 1000) !== null
      ? 2
      : 0;
    if (own === 0) return 0;
    redis.call("ZADD", keys[2], argv[3], argv[4]);
    if (own === 1) heldTwin.mark(redis, keys[0], b, [index], "1");
    else redis.call("LREM", keys[1], -1, argv[2]);
    if (argv.length > 5) {
      redis.call("ZREMRANGEBYSCORE", keys[2], "-inf", argv[5]);
      redis.call("ZREMRANGEBYRANK", keys[2], 0, argv[6]);
    }
    return 1;
  },
  decode: (reply) => Number(reply) === 1,
});
