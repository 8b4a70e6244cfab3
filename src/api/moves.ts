/**
 * Atomic moves of jobs the API did not run: out of `schedule`, `retry` and
 * `dead` to a queue or to the dead set, and deletes from any of them or
 * from a queue. Each script removes the exact raw member first and acts only
 * if that removal happened, so two callers racing for one entry move it
 * once, and an entry is never both pushed and kept. Features' entry ops
 * (`entry_ops.ts`: a unique job's lock, say) are applied in the same step,
 * for the entries that moved.
 *
 * @module
 */
import { type Client, moveThroughMiddleware } from "../client.ts";
import { type JobPayload, parsePayload, serializePayload, wireTime } from "../payload.ts";
import { deadTrim, type DeathHandler } from "../dead_set_rules.ts";
import {
  APPLY_ENTRY_OPS,
  applyEntryOpsTwin,
  ENTRY_OPS_LUA,
  type EntryAction,
  type EntryHome,
  type EntryHooks,
  type EntryOpArgs,
  entryOps,
} from "../entry_ops.ts";
import { holds, KEY_TYPES_LUA, refusal } from "../scripts/key_types.ts";
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisArg, RedisReply, Transport } from "../transport/transport.ts";
import { formatOf } from "./payload_format.ts";

/** Per-entry outcome flags (1 moved, 0 already gone), in ARGV order. */
function flags(reply: RedisReply): boolean[] {
  return Array.isArray(reply) ? reply.map((flag) => Number(flag) === 1) : [];
}

/** The entry hooks of a client's features. */
function hooksOf(client: Client<object>): EntryHooks[] {
  return client.features.flatMap((f) => (f.entries ? [f.entries] : []));
}

/** The entry ops of `client`'s features for `raws`. */
function opsOf(client: Client<object>, raws: readonly string[], action: EntryAction, from: EntryHome): EntryOpArgs {
  return entryOps(hooksOf(client), raws, action, { keys: client.keys, from });
}

/**
 * KEYS: the sorted set, `queues`, then queue lists k1..km, then one key per
 * entry op.
 * ARGV: m, queue names for k1..km, t, then t triples of (raw entry, new
 * payload, target) where target is a queue index 1..m, or 0 to only remove
 * the entry (client middleware stopped the push), then per entry op: (triple
 * index, op, value, ttl ms). Returns one flag per triple: 1 if the entry was
 * removed (and pushed); the entry ops of removed entries are applied.
 * `queues` and every queue list are type-checked first: a key of another
 * type refuses the whole call with nothing moved.
 */
