/**
 * A sharded namespace: one namespace of the cluster layout split into N
 * namespaces ("shards"), each its own hash tag and so its own slot, so one
 * app's queues spread over several Redis Cluster primaries. Each shard is a
 * whole namespace (queues, schedule, retry, dead, processes, stats): every
 * script and MULTI still touches one slot, and nothing in the engine knows
 * about shards. Clients spread their pushes over the shards, a worker serves
 * every shard with an equal share of its slots, and the snapshot (`Stats`,
 * the dashboard's counters) sums them. See docs/cluster.md.
 *
 * Shard 0 is the unsharded namespace itself (`{edgekiq}`), so going from one
 * shard to several keeps what is already there. The others' tags are chosen
 * so the shards' slots are spread evenly over the slot space: cut in N equal
 * arcs, one shard in each. On a cluster whose slots are split evenly (what
 * `redis-cli --cluster create` does), N shards over M primaries put N/M on
 * each when M divides N.
 *
 * @module
 */
import { ConfigError } from "./errors.ts";
import { describeValue } from "./describe_value.ts";
import { DEFAULT_CLUSTER_TAG, type Keyspace } from "./keys.ts";
import { keySlot } from "./key_slot.ts";

/** The most shards a namespace may have. */
export const MAX_SHARDS = 256;

const SLOTS = 16384;

/**
 * Checks `shards` (a whole number from 1 to {@link MAX_SHARDS}, default 1)
 * and that the layout can have them: the Sidekiq layout is one namespace
 * Ruby reads, so only the cluster layout shards.
 *
 * @example
 * ```ts
 * shardCount(8, "cluster", "create client"); // 8
 * shardCount(undefined, "sidekiq", "create client"); // 1
 * ```
 */
export function shardCount(value: unknown, keyspace: Keyspace, action: string): number {
  if (value === undefined || value === 1) return 1;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_SHARDS) {
    throw new ConfigError(
      `Cannot ${action} as 'shards' must be a whole number from 1 to ${MAX_SHARDS}: current value is ${
        describeValue(value)
      }`,
    );
  }
  if (keyspace !== "cluster") {
    throw new ConfigError(
      `Cannot ${action} as 'shards' needs the cluster key layout (keyspace: "cluster", the default on a Redis Cluster transport): current layout is "${keyspace}"`,
    );
  }
  return value;
}

/**
 * The namespace (hash tag, without braces) of every shard of `namespace`:
 * shard 0 is `namespace` itself (or `edgekiq` when none); shard i is
 * `<namespace>#<i>`, or `<namespace>#<i>.<j>` for the first j whose slot
 * falls in the middle of shard i's arc of the slot ring. Deterministic:
 * every client and worker computes the same names, and the first N of N+1
 * shards keep theirs only where the arcs allow (change `shards` only with
 * the namespace drained: see docs/cluster.md).
 *
 * @example
 * ```ts
 * shardNamespaces("orders", 3); // ["orders", "orders#1…", "orders#2…"]
 * ```
 */
export function shardNamespaces(namespace: string, count: number): string[] {
  const base = namespace || DEFAULT_CLUSTER_TAG;
  if (count === 1) return [base];
  // The search costs ~2 × count CRC16s per shard (75 ms for 256 shards): once per namespace and count, not per client
  // (a serverless handler may make one per request).
  const key = `${count}\0${base}`;
  let names = computed.get(key);
  if (!names) computed.set(key, names = searchNamespaces(base, count));
  return [...names];
}

/** Names already searched, by count and namespace (a process uses a handful). */
const computed = new Map<string, readonly string[]>();

function searchNamespaces(base: string, count: number): string[] {
  // The slot ring cut in `count` equal arcs: shard 0 keeps the arc its slot is in, the others take the rest in order,
  // each landing in the middle half of its arc so a cluster split a slot off from even still has one shard per arc.
  const arcOf = (slot: number) => Math.floor((slot * count) / SLOTS);
  const own = arcOf(keySlot(`{${base}}`));
  const arcs = Array.from({ length: count }, (_, i) => i).filter((arc) => arc !== own);
  return [
    base,
    ...arcs.map((arc, index) => {
      const from = (arc * SLOTS) / count;
      const quarter = SLOTS / count / 4;
      const i = index + 1;
      let name = `${base}#${i}`;
      for (let j = 1;; j++) {
        const slot = keySlot(`{${name}}`);
        if (slot >= from + quarter && slot < from + 3 * quarter) return name;
        name = `${base}#${i}.${j}`;
      }
    }),
  ];
}

/**
 * Whether every feature can run in each shard on its own: a feature whose
 * state must be one across the namespace (a unique lock, a batch, a
 * limiter, a leader, a schedule) would be split N ways, so a sharded client
 * or worker refuses it, by name.
 *
 * @example
 * ```ts
 * checkShardable([uniqueJobs()], 8, "create client"); // throws ConfigError
 * ```
 */
export function checkShardable(
  features: readonly { name: string; perShard?: boolean }[],
  count: number,
  action: string,
): void {
  if (count === 1) return;
  const refused = features.filter((f) => f.perShard !== true).map((f) => `'${f.name}'`);
  if (refused.length > 0) {
    throw new ConfigError(
      `Cannot ${action} as 'shards' is ${count} and the feature${refused.length > 1 ? "s" : ""} ${
        refused.join(", ")
      } keep${
        refused.length > 1 ? "" : "s"
      } state that must be one across the namespace (it would be split over the shards): run ${
        refused.length > 1 ? "them" : "it"
      } in an unsharded namespace (its own prefix)`,
    );
  }
}
