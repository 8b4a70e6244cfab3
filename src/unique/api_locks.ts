/**
 * What the admin API does with the locks of the jobs it removes: a job
 * deleted, killed or cleared through the API lets its lock go in the same
 * atomic step as its removal (a compare-and-delete: a lock another copy took
 * since is left alone), so the next push of that job is accepted. Jobs
 * without a lock cost nothing extra.
 *
 * @module
 */
import type { Client } from "../client.ts";
import { RELEASE_KEYS } from "../scripts/fetch.ts";
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisArg, RedisReply } from "../transport/transport.ts";
import { lockOf } from "./mark.ts";

/** Lock keys and `(raw index, jid)` pairs for the locked raws among `raws` (indexes from 1). */
export interface RawLocks {
  readonly keys: string[];
  readonly pairs: RedisArg[];
  /** The jid each lock must hold, in key order. */
  readonly jids: string[];
}

/**
 * The locks `raws` hold in `client`'s namespace, for the scripts below.
 *
 * @example
 * ```ts
 * const { keys, pairs } = locksOf(client, raws); // keys.length === 0: nothing to release
 * ```
 */
export function locksOf(client: Client, raws: readonly string[]): RawLocks {
  const keys: string[] = [];
  const pairs: RedisArg[] = [];
  const jids: string[] = [];
  raws.forEach((raw, i) => {
    const lock = lockOf(raw, client.keys.uniqueLockPrefix);
    if (!lock) return;
    keys.push(lock.key);
    pairs.push(i + 1, lock.jid);
    jids.push(lock.jid);
  });
  return { keys, pairs, jids };
}

/** Lua: release the locks of removed raws; `removed` is a table of flags by raw index. */
const RELEASE_REMOVED_LUA = `
local function releaseRemoved(removed, firstKey, firstPair)
  for j = 0, #KEYS - firstKey do
    local at = firstPair + 2 * j
    if removed[tonumber(ARGV[at])] == 1 and redis.call("GET", KEYS[firstKey + j]) == ARGV[at + 1] then
      redis.call("DEL", KEYS[firstKey + j])
    end
  end
end
`;

/**
 * The twin of the Lua helper above, for scripts' memory twins.
 *
 * @example
 * ```ts
 * releaseRemovedTwin(redis, keys, argv, { removed: [1, 0], firstKey: 2, firstPair: 5 });
 * ```
 */
export function releaseRemovedTwin(
  redis: ScriptRedis,
  keys: string[],
  argv: string[],
  at: { removed: number[]; firstKey: number; firstPair: number },
): void {
  for (let j = 0; at.firstKey + j < keys.length; j++) {
    const pair = at.firstPair + 2 * j;
    const key = keys[at.firstKey + j];
    if (at.removed[Number(argv[pair]) - 1] === 1 && redis.call("GET", key) === argv[pair + 1]) redis.call("DEL", key);
  }
}

/** The Lua helper, for other scripts that remove jobs (the API's kill). */
export const RELEASE_REMOVED: string = RELEASE_REMOVED_LUA;

/**
 * KEYS: a queue list or a sorted set, then one lock per locked raw.
 * ARGV: `list` or `zset`, n, n raws, then per lock: (raw index, jid).
 * Removes each raw (LREM 1 / ZREM); the locks of those removed are
 * released if they still hold their jid. Reply: one flag per raw.
 */
export const REMOVE_RELEASING = defineScript<boolean[]>({
  name: "unique_remove",
  keys: ["queue:<name>|schedule|retry|dead", "...locks"],
  argv: ["list|zset", "n", "...raws", "...(raw index, jid) per lock"],
  lua: RELEASE_REMOVED_LUA + `
local n = tonumber(ARGV[2])
local removed = {}
for i = 1, n do
  if ARGV[1] == "list" then
    removed[i] = redis.call("LREM", KEYS[1], 1, ARGV[2 + i]) > 0 and 1 or 0
  else
    removed[i] = redis.call("ZREM", KEYS[1], ARGV[2 + i])
  end
end
releaseRemoved(removed, 2, 3 + n)
return removed
`,
  twin(redis, keys, argv): RedisReply {
    const n = Number(argv[1]);
    const removed: number[] = [];
    for (let i = 0; i < n; i++) {
      const raw = argv[2 + i];
      const gone = argv[0] === "list" ? redis.call("LREM", keys[0], 1, raw) : redis.call("ZREM", keys[0], raw);
      removed.push(Number(gone) > 0 ? 1 : 0);
    }
    releaseRemovedTwin(redis, keys, argv, { removed, firstKey: 1, firstPair: 2 + n });
    return removed;
  },
  decode: (reply) => (Array.isArray(reply) ? reply.map((flag) => Number(flag) === 1) : []),
});