export const ENQUEUE_ENTRIES = defineScript<boolean[]>({
  name: "api_enqueue",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["schedule|retry|dead", "queues", "...queue:<name> lists", "...entry op keys"],
  argv: ["m", "...queue names", "t", "...(raw, payload, target) triples", "...(triple index, op, value, ttl ms)"],
  lua: ENTRY_OPS_LUA + KEY_TYPES_LUA + `
local m = tonumber(ARGV[1])
local t = tonumber(ARGV[m + 2])
if not holds(KEYS[2], "set") then return refuse(KEYS[2], "set") end
for j = 1, m do
  if not holds(KEYS[2 + j], "list") then return refuse(KEYS[2 + j], "list") end
end
local out = {}
for i = m + 3, m + 2 + 3 * t, 3 do
  if redis.call("ZREM", KEYS[1], ARGV[i]) == 1 then
    local target = tonumber(ARGV[i + 2])
    if target > 0 then
      redis.call("SADD", KEYS[2], ARGV[1 + target])
      redis.call("LPUSH", KEYS[2 + target], ARGV[i + 1])
    end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
applyEntryOps(out, 3 + m, m + 3 + 3 * t)
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const m = Number(argv[0]);
    const t = Number(argv[m + 1]);
    if (!holds(redis, keys[1], "set")) throw refusal(keys[1], "set");
    for (let j = 1; j <= m; j++) if (!holds(redis, keys[1 + j], "list")) throw refusal(keys[1 + j], "list");
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
      out.push(1);
    }
    applyEntryOpsTwin(redis, keys, argv, { moved: out, firstKey: 2 + m, firstArg: m + 2 + 3 * t });
    return out;
  },
  decode: flags,
});

/**
 * KEYS: the sorted set, `dead`, then one key per entry op.
 * ARGV: now (epoch seconds), oldest score kept, trim rank (negative), n,
 * n raw entries, then per entry op: (entry index, op, value, ttl ms).
 * Each entry is moved to `dead` (scored now) only if it was still in the
 * set, with its entry ops; then `dead` is trimmed by age and size, as
 * Sidekiq's `DeadSet#kill`. Returns one flag per entry: 1 if it moved.
 * A `dead` of another type refuses the call with nothing moved.
 */
export const KILL_ENTRIES = defineScript<boolean[]>({
  name: "api_kill",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["schedule|retry|dead", "dead", "...entry op keys"],
  argv: ["now", "cutoff", "trimRank", "n", "...raw entries", "...(entry index, op, value, ttl ms)"],
  lua: ENTRY_OPS_LUA + KEY_TYPES_LUA + `
local n = tonumber(ARGV[4])
if not holds(KEYS[2], "zset") then return refuse(KEYS[2], "zset") end
local out = {}
for i = 5, 4 + n do
  if redis.call("ZREM", KEYS[1], ARGV[i]) == 1 then
    redis.call("ZADD", KEYS[2], ARGV[1], ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
applyEntryOps(out, 3, 5 + n)
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", ARGV[2])
redis.call("ZREMRANGEBYRANK", KEYS[2], 0, ARGV[3])
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const n = Number(argv[3]);
    if (!holds(redis, keys[1], "zset")) throw refusal(keys[1], "zset");
    const out: number[] = [];
    for (let i = 4; i < 4 + n; i++) {
      if (redis.call("ZREM", keys[0], argv[i]) === 1) {
        redis.call("ZADD", keys[1], argv[0], argv[i]);
        out.push(1);
      } else {
        out.push(0);
      }
    }
    applyEntryOpsTwin(redis, keys, argv, { moved: out, firstKey: 2, firstArg: 4 + n });
    redis.call("ZREMRANGEBYSCORE", keys[1], "-inf", argv[1]);
    redis.call("ZREMRANGEBYRANK", keys[1], 0, argv[2]);
    return out;
  },
  decode: flags,
});

/**
 * KEYS: a queue list or a sorted set, then one key per entry op.
 * ARGV: `list` or `zset`, n, n raws, then per entry op: (raw index, op,
 * value, ttl ms). Removes each raw (LREM 1 / ZREM), with the entry ops of
 * those removed. Reply: one flag per raw.
 */
export const REMOVE_ENTRIES = defineScript<boolean[]>({
  name: "api_remove",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["queue:<name>|schedule|retry|dead", "...entry op keys"],
  argv: ["list|zset", "n", "...raws", "...(raw index, op, value, ttl ms)"],
  lua: ENTRY_OPS_LUA + `
local n = tonumber(ARGV[2])
local removed = {}
for i = 1, n do
  if ARGV[1] == "list" then
    removed[i] = redis.call("LREM", KEYS[1], 1, ARGV[2 + i]) > 0 and 1 or 0
  else
    removed[i] = redis.call("ZREM", KEYS[1], ARGV[2 + i])
  end
end
applyEntryOps(removed, 2, 3 + n)
return removed
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const n = Number(argv[1]);
    const removed: number[] = [];
    for (let i = 0; i < n; i++) {
      const raw = argv[2 + i];
      const gone = argv[0] === "list" ? redis.call("LREM", keys[0], 1, raw) : redis.call("ZREM", keys[0], raw);
      removed.push(Number(gone) > 0 ? 1 : 0);
    }
    applyEntryOpsTwin(redis, keys, argv, { moved: removed, firstKey: 1, firstArg: 2 + n });
    return removed;
  },
  decode: flags,
});

/**
 * KEYS: a queue list or a sorted set being cleared, `queues`, a fresh
 * detached key, then the features' registries (sets of queue names).
 * ARGV: the queue name (`""` for a sorted set), the detached key's TTL (ms),
 * whether every clear must be read (1: a feature without a registry).
 * The queue leaves `queues`. If a feature may have entry ops for its jobs
 * (the queue is in a registry; for a sorted set, a registry is not empty;
 * or ARGV[3] is 1), the container is renamed to the detached key, which
 * expires, and 1 is returned, for the caller to apply their ops at leisure:
 * no job can reach it any more. Otherwise it is deleted and 0 returned.
 */
export const DETACH = defineScript<boolean>({
  name: "api_detach",
  keys: ["queue:<name>|schedule|retry", "queues", "detached", "...registries"],
  argv: ["queue name or empty", "ttl ms", "always"],
  lua: `
local read = ARGV[3] == "1"
-- The registries are read before anything is written: one of another type
-- fails the call with the queue still listed and whole.
for i = 4, #KEYS do
  if ARGV[1] ~= "" then
    read = read or redis.call("SISMEMBER", KEYS[i], ARGV[1]) == 1
  else
    read = read or redis.call("SCARD", KEYS[i]) > 0
  end
end
if ARGV[1] ~= "" then redis.call("SREM", KEYS[2], ARGV[1]) end
if read and redis.call("EXISTS", KEYS[1]) == 1 then
  redis.call("RENAME", KEYS[1], KEYS[3])
  redis.call("PEXPIRE", KEYS[3], ARGV[2])
  return 1
end
redis.call("UNLINK", KEYS[1])
return 0
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    let read = argv[2] === "1";
    for (let i = 3; i < keys.length; i++) {
      read ||= argv[0] !== ""
        ? redis.call("SISMEMBER", keys[i], argv[0]) === 1
        : Number(redis.call("SCARD", keys[i])) > 0;
    }
    if (argv[0] !== "") redis.call("SREM", keys[1], argv[0]);
    if (read && redis.call("EXISTS", keys[0]) === 1) {
      redis.call("RENAME", keys[0], keys[2]);
      redis.call("PEXPIRE", keys[2], argv[1]);
      return 1;
    }
    redis.call("UNLINK", keys[0]);
    return 0;
  },
  decode: (reply) => Number(reply) === 1,
});

/** Raws read per round trip when applying a cleared container's entry ops. */
const SWEEP_PAGE = 500;
/** How long a detached container may outlive a sweep that died half-way. */
const DETACHED_TTL_MS = 60 * 60 * 1000;

/**
 * Removes raws from a queue list or a job set, with their features' entry
 * ops in the same script. Raws with no op take the plain command (LREM /
 * ZREM). Resolves to one flag per raw.
 *
 * @example
 * ```ts
 * const [gone] = await removeEntries(client, { key: client.keys.queue("default"), home: "queue" }, [raw]);
 * ```
 */
export async function removeEntries(
  client: Client<object>,
  container: { key: string; home: EntryHome },
  raws: readonly string[],
): Promise<boolean[]> {
  const ops = opsOf(client, raws, "delete", container.home);
  const kind = container.home === "queue" ? "list" : "zset";
  if (ops.keys.length === 0) {
    const replies = await client.transport.pipeline(
      raws.map((raw) =>
        kind === "list" ? ["LREM", container.key, 1, raw] as const : ["ZREM", container.key, raw] as const
      ),
    );
    return replies.map((reply) => Number(reply) > 0);
  }
  return await client.transport.script(REMOVE_ENTRIES, [container.key, ...ops.keys], [
    kind,
    raws.length,
    ...raws,
    ...ops.args,
  ]);
}

/**
 * Empties a queue list (`queue` its name) or a job set and applies its
 * jobs' entry ops (a unique job's lock is released). Costs one script when
 * no feature may have ops for it; else the container is detached atomically
 * (nothing can take a job from it any more) and read a page per round trip
 * to apply the ops, then deleted.
 *
 * @example
 * ```ts
 * await clearEntries(client, { key: client.keys.queue("low"), home: "queue", queue: "low" });
 * ```
 */
export async function clearEntries(
  client: Client<object>,
  container: { key: string; home: EntryHome; queue?: string },
): Promise<void> {
  const k = client.keys;
  const hooks = hooksOf(client);
  const registries = hooks.flatMap((h) => (h.registry ? [h.registry(k)] : []));
  const always = hooks.some((h) => !h.registry);
  const detached = `${k.prefix ? `${k.prefix}:` : ""}edgekiq:cleared:${crypto.randomUUID()}`;
  const kind = container.home === "queue" ? "list" : "zset";
  if (
    !await client.transport.script(
      DETACH,
      [container.key, k.queues, detached, ...registries],
      [container.queue ?? "", DETACHED_TTL_MS, always ? 1 : 0],
    )
  ) {
    return;
  }
  for (let start = 0;; start += SWEEP_PAGE) {
    const page = await client.transport.call(
      kind === "list" ? "LRANGE" : "ZRANGE",
      detached,
      start,
      start + SWEEP_PAGE - 1,
    );
    const raws = Array.isArray(page) ? page.map(String) : [];
    await applyOps(client, opsOf(client, raws, "delete", container.home));
    if (raws.length < SWEEP_PAGE) break;
  }
  await client.transport.call("UNLINK", detached);
}

/**
 * Applies entry ops on their own, for entries already moved.
 *
 * @example
 * ```ts
 * await applyOps(client, opsOf(client, [raw], "kill", "dead"));
 * ```
 */
async function applyOps(client: Client<object>, ops: EntryOpArgs): Promise<void> {
  if (ops.keys.length) await client.transport.script(APPLY_ENTRY_OPS, ops.keys, ops.args);
}

/**
 * Applies the entry ops of killing `raws` (a dead job holds nothing a
 * feature gave it: a unique job's lock goes, as when it dies in a worker).
 *
 * @example
 * ```ts
 * await applyKillOps(client, [raw]);
 * ```
 */
export function applyKillOps(client: Client<object>, raws: readonly string[]): Promise<void> {
  return applyOps(client, opsOf(client, raws, "kill", "dead"));
}

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
  client: Client<object>,
  setKey: string,
  raws: readonly string[],
  retry: boolean,
): Promise<boolean[]> {
  const queues = new Map<string, number>();
  const triples: RedisArg[] = [];
  const moved: string[] = [];
  const stopped: string[] = [];
  const from = homeOf(client, setKey);
  for (let i = 0; i < raws.length; i++) {
    let payload: JobPayload;
    try {
      payload = parsePayload(raws[i]);
    } catch {
      continue;
    }
    const format = formatOf(payload, client.timeFormat);
    if (retry && typeof payload.retry_count === "number") payload.retry_count -= 1;
    const out = await moveThroughMiddleware(client, payload);
    if (!out) {
      // Stopped by a middleware: the entry is removed without a push, a delete for the features.
      stopped.push(raws[i]);
      moved.push(raws[i]);
      triples.push(raws[i], "", 0);
      continue;
    }
    moved.push(raws[i]);
    out.enqueued_at = wireTime(Date.now(), format);
    let target = queues.get(out.queue);
    if (target === undefined) queues.set(out.queue, target = queues.size + 1);
    triples.push(raws[i], serializePayload(out, format), target);
  }
  const flags = raws.map(() => false);
  if (moved.length === 0) return flags;
  const hooks = hooksOf(client);
  const ops = entryOps(
    hooks,
    moved,
    "enqueue",
    { keys: client.keys, from },
  );
  if (stopped.length) {
    const set = new Set(stopped);
    const deletes = moved.map((raw) => (set.has(raw) ? raw : ""));
    const more = entryOps(hooks, deletes, "delete", { keys: client.keys, from });
    ops.keys.push(...more.keys);
    ops.args.push(...more.args);
  }
  const names = [...queues.keys()];
  const result = await client.transport.script(
    ENQUEUE_ENTRIES,
    [setKey, client.keys.queues, ...names.map((q) => client.keys.queue(q)), ...ops.keys],
    [names.length, ...names, moved.length, ...triples, ...ops.args],
  );
  let at = 0;
  raws.forEach((raw, i) => {
    if (at < moved.length && moved[at] === raw) flags[i] = result[at++] === true;
  });
  return flags;
}

/** Which of the client's sorted sets `setKey` is. */
function homeOf(client: Client<object>, setKey: string): EntryHome {
  const k = client.keys;
  return setKey === k.dead ? "dead" : setKey === k.retry ? "retry" : "schedule";
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
export async function killFromSet(client: Client<object>, setKey: string, raws: readonly string[]): Promise<boolean[]> {
  if (raws.length === 0) return [];
  const now = Date.now() / 1000;
  const ops = opsOf(client, raws, "kill", homeOf(client, setKey));
  const flags = await client.transport.script(
    KILL_ENTRIES,
    [setKey, client.keys.dead, ...ops.keys],
    [now, ...deadTrim(now), raws.length, ...raws, ...ops.args],
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
