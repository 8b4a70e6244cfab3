/**
 * Every Redis key name edgekiq reads or writes, in one place.
 *
 * Sidekiq's own keys keep Sidekiq's names exactly (`queues`, `queue:<name>`,
 * `schedule`, `retry`, `dead`, `processes`, `stat:processed`, ...), because a
 * Ruby Sidekiq process and its Web UI read the same Redis. Keys only edgekiq
 * uses start with `edgekiq:` so they never collide with Sidekiq's.
 *
 * The cluster layout (`keyspace: "cluster"`, the default on a Redis Cluster
 * transport) wraps the namespace in a hash tag: `{edgekiq}:queue:default`,
 * `{app}:retry`. Every key of one namespace then lives in one slot, so every
 * script and MULTI stays single-slot; different namespaces (apps) land on
 * different slots and so, usually, on different primaries. See docs/cluster.md
 * for what this does and does not spread.
 *
 * @module
 */
import { ConfigError } from "./errors.ts";
import { describeValue } from "./describe_value.ts";

/**
 * Which key layout: `"sidekiq"` (Sidekiq's names, wire-compatible with Ruby)
 * or `"cluster"` (the same names under one hash tag per namespace, for Redis
 * Cluster; edgekiq-only).
 */
export type Keyspace = "sidekiq" | "cluster";

/** The namespace a cluster layout without a prefix uses as its hash tag. */
export const DEFAULT_CLUSTER_TAG = "edgekiq";

/**
 * The keys for a namespace on a transport: the layout is `options.keyspace`,
 * else the one the transport needs (`"cluster"` on a cluster transport), else
 * Sidekiq's. A Sidekiq layout on a cluster transport is refused: its scripts
 * would touch keys in different slots (CROSSSLOT).
 *
 * @example
 * ```ts
 * keysFor({}, { prefix: "app" }).retry; // "app:retry"
 * keysFor({ keyspace: "cluster" }, { prefix: "app" }).retry; // "{app}:retry"
 * ```
 */
export function keysFor(
  transport: { readonly keyspace?: "cluster" },
  options: { prefix?: string; keyspace?: Keyspace },
  action = "create client",
): Keys {
  const wanted = options.keyspace;
  if (wanted !== undefined && wanted !== "sidekiq" && wanted !== "cluster") {
    throw new ConfigError(
      `Cannot ${action} as 'keyspace' must be "sidekiq" or "cluster": current value is ${describeValue(wanted)}`,
    );
  }
  if (wanted === "sidekiq" && transport.keyspace === "cluster") {
    throw new ConfigError(
      `Cannot ${action} as 'keyspace' must be "cluster" on a Redis Cluster transport (Sidekiq's layout spreads one script's keys over several slots): current value is "sidekiq"`,
    );
  }
  return keys(options.prefix, wanted ?? transport.keyspace ?? "sidekiq");
}

