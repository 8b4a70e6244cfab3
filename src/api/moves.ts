/**
 * Atomic moves out of `schedule`, `retry` and `dead`: to a queue, or to the
 * dead set. Each script removes the exact raw member first and acts only if
 * that removal happened, so two callers racing for one entry move it once,
 * and an entry is never both pushed and kept.
 *
 * @module
 */
import type { Client } from "../client.ts";
import { type JobPayload, parsePayload, serializePayload, wireTime } from "../payload.ts";
import { deadTrim, type DeathHandler } from "../dead_set_rules.ts";
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisArg, RedisReply, Transport } from "../transport/transport.ts";
import { formatOf } from "./util.ts";
import { locksOf, RELEASE_REMOVED, releaseRemovedTwin } from "../unique/api_locks.ts";
import { readMark } from "../unique/mark.ts";

/** Per-entry outcome flags (1 moved, 0 already gone), in ARGV order. */
function flags(reply: RedisReply): boolean[] {
  return Array.isArray(reply) ? reply.map((flag) => Number(flag) === 1) : [];
}

/**
 * KEYS: the sorted set, `queues`, then queue lists k1..km, then one lock per
 * locked entry.
 * ARGV: m, queue names for k1..km, t, then t triples of (raw entry, new
 * payload, target) where target is a queue index 1..m, or 0 to only remove
 * the entry (client middleware stopped the push), then per lock: (triple
 * index, jid, ttl ms).
 * A unique job moved to a queue keeps its lock; with a ttl (a dead job,
 * whose lock went when it died) it takes the lock again if it is free
 * (`SET NX`), never another copy's. A unique job removed without a push lets
 * its lock go. Returns one flag per triple: 1 if the entry was removed (and
 * pushed).
 */
