/**
 * The poll check: one command that tells the poller whether there is any
 * work at all, so an idle poll costs one billed command on Upstash instead
 * of five. It also takes the once-a-minute pruning lock, and says when the
 * next entry comes due (the earliest score after now in `retry`,
 * `schedule` and every due key), so a poller can wake then instead of a
 * whole interval later: precise delays at no extra command. One process
 * per due time is told (it claims the time in `edgekiq:poll:wake`, which
 * expires a second after it): a fleet of N pollers does not all wake, and
 * pay N checks, for every job that comes due; the others keep their
 * interval, which also covers a claimer that died.
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
  heldHashes: number;
  /** Per due key given (features' poll tasks, in order): whether it has an entry due. */
  due: boolean[];
  /**
   * When the next entry comes due, epoch seconds: the lowest score after
   * now in `retry`, `schedule` and the due keys, told to the one poller
   * that claimed that time (and to a check made without an identity, a
   * serverless poll); undefined otherwise, or when none is waiting (or only
   * entries that never come due, scored `+inf`).
   */
  next: number | undefined;
}

/** The poll check's fixed keys, in the order its Lua and twin take them; features' due keys follow. */
export const POLL_CHECK_KEYS = [
  "retry",
  "schedule",
  "processes",
  "process_cleanup",
  "edgekiq:inflight",
  "edgekiq:poll:wake",
] as const;

/**
 * The poll check's keys for a namespace: the fixed ones, then `dueKeys`
 * (sorted sets scored by when there is work: features' poll tasks).
 *
 * @example
 * ```ts
 * await transport.script(POLL_CHECK, pollCheckKeys(keys(), []), [Date.now() / 1000]);
 * ```
 */
export function pollCheckKeys(k: Keys, dueKeys: readonly string[]): string[] {
  return [k.retry, k.schedule, k.processes, k.processCleanup, k.heldRegistry, k.pollWake, ...dueKeys];
}

/**
 * The poll check as a Lua expression over the KEYS from `KEYS[first]` to the
 * last (the fixed keys in {@link POLL_CHECK_KEYS} order, then due keys), the
 * time in `now` and the caller's identity in `who` (Lua expressions; `""`
 * for a caller that claims no wake), so the heartbeat script can run it
 * too: over HTTP one billed command then both beats and checks. `first` is
 * a Lua expression too (the heartbeat's keys before them vary in number).
 */
export function pollCheckLua(first: string, now: string, who: string): string {
  const k = (i: number) => `KEYS[${first} + ${i}]`;
  // A set of the wrong type reads as due: its step then runs, reports the error, and the other steps go on.
  // The next score is returned as Redis wrote it (Lua would truncate a number in the reply); "" for none.
  return `(function()
  local next = nil
  local function due(key)
    local r = redis.pcall("ZRANGE", key, "-inf", ${now}, "BYSCORE", "LIMIT", 0, 1)
    if r.err then return 1 end
    local after = redis.pcall("ZRANGE", key, "(" .. ${now}, "+inf", "BYSCORE", "LIMIT", 0, 1, "WITHSCORES")
    if not after.err and #after == 2 then
      local score = tonumber(after[2])
      if score and score ~= math.huge and (next == nil or score < tonumber(next)) then next = after[2] end
    end
    return #r
  end
  -- Reads first and the pruning lock last: a read that fails must not leave
  -- the lock taken by a poll that then prunes nothing for a minute.
  local out = {due(${k(0)}), due(${k(1)}), redis.call("SCARD", ${k(2)}), 0, redis.call("HLEN", ${k(4)}), ""}
  for i = ${first} + ${POLL_CHECK_KEYS.length}, #KEYS do out[#out + 1] = due(KEYS[i]) end
  if next and ${who} ~= "" then
    -- One waker per due time: the first to see it (or a sooner one) claims it until a second after.
    local claim = redis.pcall("GET", ${k(5)})
    local at, owner = nil, nil
    if type(claim) == "string" then at, owner = string.match(claim, "^(%S+) (.*)$") end
    -- A claim for a time already past is spent: its entry came due, whoever polled it.
    if at == nil or tonumber(at) == nil or tonumber(at) <= tonumber(${now}) or tonumber(next) < tonumber(at) then
      local ttl = math.max(1, math.floor((tonumber(next) - tonumber(${now})) * 1000) + 1000)
      redis.pcall("SET", ${k(5)}, next .. " " .. ${who}, "PX", ttl)
    elseif not (owner == ${who} and tonumber(at) == tonumber(next)) then
      next = nil
    end
  end
  out[6] = next or ""
  out[4] = redis.call("SET", ${k(3)}, "1", "NX", "EX", 60) and 1 or 0
  return out
end)()`;
}

