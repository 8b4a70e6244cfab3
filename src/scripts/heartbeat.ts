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
import { decodePollCheck, POLL_CHECK_KEYS, type PollCheck, pollCheckLua, pollCheckTwin } from "./poll_check.ts";

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
}

/**
 * KEYS: `processes`, `<identity>`, `<identity>:work`, `<identity>:workers`,
 * `<identity>-signals`, `stat:processed`, `stat:failed`, and the two daily keys.
 * Optionally the six poll-check keys follow (see `poll_check.ts`).
 * ARGV: identity, ttl, stats ttl, processed, failed, flush id, clear work
 * (1/0), poll time (epoch seconds; "" to skip the poll check), n = count of
 * process-hash field/value items, those n items, then the work hash's
 * field/value items.
 *
 * The counts are added only if the process hash does not already record
 * this flush id: a beat whose reply was lost is sent again with the same id
 * and counts, and must not count twice.
 * Reply: [remote signal popped or nil, 1 if the process hash existed, poll check or nil].
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
    "n",
    "...process hash items",
    "...work hash items",
  ],
  lua: `
local existed = redis.call("EXISTS", KEYS[2])
local fresh = ARGV[6] ~= "" and redis.call("HGET", KEYS[2], "flush") ~= ARGV[6]
redis.call("SADD", KEYS[1], ARGV[1])
local n = tonumber(ARGV[9])
redis.call("HSET", KEYS[2], unpack(ARGV, 10, 9 + n))
if fresh then redis.call("HSET", KEYS[2], "flush", ARGV[6]) end
redis.call("EXPIRE", KEYS[2], ARGV[2])
if ARGV[7] == "1" then redis.call("UNLINK", KEYS[3], KEYS[4]) end
if #ARGV > 9 + n then
  for k = 3, 4 do
    redis.call("HSET", KEYS[k], unpack(ARGV, 10 + n, #ARGV))
    redis.call("EXPIRE", KEYS[k], ARGV[2])
  end
end
if fresh then
  for i, count in ipairs({tonumber(ARGV[4]), tonumber(ARGV[5])}) do
    if count > 0 then
      redis.call("INCRBY", KEYS[5 + i], count)
      redis.call("INCRBY", KEYS[7 + i], count)
      redis.call("EXPIRE", KEYS[7 + i], ARGV[3])
    end
  end
end
local check = false
if ARGV[8] ~= "" then check = ${pollCheckLua(10, "ARGV[8]")} end
return {redis.call("RPOP", KEYS[5]), existed, check}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const existed = redis.call("EXISTS", keys[1]);
    const fresh = argv[5] !== "" && redis.call("HGET", keys[1], "flush") !== argv[5];
    redis.call("SADD", keys[0], argv[0]);
    const n = Number(argv[8]);
    redis.call("HSET", keys[1], ...argv.slice(9, 9 + n));
    if (fresh) redis.call("HSET", keys[1], "flush", argv[5]);
    redis.call("EXPIRE", keys[1], argv[1]);
    if (argv[6] === "1") redis.call("UNLINK", keys[2], keys[3]);
    if (argv.length > 9 + n) {
      for (const k of [keys[2], keys[3]]) {
        redis.call("HSET", k, ...argv.slice(9 + n));
        redis.call("EXPIRE", k, argv[1]);
      }
    }
    if (fresh) {
      [Number(argv[3]), Number(argv[4])].forEach((count, i) => {
        if (count <= 0) return;
        redis.call("INCRBY", keys[5 + i], count);
        redis.call("INCRBY", keys[7 + i], count);
        redis.call("EXPIRE", keys[7 + i], argv[2]);
      });
    }
    const check = argv[7] !== "" ? pollCheckTwin(redis, keys.slice(9, 9 + POLL_CHECK_KEYS.length), argv[7]) : null;
    return [redis.call("RPOP", keys[4]), existed, check];
  },
  decode(reply: RedisReply): BeatResult {
    const [signal, existed, check] = reply as [RedisReply, RedisReply, RedisReply];
    return {
      signal: typeof signal === "string" ? signal : null,
      existed: Number(existed) === 1,
      check: Array.isArray(check) ? decodePollCheck(check) : undefined,
    };
  },
});
