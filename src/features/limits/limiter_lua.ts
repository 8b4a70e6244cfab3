/**
 * What every limiter script shares: Redis's clock (`TIME`, never a
 * process's), the key-type checks made before the first write, and the
 * counters each call adds to (uses and over-limit events, in total and for
 * this minute and the one before), in Lua and in the twin the memory
 * transport runs.
 *
 * Every limiter script takes the same KEYS and ARGV, and decides many calls
 * at once (the takes of one limiter made while a call of it is on its way
 * share the next: jobs fetched together cost one command between them):
 * KEYS: the limiter's state, its stats hash, the registry of limiters.
 * ARGV: the limiter's name, its stats TTL in ms, its limit, its interval in
 * ms, a leaky limiter's burst, then one value per call (a concurrent
 * slot's holder, a window call's unique token, a points call's cost).
 * Reply: per call, in order, `ok, wait ms, remaining`.
 *
 * @module
 */
import { KEY_TYPES_LUA } from "../../scripts/key_types.ts";
import { holds, refusal } from "../../scripts/key_types.ts";
import type { ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";

/** The KEYS every limiter script starts with. */
export const LIMITER_KEYS = ["edgekiq:limiter:<name>", "edgekiq:limiter-stats:<name>", "edgekiq:limiters"] as const;
/** The ARGV every limiter script starts with. */
export const LIMITER_ARGV = [
  "name",
  "stats ttl ms",
  "limit",
  "interval ms",
  "burst (leaky)",
  "per call: its holder, token or cost",
  "...",
] as const;

/** Lua: `tally(out)`, as its twin. */
export const TALLY_LUA = `
local function tally(out)
  local uses = 0
  for i = 1, #out, 3 do uses = uses + out[i] end
  return uses, #out / 3 - uses
end
`;

/**
 * Lua: `now_ms()`, Redis's clock in ms. Effects replication is asked for
 * first: a script that reads TIME and then writes must replicate its
 * writes, not itself (the default since Redis 5; needed on older ones).
 */
export const NOW_MS_LUA = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local function now_ms()
  local t = redis.call("TIME")
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * Lua: `now_ms()` (Redis's clock), `check(kind)` (the key types, or an
 * error reply) and `account(ok, kind)` (counts the call; once a minute it
 * also refreshes the description, the TTL and the registry entry, so the
 * Limits page's "last used" is to the minute and a call costs two HINCRBYs).
 */
export const LIMITER_LUA = KEY_TYPES_LUA + TALLY_LUA + NOW_MS_LUA + `
local function check(kind)
  if not holds(KEYS[1], kind) then return refuse(KEYS[1], kind) end
  if not holds(KEYS[2], "hash") then return refuse(KEYS[2], "hash") end
  if not holds(KEYS[3], "zset") then return refuse(KEYS[3], "zset") end
  return nil
end
local function account(uses, overs, kind, now)
  local minute = math.floor(now / 60000)
  local seen = tonumber(redis.call("HGET", KEYS[2], "minute") or "0")
  if seen ~= minute then
    local use, over = "0", "0"
    if seen == minute - 1 then
      use = redis.call("HGET", KEYS[2], "use_m") or "0"
      over = redis.call("HGET", KEYS[2], "over_m") or "0"
    end
    redis.call("HSET", KEYS[2], "minute", minute, "use_m", 0, "over_m", 0, "use_p", use, "over_p", over,
      "kind", kind, "limit", ARGV[3], "per", ARGV[4], "at", now)
    redis.call("PEXPIRE", KEYS[2], ARGV[2])
    redis.call("ZADD", KEYS[3], now, ARGV[1])
    redis.call("ZREMRANGEBYSCORE", KEYS[3], "-inf", now - tonumber(ARGV[2]))
  end
  if uses > 0 then
    redis.call("HINCRBY", KEYS[2], "use", uses)
    redis.call("HINCRBY", KEYS[2], "use_m", uses)
  end
  if overs > 0 then
    redis.call("HINCRBY", KEYS[2], "over", overs)
    redis.call("HINCRBY", KEYS[2], "over_m", overs)
  end
end
`;

/**
 * The twin of `now_ms()`.
 *
 * @example
 * ```ts
 * const now = redisNowMs(redis);
 * ```
 */
export function redisNowMs(redis: ScriptRedis): number {
  const [s, us] = redis.call("TIME") as string[];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/**
 * The twin of `check(kind)`: throws the refusal, nothing written.
 *
 * @example
 * ```ts
 * checkLimiterKeys(redis, keys, "zset");
 * ```
 */
export function checkLimiterKeys(redis: ScriptRedis, keys: string[], kind: string): void {
  if (!holds(redis, keys[0], kind)) throw refusal(keys[0], kind);
  if (!holds(redis, keys[1], "hash")) throw refusal(keys[1], "hash");
  if (!holds(redis, keys[2], "zset")) throw refusal(keys[2], "zset");
}

/**
 * The twin of `account(ok, kind, now)`.
 *
 * @example
 * ```ts
 * accountLimiter(redis, keys, argv, { uses: 1, overs: 0, kind: "bucket", now });
 * ```
 */
export function accountLimiter(
  redis: ScriptRedis,
  keys: string[],
  argv: string[],
  call: { uses: number; overs: number; kind: string; now: number },
): void {
  const { uses, overs, kind, now } = call;
  const minute = Math.floor(now / 60000);
  const seen = Number(redis.call("HGET", keys[1], "minute") ?? 0);
  if (seen !== minute) {
    let use: RedisReply = "0";
    let over: RedisReply = "0";
    if (seen === minute - 1) {
      use = redis.call("HGET", keys[1], "use_m") ?? "0";
      over = redis.call("HGET", keys[1], "over_m") ?? "0";
    }
    const fields = { minute, use_m: 0, over_m: 0, use_p: String(use), over_p: String(over), kind, limit: argv[2] };
    redis.call("HSET", keys[1], ...Object.entries({ ...fields, per: argv[3], at: now }).flat());
    redis.call("PEXPIRE", keys[1], argv[1]);
    redis.call("ZADD", keys[2], now, argv[0]);
    redis.call("ZREMRANGEBYSCORE", keys[2], "-inf", now - Number(argv[1]));
  }
  if (uses > 0) {
    redis.call("HINCRBY", keys[1], "use", uses);
    redis.call("HINCRBY", keys[1], "use_m", uses);
  }
  if (overs > 0) {
    redis.call("HINCRBY", keys[1], "over", overs);
    redis.call("HINCRBY", keys[1], "over_m", overs);
  }
}

/** What one limiter call decided. */
export interface LimiterReply {
  /** Whether the call may go ahead (a slot taken, a token spent). */
  readonly ok: boolean;
  /** When not: ms until Redis expects a slot or token to be free (a hint, not a promise). */
  readonly waitMs: number;
  /** What is left after this call: free slots, tokens, points (a hint). */
  readonly remaining: number;
}

/**
 * Reads a limiter script's reply: per call, `ok, wait ms, remaining`.
 *
 * @example
 * ```ts
 * decodeLimiterReply([0, 250, 0]); // [{ ok: false, waitMs: 250, remaining: 0 }]
 * ```
 */
export function decodeLimiterReply(reply: RedisReply): LimiterReply[] {
  const flat = Array.isArray(reply) ? reply : [];
  const out: LimiterReply[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    out.push({
      ok: Number(flat[i]) === 1,
      waitMs: Math.max(0, Number(flat[i + 1]) || 0),
      remaining: Number(flat[i + 2]) || 0,
    });
  }
  return out;
}

/**
 * Counts the verdicts of a flat reply being built (`ok, wait, remaining` per call).
 *
 * @example
 * ```ts
 * tally([1, 0, 4, 0, 100, 0]); // { uses: 1, overs: 1 }
 * ```
 */
export function tally(out: number[]): { uses: number; overs: number } {
  let uses = 0;
  for (let i = 0; i < out.length; i += 3) uses += out[i];
  return { uses, overs: out.length / 3 - uses };
}