/**
 * The JavaScript twin of {@link pollCheckLua}: `keys` are the poll keys
 * (fixed, then due), `who` the caller's identity (`""`: no claim).
 *
 * @example
 * ```ts
 * const values = pollCheckTwin(redis, keys.slice(9), argv[7], argv[0]); // [retryDue, scheduleDue, processes, prune, held, next, ...due]
 * ```
 */
export function pollCheckTwin(
  redis: ScriptRedis,
  keys: readonly string[],
  now: string,
  who: string,
): (number | string)[] {
  let next: string | undefined;
  const due = (key: string) => {
    let found: string[];
    try {
      found = redis.call("ZRANGE", key, "-inf", now, "BYSCORE", "LIMIT", 0, 1) as string[];
    } catch {
      return 1;
    }
    const [, score] = redis.call("ZRANGE", key, `(${now}`, "+inf", "BYSCORE", "LIMIT", 0, 1, "WITHSCORES") as string[];
    if (score !== undefined && Number(score) !== Infinity && (next === undefined || Number(score) < Number(next))) {
      next = score;
    }
    return found.length;
  };
  const fixed = [due(keys[0]), due(keys[1]), Number(redis.call("SCARD", keys[2]))];
  const held = Number(redis.call("HLEN", keys[4]));
  const tasks = keys.slice(POLL_CHECK_KEYS.length).map(due);
  if (next !== undefined && who !== "") next = claimWake(redis, keys[5], next, now, who);
  // The pruning lock last, as in the Lua.
  const prune = redis.call("SET", keys[3], "1", "NX", "EX", 60) === "OK" ? 1 : 0;
  return [...fixed, prune, held, next ?? "", ...tasks];
}

/** The twin's claim of a due time: `next` if this caller claimed it (or holds it), else undefined. */
function claimWake(redis: ScriptRedis, key: string, next: string, now: string, who: string): string | undefined {
  let claim: unknown;
  try {
    claim = redis.call("GET", key);
  } catch {
    claim = null;
  }
  const match = typeof claim === "string" ? /^(\S+) (.*)$/s.exec(claim) : null;
  const at = match ? Number(match[1]) : NaN;
  if (Number.isNaN(at) || at <= Number(now) || Number(next) < at) {
    const ttl = Math.max(1, Math.floor((Number(next) - Number(now)) * 1000) + 1000);
    try {
      redis.call("SET", key, `${next} ${who}`, "PX", ttl);
    } catch { /* a key of the wrong type: wake anyway */ }
    return next;
  }
  return match![2] === who && at === Number(next) ? next : undefined;
}

/**
 * Reads the values the poll check returns.
 *
 * @example
 * ```ts
 * const check = decodePollCheck([1, 0, 3, 0, 2, "1700000060.5", 0]); // { retryDue: true, ..., next: 1700000060.5, due: [false] }
 * ```
 */
export function decodePollCheck(reply: RedisReply): PollCheck {
  const [retry, schedule, processes, prune, held, next, ...due] = reply as (number | string)[];
  const at = next === "" || next === null ? NaN : Number(next);
  return {
    retryDue: Number(retry) > 0,
    scheduleDue: Number(schedule) > 0,
    processes: Number(processes),
    prune: Number(prune) === 1,
    heldHashes: Number(held),
    due: due.map((d) => Number(d) > 0),
    next: Number.isFinite(at) ? at : undefined,
  };
}

/**
 * KEYS: `retry`, `schedule`, `processes`, `process_cleanup`, the held-key
 * registry, the wake claim, then due keys (features' poll tasks).
 * ARGV: now (epoch seconds), the caller's identity ("" claims no wake).
 */
export const POLL_CHECK = defineScript<PollCheck>({
  name: "pollCheck",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: [...POLL_CHECK_KEYS, "...due keys"],
  argv: ["now", "identity"],
  lua: `return ${pollCheckLua("1", "ARGV[1]", "ARGV[2]")}`,
  twin: (redis: ScriptRedis, keys: string[], argv: string[]): RedisReply =>
    pollCheckTwin(redis, keys, argv[0], argv[1] ?? ""),
  decode: decodePollCheck,
});
