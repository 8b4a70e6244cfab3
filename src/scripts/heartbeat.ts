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

/**
 * KEYS: `processes`, `<identity>`, `<identity>:work`, `<identity>:workers`,
 * `<identity>-signals`, `stat:processed`, `stat:failed`, and the two daily keys.
 * ARGV: identity, ttl, stats ttl, processed, failed, clear work (1/0),
 * n = count of process-hash field/value items, those n items, then the work
 * hash's field/value items.
 * Returns the remote signal popped, or nil.
 */
export const HEARTBEAT = defineScript<string | null>({
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
  ],
  argv: [
    "identity",
    "ttl",
    "statsTtl",
    "processed",
    "failed",
    "clearWork",
    "n",
    "...process hash items",
    "...work hash items",
  ],
  lua: `
redis.call("SADD", KEYS[1], ARGV[1])
local n = tonumber(ARGV[7])
redis.call("HSET", KEYS[2], unpack(ARGV, 8, 7 + n))
redis.call("EXPIRE", KEYS[2], ARGV[2])
if ARGV[6] == "1" then redis.call("UNLINK", KEYS[3], KEYS[4]) end
if #ARGV > 7 + n then
  for k = 3, 4 do
    redis.call("HSET", KEYS[k], unpack(ARGV, 8 + n, #ARGV))
    redis.call("EXPIRE", KEYS[k], ARGV[2])
  end
end
for i, count in ipairs({tonumber(ARGV[4]), tonumber(ARGV[5])}) do
  if count > 0 then
    redis.call("INCRBY", KEYS[5 + i], count)
    redis.call("INCRBY", KEYS[7 + i], count)
    redis.call("EXPIRE", KEYS[7 + i], ARGV[3])
  end
end
return redis.call("RPOP", KEYS[5])
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    redis.call("SADD", keys[0], argv[0]);
    const n = Number(argv[6]);
    redis.call("HSET", keys[1], ...argv.slice(7, 7 + n));
    redis.call("EXPIRE", keys[1], argv[1]);
    if (argv[5] === "1") redis.call("UNLINK", keys[2], keys[3]);
    if (argv.length > 7 + n) {
      for (const k of [keys[2], keys[3]]) {
        redis.call("HSET", k, ...argv.slice(7 + n));
        redis.call("EXPIRE", k, argv[1]);
      }
    }
    [Number(argv[3]), Number(argv[4])].forEach((count, i) => {
      if (count <= 0) return;
      redis.call("INCRBY", keys[5 + i], count);
      redis.call("INCRBY", keys[7 + i], count);
      redis.call("EXPIRE", keys[7 + i], argv[2]);
    });
    return redis.call("RPOP", keys[4]);
  },
  decode: (reply) => (typeof reply === "string" ? reply : null),
});