export const ENQUEUE_ENTRIES = defineScript<boolean[]>({
  name: "api_enqueue",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["schedule|retry|dead", "queues", "...queue:<name> lists", "...locks"],
  argv: ["m", "...queue names", "t", "...(raw, payload, target) triples", "...(triple index, jid, ttl ms) per lock"],
  lua: `
local m = tonumber(ARGV[1])
local t = tonumber(ARGV[m + 2])
local out = {}
for i = m + 3, m + 2 + 3 * t, 3 do
  if redis.call("ZREM", KEYS[1], ARGV[i]) == 1 then
    local target = tonumber(ARGV[i + 2])
    if target > 0 then
      redis.call("SADD", KEYS[2], ARGV[1 + target])
      redis.call("LPUSH", KEYS[2 + target], ARGV[i + 1])
    end
    out[#out + 1] = target > 0 and 1 or 2
  else
    out[#out + 1] = 0
  end
end
local at = m + 3 + 3 * t
for j = 3 + m, #KEYS do
  local moved = out[tonumber(ARGV[at])]
  if moved == 1 and tonumber(ARGV[at + 2]) > 0 then
    redis.call("SET", KEYS[j], ARGV[at + 1], "NX", "PX", ARGV[at + 2])
  elseif moved == 2 and redis.call("GET", KEYS[j]) == ARGV[at + 1] then
    redis.call("DEL", KEYS[j])
  end
  at = at + 3
end
for i = 1, #out do if out[i] == 2 then out[i] = 1 end end
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const m = Number(argv[0]);
    const t = Number(argv[m + 1]);
    const out: number[] = [];
    for (let i = m + 2; i < m + 2 + 3 * t; i += 3) {
      if (redis.call("ZREM", keys[0], argv[i]) !== 1) {
        out.push(0);
        continue;
      }
      const target = Number(argv[i + 2]);
      if (target > 0) {
        redis.call("SADD", keys[1], argv[target]);
        redis.call("LPUSH", keys[1 + target], argv[i + 1]);
      }
      out.push(target > 0 ? 1 : 2);
    }
    let at = m + 2 + 3 * t;
    for (let j = 2 + m; j < keys.length; j++, at += 3) {
      const moved = out[Number(argv[at]) - 1];
      if (moved === 1 && Number(argv[at + 2]) > 0) redis.call("SET", keys[j], argv[at + 1], "NX", "PX", argv[at + 2]);
      else if (moved === 2 && redis.call("GET", keys[j]) === argv[at + 1]) redis.call("DEL", keys[j]);
    }
    return out.map((flag) => (flag === 2 ? 1 : flag));
  },
  decode: flags,
});

/**
 * KEYS: the sorted set, `dead`, then one lock per locked entry.
 * ARGV: now (epoch seconds), oldest score kept, trim rank (negative), n,
 * n raw entries, then per lock: (entry index, jid).
 * Each entry is moved to `dead` (scored now) only if it was still in the
 * set, and the lock of a unique job moved is released (a dead job holds no
 * lock, as when it dies in a worker); then `dead` is trimmed by age and
 * size, as Sidekiq's `DeadSet#kill`. Returns one flag per entry: 1 if it moved.
 */
export const KILL_ENTRIES = defineScript<boolean[]>({
  name: "api_kill",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["schedule|retry|dead", "dead", "...locks"],
  argv: ["now", "cutoff", "trimRank", "n", "...raw entries", "...(entry index, jid) per lock"],
  lua: RELEASE_REMOVED + `
local n = tonumber(ARGV[4])
local out = {}
for i = 5, 4 + n do
  if redis.call("ZREM", KEYS[1], ARGV[i]) == 1 then
    redis.call("ZADD", KEYS[2], ARGV[1], ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
releaseRemoved(out, 3, 5 + n)
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", ARGV[2])
redis.call("ZREMRANGEBYRANK", KEYS[2], 0, ARGV[3])
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const n = Number(argv[3]);
    const out: number[] = [];
    for (let i = 4; i < 4 + n; i++) {
      if (redis.call("ZREM", keys[0], argv[i]) === 1) {
        redis.call("ZADD", keys[1], argv[0], argv[i]);
        out.push(1);
      } else {
        out.push(0);
      }
    }
    releaseRemovedTwin(redis, keys, argv, { removed: out, firstKey: 2, firstPair: 4 + n });
    redis.call("ZREMRANGEBYSCORE", keys[1], "-inf", argv[1]);
    redis.call("ZREMRANGEBYRANK", keys[1], 0, argv[2]);
    return out;
  },
  decode: flags,
});

/**
 * Moves raw entries of the sorted set `setKey` to their queues in one
 * script call, each only if still in the set. Client middleware runs on
 * each (a stopped push just removes the entry, as Sidekiq), `enqueued_at`
 * becomes now and, with `retry`, `retry_count` is decremented. A unique job
 * keeps its lock; one retried from the dead set takes it again if free. Unknown
 * fields are kept; times keep the payload's own format. Unreadable entries
 * stay put. Returns one flag per raw: whether it left the set.
 *
 * @example
 * ```ts
 * const [moved] = await enqueueFromSet(client, client.keys.retry, [raw], true);
 * ```
 */
export async function enqueueFromSet(
  client: Client,
  setKey: string,
  raws: readonly string[],
  retry: boolean,
): Promise<boolean[]> {
  const queues = new Map<string, number>();
  const triples: RedisArg[] = [];
  const index: number[] = [];
  const lockKeys: string[] = [];
  const lockArgs: RedisArg[] = [];
  for (let i = 0; i < raws.length; i++) {
    let payload: JobPayload;
    try {
      payload = parsePayload(raws[i]);
    } catch {
      continue;
    }
    const format = formatOf(payload, client.timeFormat);
    if (retry && typeof payload.retry_count === "number") payload.retry_count -= 1;
    const mark = readMark(payload);
    const out = await client.applyMiddleware(payload);
    index.push(i);
    if (mark?.key.startsWith(client.keys.uniqueLockPrefix)) {
      // Only a dead job's lock is gone (released when it died): take it again.
      lockKeys.push(mark.key);
      lockArgs.push(index.length, payload.jid, setKey === client.keys.dead ? Math.ceil(mark.for * 1000) : 0);
    }
    if (!out) {
      triples.push(raws[i], "", 0);
      continue;
    }
    out.enqueued_at = wireTime(Date.now(), format);
    let target = queues.get(out.queue);
    if (target === undefined) queues.set(out.queue, target = queues.size + 1);
    triples.push(raws[i], serializePayload(out, format), target);
  }
  const flags = raws.map(() => false);
  if (index.length === 0) return flags;
  const names = [...queues.keys()];
  const moved = await client.transport.script(
    ENQUEUE_ENTRIES,
    [setKey, client.keys.queues, ...names.map((q) => client.keys.queue(q)), ...lockKeys],
    [names.length, ...names, index.length, ...triples, ...lockArgs],
  );
  index.forEach((at, i) => flags[at] = moved[i] === true);
  return flags;
}

/**
 * Moves raw entries of `setKey` to the dead set in one script call, each
 * only if still there, releasing the locks of unique jobs moved, and trims
 * `dead` by age and size. Returns one flag per raw.
 *
 * @example
 * ```ts
 * const [killed] = await killFromSet(client, client.keys.retry, [raw]);
 * ```
 */
export async function killFromSet(client: Client, setKey: string, raws: readonly string[]): Promise<boolean[]> {
  if (raws.length === 0) return [];
  const now = Date.now() / 1000;
  const locks = locksOf(client, raws);
  const flags = await client.transport.script(
    KILL_ENTRIES,
    [setKey, client.keys.dead, ...locks.keys],
    [now, ...deadTrim(now), raws.length, ...raws, ...locks.pairs],
  );
  return raws.map((_, i) => flags[i] === true);
}

/**
 * Runs death handlers, in order, for one raw job; skipped if the job cannot
 * be read. A handler that throws stops the rest and rejects.
 *
 * @example
 * ```ts
 * await notifyDeath(handlers, raw, new Error("Job killed by API"));
 * ```
 */
export async function notifyDeath(handlers: readonly DeathHandler[], raw: string, error: unknown): Promise<void> {
  if (handlers.length === 0) return;
  let payload: JobPayload;
  try {
    payload = parsePayload(raw);
  } catch {
    return;
  }
  for (const handler of handlers) await handler(payload, error);
}

/**
 * Applies `act` to every entry of `setKey`, a batch of 100 per round trip,
 * lowest score first, until the set is empty or only holds entries `act`
 * left in place because they cannot be read. Returns how many `act` moved.
 *
 * @example
 * ```ts
 * await drainSet(transport, keys.retry, (raws) => killFromSet(client, keys.retry, raws));
 * ```
 */
export async function drainSet(
  transport: Transport,
  setKey: string,
  act: (raws: string[]) => Promise<boolean[]>,
): Promise<number> {
  let total = 0;
  let stuck = 0;
  for (;;) {
    const reply = await transport.call("ZRANGE", setKey, stuck, stuck + 99);
    const raws = (Array.isArray(reply) ? reply : []).map(String);
    if (raws.length === 0) return total;
    const moved = await act(raws);
    for (let i = 0; i < raws.length; i++) {
      if (moved[i]) total++;
      else if (!readable(raws[i])) stuck++; // left in the set: step over it
    }
  }
}

function readable(raw: string): boolean {
  try {
    parsePayload(raw);
    return true;
  } catch {
    return false;
  }
}