/** The key names for one namespace. */
export interface Keys {
  /** The namespace prefix, `""` when none (Sidekiq's default); in the cluster layout, the hash tag (`{app}`). */
  readonly prefix: string;
  /** Which layout these names follow. */
  readonly keyspace: Keyspace;
  /** Set of every queue name ever pushed to. */
  readonly queues: string;
  /** Sorted set of scheduled jobs, scored by run time (epoch seconds). */
  readonly schedule: string;
  /** Sorted set of jobs waiting to retry, scored by retry time. */
  readonly retry: string;
  /** Sorted set of dead jobs, scored by death time. */
  readonly dead: string;
  /** Set of live process identities. */
  readonly processes: string;
  /** Lock the poller takes (SET NX EX 60) before pruning dead processes. */
  readonly processCleanup: string;
  /** Hash of held-hash key -> owning process identity: what recovery walks (the key is `edgekiq:inflight`). */
  readonly heldRegistry: string;
  /** The list a queue's jobs wait in. */
  queue(name: string): string;
  /** A process's info hash. */
  process(identity: string): string;
  /** A process's in-flight work hash. */
  work(identity: string): string;
  /** The same work hash under Sidekiq 6's name (`<identity>:workers`), which 6.x's API and Web UI read. */
  legacyWork(identity: string): string;
  /** A process's remote-signal list. */
  signals(identity: string): string;
  /** A lifetime counter: `stat:processed` or `stat:failed`. */
  stat(name: "processed" | "failed"): string;
  /** A daily counter: `stat:processed:2024-01-31`. */
  statDay(name: "processed" | "failed", day: string): string;
  /**
   * The held hash: the jobs one capsule of one process took with reliable
   * fetch, from any of its queues, until their outcome is durable (layout in
   * `scripts/held.ts`).
   */
  held(identity: string, capsule: string): string;
  /** The transit list a blocking fetch on `queue` moves one job into, next to its held hash. */
  landing(heldKey: string, queue: string): string;
  /** Splits a held key into its owner and capsule (undefined if it is not one). */
  parseHeld(key: string): { identity: string; capsule: string } | undefined;
  /** An iterable job's state hash, Sidekiq 7.3's `it-<jid>` (so Ruby's `cancel!` reaches edgekiq jobs). */
  iteration(jid: string): string;
  /** Marks a dashboard "all" action's one-time token as used (SET NX EX), so a replayed form does nothing. */
  webAction(token: string): string;
  /** Strips the prefix and `queue:` from a queue key, the inverse of {@link Keys.queue}. */
  queueName(queueKey: string): string;
  /** Sidekiq's execution-metrics hash for one time bucket: `j|250214|8:05` (7.x: `j|20250214|8:5`). */
  metrics(bucket: string): string;
  /** Sidekiq 8's execution-time histogram of one class for one minute: `h|HardJob-14-8:5`. */
  histogram(className: string, window: string): string;
  /** Sidekiq 7's name for the same histogram: `HardJob-14-08:5`. */
  legacyHistogram(className: string, window: string): string;
  /** Sidekiq's deploy marks of one UTC day: `20250214-marks`. */
  deployMarks(day: string): string;
  /** Sidekiq's lock against marking one deploy label twice within a minute. */
  deployLock(label: string): string;
  /** The highest metrics flush applied for one tracker, so a resent flush is not counted twice. */
  metricsFlushed(trackerId: string): string;
  /**
   * Sorted set of every periodic schedule, scored by its next due tick (epoch
   * seconds; `+inf` while paused), so "is anything due?" is one `ZRANGE BYSCORE LIMIT 0 1`.
   */
  readonly periodicDue: string;
  /** A periodic schedule's hash: spec, owners' leases, last run. */
  periodicSchedule(name: string): string;
  /** The registration record of one periodic owner: digest, lease, schedule names. */
  periodicOwner(owner: string): string;
  /** sidekiq-cron's hash of one cron job (its name, as sidekiq-cron writes it). */
  sidekiqCronJob(name: string): string;
  /** sidekiq-cron's claims of one job's ticks: sorted set of ISO-8601 tick times. */
  sidekiqCronEnqueued(name: string): string;
  /** sidekiq-cron's list of one job's last enqueues (jid and time), for its Web UI. */
  sidekiqCronHistory(name: string): string;
  /**
   * A unique job's lock (`<class>:<hash>`): a string holding the jid of the
   * copy that owns it, with a TTL (`unique.for`).
   */
  uniqueLock(name: string): string;
  /** What every unique lock's key starts with (for SCAN). */
  readonly uniqueLockPrefix: string;
  /**
   * The exact payload a unique job was pushed with, beside its lock (same
   * TTL), written for `uniqueConflict` `replace` and `reschedule` so a later
   * push can find the waiting copy.
   */
  uniqueJob(name: string): string;
  /** Set of queue names unique jobs were pushed to: a queue not in it is cleared without reading it. */
  readonly uniqueQueues: string;
  /** Set of paused queue names: no process fetches from them (edgekiq only; Ruby workers ignore it). */
  readonly paused: string;
  /** Sorted set of recorded CPU profiles: jid scored by when its run ended (epoch seconds). */
  readonly profiles: string;
  /** One job run's CPU profile (`.cpuprofile` JSON) and what it was, as a hash; expires. */
  profile(jid: string): string;
  /**
   * Sorted set of cancelled jids (`cancelJob`), scored by when each was
   * cancelled (epoch ms, strictly increasing), kept 30 days: workers with the
   * cancel feature stop them and skip their waiting copies.
   */
  readonly cancelled: string;
  /**
   * One reliable-push client's marks (sorted set: jid scored by its push
   * sequence): the pushes it has not yet seen confirmed, so a replay writes
   * none twice.
   */
  pushedMarks(clientId: string): string;
  /** An election's lease: `<term>|<holder>`, expiring (PX) unless its holder renews it. */
  leader(name: string): string;
  /** An election's term counter (INCR on every new leader): the fencing token, never reset. */
  leaderTerm(name: string): string;
  /**
   * Which process wakes for the next due entry, `<score> <identity>`,
   * expiring a second after that time: one poller per due time, not the
   * whole fleet.
   */
  readonly pollWake: string;
  /** A queue's job-event stream (`jobEvents()`, for queues that opt in): completed, retrying, dead, progress... */
  events(queue: string): string;
  /** A job's kept result (`keepResult`): a JSON record, expiring after `keepResult.for`. */
  result(jid: string): string;
  /** The stream that says a kept result was written (its jid), which `waitFor` readers follow. */
  readonly results: string;
  /** Sorted set of every batch's id, scored by when it expires (epoch ms): what `BatchSet` lists and sweeps. */
  readonly batches: string;
  /** Sorted set of cancelled batches' ids, scored by when the mark expires (epoch ms): what workers read. */
  readonly batchesCancelled: string;
  /** A batch's hash: its counts, callbacks, claims and description. */
  batch(bid: string): string;
  /** A batch's members (jobs, child batches, open registrations) and each one's state. */
  batchJobs(bid: string): string;
  /** A batch's failed jobs: jid -> what failed (class, message, whether it died). */
  batchFailed(bid: string): string;
  /** A flow batch's children's return values: jid -> JSON. */
  batchResults(bid: string): string;
  /**
   * A limiter's state (`flowLimits()`): a sorted set of holders for a
   * concurrent limiter, a sorted set of uses for a window, a hash for the
   * others. Always expiring: a limiter nobody uses leaves nothing behind.
   */
  limiter(name: string): string;
  /** A limiter's counters and description (a hash, expiring after the limiter's `ttl` of disuse). */
  limiterStats(name: string): string;
  /** Sorted set of limiter names, scored by last use (epoch ms, Redis time): what the Limits page lists. */
  readonly limiters: string;
  /** A fair group's waiting jobs in a grouped queue (a list, FIFO; edgekiq only). */
  groupJobs(queue: string, group: string): string;
  /** A grouped queue's groups with work, scored by their turn (the lowest is served next). */
  groupsReady(queue: string): string;
  /** A grouped queue's paused groups (a set): never served until resumed. */
  groupsPaused(queue: string): string;
  /** Set of queue names that have had grouped jobs: what the Limits page and the mover look at. */
  readonly groupedQueues: string;
}