/**
 * KEYS: a queue list or a sorted set being cleared, `queues`, the unique
 * queue registry, a fresh detached key.
 * ARGV: the queue name (`""` for a sorted set), the detached key's TTL (ms).
 * The queue leaves `queues`. If unique jobs may be inside (the queue is in
 * the registry; for a sorted set, the registry is not empty), the container
 * is renamed to the detached key, which expires, and 1 is returned, for
 * the caller to release their locks at leisure: no job can reach it any
 * more. Otherwise it is deleted and 0 returned.
 */
export const DETACH = defineScript<boolean>({
  name: "unique_detach",
  keys: ["queue:<name>|schedule|retry", "queues", "edgekiq:unique-queues", "detached"],
  argv: ["queue name or empty", "ttl ms"],
  lua: `
local unique
if ARGV[1] ~= "" then
  redis.call("SREM", KEYS[2], ARGV[1])
  unique = redis.call("SISMEMBER", KEYS[3], ARGV[1]) == 1
else
  unique = redis.call("SCARD", KEYS[3]) > 0
end
if unique and redis.call("EXISTS", KEYS[1]) == 1 then
  redis.call("RENAME", KEYS[1], KEYS[4])
  redis.call("PEXPIRE", KEYS[4], ARGV[2])
  return 1
end
redis.call("UNLINK", KEYS[1])
return 0
`,
  twin(redis, keys, argv): RedisReply {
    let unique: boolean;
    if (argv[0] !== "") {
      redis.call("SREM", keys[1], argv[0]);
      unique = redis.call("SISMEMBER", keys[2], argv[0]) === 1;
    } else unique = Number(redis.call("SCARD", keys[2])) > 0;
    if (unique && redis.call("EXISTS", keys[0]) === 1) {
      redis.call("RENAME", keys[0], keys[3]);
      redis.call("PEXPIRE", keys[3], argv[1]);
      return 1;
    }
    redis.call("UNLINK", keys[0]);
    return 0;
  },
  decode: (reply) => Number(reply) === 1,
});

/** Raws read per round trip when releasing a cleared container's locks. */
const SWEEP_PAGE = 500;
/** How long a detached container may outlive a sweep that died half-way. */
const DETACHED_TTL_MS = 60 * 60 * 1000;

/**
 * Removes raws from a queue list or a job set, releasing the locks of those
 * removed in the same script. Raws without a lock take the plain command
 * (LREM / ZREM). Resolves to one flag per raw.
 *
 * @example
 * ```ts
 * const [gone] = await removeReleasing(client, client.keys.queue("default"), "list", [raw]);
 * ```
 */
export async function removeReleasing(
  client: Client,
  key: string,
  kind: "list" | "zset",
  raws: readonly string[],
): Promise<boolean[]> {
  const locks = locksOf(client, raws);
  if (locks.keys.length === 0) {
    const replies = await client.transport.pipeline(
      raws.map((raw) => kind === "list" ? ["LREM", key, 1, raw] as const : ["ZREM", key, raw] as const),
    );
    return replies.map((reply) => Number(reply) > 0);
  }
  return await client.transport.script(REMOVE_RELEASING, [key, ...locks.keys], [
    kind,
    raws.length,
    ...raws,
    ...locks.pairs,
  ]);
}

/**
 * Empties a queue list (`queue` its name) or a job set (`queue` undefined)
 * and releases the locks of the unique jobs it held. Costs one script when
 * no unique job was ever pushed to it; else the container is detached
 * atomically (nothing can take a job from it any more) and read a page per
 * round trip to release the locks, then deleted.
 *
 * @example
 * ```ts
 * await clearReleasing(client, client.keys.queue("low"), "low");
 * ```
 */
export async function clearReleasing(client: Client, key: string, queue?: string): Promise<void> {
  const k = client.keys;
  const detached = `${k.uniqueLockPrefix.replace(/unique:$/, "unique-cleared:")}${crypto.randomUUID()}`;
  const kind = queue === undefined ? "zset" : "list";
  if (
    !await client.transport.script(DETACH, [key, k.queues, k.uniqueQueues, detached], [queue ?? "", DETACHED_TTL_MS])
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
    const locks = locksOf(client, raws);
    if (locks.keys.length) await client.transport.script(RELEASE_KEYS, locks.keys, locks.jids);
    if (raws.length < SWEEP_PAGE) break;
  }
  await client.transport.call("UNLINK", detached);
}
