/**
 * The heartbeat script: register the process, refresh its info and work
 * hashes, flush the stats and pop one remote signal, atomically and in one
 * command. (Sidekiq does this in one MULTI; a script is just as atomic and
 * is one billed command on Upstash instead of eight.)
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { decodePollCheck, type PollCheck, pollCheckLua, pollCheckTwin } from "./poll_check.ts";

/** What a beat learned. */
export interface BeatResult {
  /** A remote signal (`TSTP`, `TERM`, `TTIN`) that was waiting, if any. */
  readonly signal: string | null;
  /**
   * Whether the process hash still existed. False after a stall longer than
   * its TTL (or on the first beat): other processes may have recovered
   * what this one held.
   */
  readonly existed: boolean;
  /** The poll check, when the beat was asked to run it (HTTP transports). */
  readonly check?: PollCheck;
  /** Per watched sorted set (features' `watch`, in order): its highest score, or null when it is empty or missing. */
  readonly watched: (number | null)[];
}

/**
 * KEYS: `processes`, `<identity>`, `<identity>:work`, `<identity>:workers`,
 * `<identity>-signals`, `stat:processed`, `stat:failed`, and the two daily keys;
 * then the w watched sorted sets; optionally the poll-check keys follow (see
 * `poll_check.ts`).
 * ARGV: identity, ttl, stats ttl, processed, failed, flush id, clear work
 * (1/0), poll time (epoch seconds; "" to skip the poll check), w = count of
 * watched sets, n = count of process-hash field/value items, those n items,
 * then the work hash's field/value items.
 *
 * The counts are added only if the process hash does not already record
 * this flush id: a beat whose reply was lost is sent again with the same id
 * and counts, and must not count twice. A watched key that is not a sorted
 * set reads as empty (it must not stop the beat).
 * Reply: [remote signal popped or nil, 1 if the process hash existed, poll
 * check or nil, each watched set's highest score ("" when empty)].
 */
export const HEARTBEAT = defineScript<BeatResult>({
  name: "heartbeat",
  keys: [
    "processes",
    "<identity>",
    "<identity>:work",
    "<identity>:workers",
    "<identity>-signals",
    "stat:processed",
    "stat:failed",
    "stat:processed:<day>",
    "stat:failed:<day>",
    "...watched sorted sets",
    "...poll-check keys (optional)",
  ],
  argv: [
    "identity",
    "ttl",
    "statsTtl",
    "processed",
    "failed",
    "flushId",
    "clearWork",
    "pollNow",
    "w",
    "n",
    "...process hash items",
    "...work hash items",
  ],
  lua: `
local existed = redis.call("EXISTS", KEYS[2])
local fresh = ARGV[6] ~= "" and redis.call("HGET", KEYS[2], "flush") ~= ARGV[6]
redis.call("SADD", KEYS[1], ARGV[1])
local w = tonumber(ARGV[9])
local n = tonumber(ARGV[10])
redis.call("HSET", KEYS[2], unpack(ARGV, 11, 10 + n))
if fresh then redis.call("HSET", KEYS[2], "flush", ARGV[6]) end
redis.call("EXPIRE", KEYS[2], ARGV[2])
if ARGV[7] == "1" then redis.call("UNLINK", KEYS[3], KEYS[4]) end
if #ARGV > 10 + n then
  for k = 3, 4 do
    redis.call("HSET", KEYS[k], unpack(ARGV, 11 + n, #ARGV))
    redis.call("EXPIRE", KEYS[k], ARGV[2])
  end
end
if fresh then
  for i, count in ipairs({tonumber(ARGV[4]), tonumber(ARGV[5])}) do
    if count > 0 then
      -- A stat key of another type loses its count, never the beat: a failed
      -- beat would have the process presumed dead and its jobs recovered.
      redis.pcall("INCRBY", KEYS[5 + i], count)
      redis.pcall("INCRBY", KEYS[7 + i], count)
      redis.pcall("EXPIRE", KEYS[7 + i], ARGV[3])
    end
  end
end
local watched = {}
for i = 1, w do
  local top = redis.pcall("ZRANGE", KEYS[9 + i], -1, -1, "WITHSCORES")
  watched[i] = (not top.err and top[2]) or ""
end
local check = false
if ARGV[8] ~= "" then check = ${pollCheckLua("10 + w", "ARGV[8]", "ARGV[1]")} end
return {redis.call("RPOP", KEYS[5]), existed, check, watched}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const existed = redis.call("EXISTS", keys[1]);
    const fresh = argv[5] !== "" && redis.call("HGET", keys[1], "flush") !== argv[5];
    redis.call("SADD", keys[0], argv[0]);
    const w = Number(argv[8]);
    const n = Number(argv[9]);
    redis.call("HSET", keys[1], ...argv.slice(10, 10 + n));
    if (fresh) redis.call("HSET", keys[1], "flush", argv[5]);
    redis.call("EXPIRE", keys[1], argv[1]);
    if (argv[6] === "1") redis.call("UNLINK", keys[2], keys[3]);
    if (argv.length > 10 + n) {
      for (const k of [keys[2], keys[3]]) {
        redis.call("HSET", k, ...argv.slice(10 + n));
        redis.call("EXPIRE", k, argv[1]);
      }
    }
    if (fresh) {
      [Number(argv[3]), Number(argv[4])].forEach((count, i) => {
        if (count <= 0) return;
        for (const command of [["INCRBY", keys[5 + i], count], ["INCRBY", keys[7 + i], count]] as const) {
          try {
            redis.call(...command);
          } catch { /* as redis.pcall: the count is lost, the beat goes on */ }
        }
        redis.call("EXPIRE", keys[7 + i], argv[2]);
      });
    }
    const watched = keys.slice(9, 9 + w).map((key) => {
      try {
        return (redis.call("ZRANGE", key, -1, -1, "WITHSCORES") as string[])[1] ?? "";
      } catch {
        return "";
      }
    });
    const check = argv[7] !== "" ? pollCheckTwin(redis, keys.slice(9 + w), argv[7], argv[0]) : null;
    return [redis.call("RPOP", keys[4]), existed, check, watched];
  },
  decode(reply: RedisReply): BeatResult {
    const [signal, existed, check, watched] = reply as [RedisReply, RedisReply, RedisReply, RedisReply];
    return {
      signal: typeof signal === "string" ? signal : null,
      existed: Number(existed) === 1,
      check: Array.isArray(check) ? decodePollCheck(check) : undefined,
      watched: Array.isArray(watched) ? watched.map((v) => (v === "" || v === null ? null : Number(v))) : [],
    };
  },
});