/**
 * Builds the key names for a namespace. With a prefix `p`, every key becomes
 * `p:<key>`, the redis-namespace convention.
 *
 * @example
 * ```ts
 * const k = keys();
 * k.queue("default"); // "queue:default"
 * keys("app").retry;  // "app:retry"
 * keys("app", "cluster").retry; // "{app}:retry"
 * ```
 */
export function keys(namespace = "", keyspace: Keyspace = "sidekiq"): Keys {
  if (keyspace === "cluster" && /[{}]/.test(namespace)) {
    throw new ConfigError(
      `Cannot use the cluster key layout as 'prefix' must not contain { or } (edgekiq adds the hash tag): current value is ${
        describeValue(namespace)
      }`,
    );
  }
  const prefix = keyspace === "cluster" ? `{${namespace || DEFAULT_CLUSTER_TAG}}` : namespace;
  const p = prefix ? `${prefix}:` : "";
  const queuePrefix = `${p}queue:`;
  const heldPrefix = `${p}edgekiq:held:`;
  const landingPrefix = `${p}edgekiq:landing:`;
  return {
    prefix,
    keyspace,
    queues: `${p}queues`,
    schedule: `${p}schedule`,
    retry: `${p}retry`,
    dead: `${p}dead`,
    processes: `${p}processes`,
    processCleanup: `${p}process_cleanup`,
    heldRegistry: `${p}edgekiq:inflight`,
    queue: (name) => queuePrefix + name,
    process: (identity) => p + identity,
    work: (identity) => `${p}${identity}:work`,
    legacyWork: (identity) => `${p}${identity}:workers`,
    signals: (identity) => `${p}${identity}-signals`,
    stat: (name) => `${p}stat:${name}`,
    statDay: (name, day) => `${p}stat:${name}:${day}`,
    // "|" cannot appear in a hostname or a capsule name, so the parts stay separable.
    held: (identity, capsule) => `${heldPrefix}${identity}|${capsule}`,
    landing: (heldKey, queue) => `${landingPrefix}${heldKey.slice(heldPrefix.length)}|${queue}`,
    parseHeld(key) {
      if (!key.startsWith(heldPrefix)) return undefined;
      const parts = key.slice(heldPrefix.length).split("|");
      return parts.length === 2 ? { identity: parts[0], capsule: parts[1] } : undefined;
    },
    iteration: (jid) => `${p}it-${jid}`,
    webAction: (token) => `${p}edgekiq:web:done:${token}`,
    queueName: (queueKey) => queueKey.startsWith(queuePrefix) ? queueKey.slice(queuePrefix.length) : queueKey,
    metrics: (bucket) => `${p}j|${bucket}`,
    histogram: (className, window) => `${p}h|${className}-${window}`,
    legacyHistogram: (className, window) => `${p}${className}-${window}`,
    deployMarks: (day) => `${p}${day}-marks`,
    deployLock: (label) => `${p}deploylock-${label}`,
    metricsFlushed: (trackerId) => `${p}edgekiq:metrics:${trackerId}`,
    periodicDue: `${p}edgekiq:periodic:due`,
    periodicSchedule: (name) => `${p}edgekiq:periodic:schedule:${name}`,
    periodicOwner: (owner) => `${p}edgekiq:periodic:owner:${owner}`,
    sidekiqCronJob: (name) => `${p}cron_job:${name}`,
    sidekiqCronEnqueued: (name) => `${p}cron_job:${name}:enqueued`,
    sidekiqCronHistory: (name) => `${p}cron_job:${name}:jid_history`,
    uniqueLock: (name) => `${p}edgekiq:unique:${name}`,
    uniqueLockPrefix: `${p}edgekiq:unique:`,
    uniqueJob: (name) => `${p}edgekiq:unique-job:${name}`,
    uniqueQueues: `${p}edgekiq:unique-queues`,
    paused: `${p}edgekiq:paused`,
    profiles: `${p}edgekiq:profiles`,
    profile: (jid) => `${p}edgekiq:profile:${jid}`,
    cancelled: `${p}edgekiq:cancelled`,
    pushedMarks: (clientId) => `${p}edgekiq:pushed:${clientId}`,
    leader: (name) => `${p}edgekiq:leader:${name}`,
    leaderTerm: (name) => `${p}edgekiq:leader-term:${name}`,
    pollWake: `${p}edgekiq:poll:wake`,
    events: (queue) => `${p}edgekiq:events:${queue}`,
    result: (jid) => `${p}edgekiq:result:${jid}`,
    results: `${p}edgekiq:results`,
    batches: `${p}edgekiq:batches`,
    batchesCancelled: `${p}edgekiq:batches:cancelled`,
    batch: (bid) => `${p}edgekiq:batch:${bid}`,
    batchJobs: (bid) => `${p}edgekiq:batch:${bid}:jobs`,
    batchFailed: (bid) => `${p}edgekiq:batch:${bid}:failed`,
    batchResults: (bid) => `${p}edgekiq:batch:${bid}:results`,
    limiter: (name) => `${p}edgekiq:limiter:${name}`,
    limiterStats: (name) => `${p}edgekiq:limiter-stats:${name}`,
    limiters: `${p}edgekiq:limiters`,
    // A comma cannot appear in a queue name, so the parts stay separable.
    groupJobs: (queue, group) => `${p}edgekiq:group:${queue},${group}`,
    groupsReady: (queue) => `${p}edgekiq:groups:${queue}`,
    groupsPaused: (queue) => `${p}edgekiq:groups-paused:${queue}`,
    groupedQueues: `${p}edgekiq:grouped-queues`,
  };
}
