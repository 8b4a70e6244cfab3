/**
 * The election's one script: take the lease if nobody holds it, renew it if
 * this candidate does, else say who holds it and for how long. Redis keeps
 * the time: the lease is a `PX` expiry, so no process's clock is compared
 * with another's.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";

/** What a claim found. */
export interface ClaimReply {
  /** Whether the caller holds the lease now (taken or renewed). */
  held: boolean;
  /** The term of whoever holds it (the fencing token; 0 when none could be read). */
  term: number;
  /** Milliseconds the lease has left: the full lease when held, the holder's PTTL otherwise (-1: no expiry set). */
  ttlMs: number;
}

/**
 * KEYS: the lease (`<term>|<candidate>`), the term counter.
 * ARGV: the candidate, the lease in milliseconds.
 * Reply: `{held (1/0), term, ms left}`.
 *
 * Free: the term counter is incremented (a new leader, a new fencing token)
 * and the lease set with `PX`. Held by this candidate: its expiry is pushed
 * out to a full lease, same term. Held by another: nothing is written.
 */
export const LEADER_CLAIM = defineScript<ClaimReply>({
  name: "leaderClaim",
  // Safe to send again after a lost reply: a second run finds the lease its
  // own and renews it, in the same term.
  idempotent: true,
  keys: ["edgekiq:leader:<name>", "edgekiq:leader-term:<name>"],
  argv: ["candidate", "lease ms"],
  lua: `
local current = redis.call("GET", KEYS[1])
if current then
  local bar = string.find(current, "|", 1, true)
  local term = bar and tonumber(string.sub(current, 1, bar - 1)) or 0
  if bar and string.sub(current, bar + 1) == ARGV[1] then
    redis.call("PEXPIRE", KEYS[1], ARGV[2])
    return {1, term, tonumber(ARGV[2])}
  end
  return {0, term, redis.call("PTTL", KEYS[1])}
end
local term = redis.call("INCR", KEYS[2])
redis.call("SET", KEYS[1], term .. "|" .. ARGV[1], "PX", ARGV[2])
return {1, term, tonumber(ARGV[2])}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const current = redis.call("GET", keys[0]) as string | null;
    if (current !== null) {
      const bar = current.indexOf("|");
      const term = bar >= 0 ? Number(current.slice(0, bar)) || 0 : 0;
      if (bar >= 0 && current.slice(bar + 1) === argv[0]) {
        redis.call("PEXPIRE", keys[0], argv[1]);
        return [1, term, Number(argv[1])];
      }
      return [0, term, redis.call("PTTL", keys[0])];
    }
    const term = redis.call("INCR", keys[1]) as number;
    redis.call("SET", keys[0], `${term}|${argv[0]}`, "PX", argv[1]);
    return [1, term, Number(argv[1])];
  },
  decode(reply): ClaimReply {
    const [held, term, ttl] = Array.isArray(reply) ? reply : [];
    return { held: Number(held) === 1, term: Number(term) || 0, ttlMs: Number(ttl) };
  },
});
