/**
 * The poll check: one command that tells the poller whether there is any
 * work at all, so an idle poll costs one billed command on Upstash instead
 * of five. It also takes the once-a-minute pruning lock.
 *
 * @module
 */
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

/**
 * KEYS: `retry`, `schedule`, `processes`, `process_cleanup`, the held-key registry, `edgekiq:periodic:due`.
 * ARGV: now (epoch seconds).
 */
export const POLL_CHECK = defineScript<PollCheck>({
  name: "pollCheck",
  keys: ["retry", "schedule", "processes", "process_cleanup", "edgekiq:inflight", "edgekiq:periodic:due"],
  argv: ["now"],
  lua: `
local function due(key) return #redis.call("ZRANGE", key, "-inf", ARGV[1], "BYSCORE", "LIMIT", 0, 1) end
local prune = redis.call("SET", KEYS[4], "1", "NX", "EX", 60) and 1 or 0
return {due(KEYS[1]), due(KEYS[2]), redis.call("SCARD", KEYS[3]), prune, redis.call("HLEN", KEYS[5]), due(KEYS[6])}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const due = (key: string) =>
      (redis.call("ZRANGE", key, "-inf", argv[0], "BYSCORE", "LIMIT", 0, 1) as string[]).length;
    const prune = redis.call("SET", keys[3], "1", "NX", "EX", 60) === "OK" ? 1 : 0;
    return [due(keys[0]), due(keys[1]), redis.call("SCARD", keys[2]), prune, redis.call("HLEN", keys[4]), due(keys[5])];
  },
  decode(reply: RedisReply): PollCheck {
    const [retry, schedule, processes, prune, lists, periodic] = (reply as number[]).map(Number);
    return {
      retryDue: retry > 0,
      scheduleDue: schedule > 0,
      processes,
      prune: prune === 1,
      privateLists: lists,
      periodicDue: periodic > 0,
    };
  },
});
