/**
 * The poll check: one command that tells the poller whether there is any
 * work at all, so an idle poll costs one billed command on Upstash instead
 * of five. It also takes the once-a-minute pruning lock.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";

/** What the poller should do this cycle. */
export interface PollCheck {
  /** Whether `retry` has an entry due. */
  retryDue: boolean;
  /** Whether `schedule` has an entry due. */
  scheduleDue: boolean;
  /** Live process entries (for the poll interval). */
  processes: number;
  /** Whether this process won the pruning lock (`SET NX EX 60`). */
  prune: boolean;
  /** Registered held hashes, this process's included. */
  privateLists: number;
  /** Whether a periodic schedule has a tick due. */
  periodicDue: boolean;
}

/** The poll check's keys, in the order its Lua and twin take them. */
export const POLL_CHECK_KEYS = [
  "retry",
  "schedule",
  "processes",
  "process_cleanup",
  "edgekiq:inflight",
  "edgekiq:periodic:due",
] as const;

/**
 * The poll check's keys for a namespace, in {@link POLL_CHECK_KEYS} order.
 *
 * @example
 * ```ts
 * await transport.script(POLL_CHECK, pollCheckKeys(keys()), [Date.now() / 1000]);
 * ```
 */
export function pollCheckKeys(k: Keys): string[] {
  return [k.retry, k.schedule, k.processes, k.processCleanup, k.inflightRegistry, k.periodicDue];
}

/**
 * The poll check as a Lua expression over six consecutive KEYS starting at
 * `KEYS[first]` (in {@link POLL_CHECK_KEYS} order) and the time in `now`
 * (a Lua expression), so the heartbeat script can run it too: over HTTP one
 * billed command then both beats and checks.
 */
export function pollCheckLua(first: number, now: string): string {
  const k = (i: number) => `KEYS[${first + i}]`;
  return `(function()
  local function due(key) return #redis.call("ZRANGE", key, "-inf", ${now}, "BYSCORE", "LIMIT", 0, 1) end
  local prune = redis.call("SET", ${k(3)}, "1", "NX", "EX", 60) and 1 or 0
  return {due(${k(0)}), due(${k(1)}), redis.call("SCARD", ${k(2)}), prune, redis.call("HLEN", ${k(4)}), due(${k(5)})}
end)()`;
}

/**
 * The JavaScript twin of {@link pollCheckLua}: `keys` are the six poll keys.
 *
 * @example
 * ```ts
 * const values = pollCheckTwin(redis, keys.slice(0, 6), argv[0]);
 * ```
 */
export function pollCheckTwin(redis: ScriptRedis, keys: readonly string[], now: string): number[] {
  const due = (key: string) => (redis.call("ZRANGE", key, "-inf", now, "BYSCORE", "LIMIT", 0, 1) as string[]).length;
  const prune = redis.call("SET", keys[3], "1", "NX", "EX", 60) === "OK" ? 1 : 0;
  return [
    due(keys[0]),
    due(keys[1]),
    Number(redis.call("SCARD", keys[2])),
    prune,
    Number(redis.call("HLEN", keys[4])),
    due(keys[5]),
  ];
}

/**
 * Reads the six values the poll check returns.
 *
 * @example
 * ```ts
 * const check = decodePollCheck([1, 0, 3, 0, 2, 0]); // { retryDue: true, ... }
 * ```
 */
export function decodePollCheck(reply: RedisReply): PollCheck {
  const [retry, schedule, processes, prune, lists, periodic] = (reply as number[]).map(Number);
  return {
    retryDue: retry > 0,
    scheduleDue: schedule > 0,
    processes,
    prune: prune === 1,
    privateLists: lists,
    periodicDue: periodic > 0,
  };
}

/**
 * KEYS: `retry`, `schedule`, `processes`, `process_cleanup`, the held-key registry, `edgekiq:periodic:due`.
 * ARGV: now (epoch seconds).
 */
export const POLL_CHECK = defineScript<PollCheck>({
  name: "pollCheck",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: POLL_CHECK_KEYS,
  argv: ["now"],
  lua: `return ${pollCheckLua(1, "ARGV[1]")}`,
  twin: (redis: ScriptRedis, keys: string[], argv: string[]): RedisReply => pollCheckTwin(redis, keys, argv[0]),
  decode: decodePollCheck,
});
