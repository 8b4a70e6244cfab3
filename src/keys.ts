/**
 * Every Redis key name edgekiq reads or writes, in one place.
 *
 * Sidekiq's own keys keep Sidekiq's names exactly (`queues`, `queue:<name>`,
 * `schedule`, `retry`, `dead`, `processes`, `stat:processed`, ...), because a
 * Ruby Sidekiq process and its Web UI read the same Redis. Keys only edgekiq
 * uses start with `edgekiq:` so they never collide with Sidekiq's.
 *
 * @module
 */

/** The key names for one namespace. */
export interface Keys {
  /** The namespace prefix, `""` when none (Sidekiq's default). */
  readonly prefix: string;
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
  /** Hash of private key (held hash, or an older version's private list) -> owning process identity. */
  readonly inflightRegistry: string;
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
   * The held hash: token -> raw job for the jobs one capsule of one process
   * took from one queue with reliable fetch, until their outcome is durable.
   */
  held(identity: string, capsule: string, queue: string): string;
  /** The transit list a blocking fetch moves one job into, next to its held hash. */
  landing(heldKey: string): string;
  /** Splits a held key into its owner, capsule and queue (undefined if it is not one). */
  parseHeld(key: string): { identity: string; capsule: string; queue: string } | undefined;
  /** The private list an older edgekiq (0.1) kept a queue's jobs in; still recovered. */
  legacyInflight(identity: string, queue: string): string;
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
 * ```
 */
export function keys(prefix = ""): Keys {
  const p = prefix ? `${prefix}:` : "";
  const queuePrefix = `${p}queue:`;
  const heldPrefix = `${p}edgekiq:held:`;
  const landingPrefix = `${p}edgekiq:landing:`;
  return {
    prefix,
    queues: `${p}queues`,
    schedule: `${p}schedule`,
    retry: `${p}retry`,
    dead: `${p}dead`,
    processes: `${p}processes`,
    processCleanup: `${p}process_cleanup`,
    inflightRegistry: `${p}edgekiq:inflight`,
    queue: (name) => queuePrefix + name,
    process: (identity) => p + identity,
    work: (identity) => `${p}${identity}:work`,
    legacyWork: (identity) => `${p}${identity}:workers`,
    signals: (identity) => `${p}${identity}-signals`,
    stat: (name) => `${p}stat:${name}`,
    statDay: (name, day) => `${p}stat:${name}:${day}`,
    // "|" cannot appear in a hostname or a capsule name, so the parts stay separable.
    held: (identity, capsule, queue) => `${heldPrefix}${identity}|${capsule}|${queue}`,
    landing: (heldKey) => landingPrefix + heldKey.slice(heldPrefix.length),
    parseHeld(key) {
      if (!key.startsWith(heldPrefix)) return undefined;
      const [identity, capsule, ...rest] = key.slice(heldPrefix.length).split("|");
      return rest.length ? { identity, capsule, queue: rest.join("|") } : undefined;
    },
    legacyInflight: (identity, queue) => `${p}edgekiq:inflight:${identity}|${queue}`,
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
  };
}
