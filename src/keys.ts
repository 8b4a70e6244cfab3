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
  /** Hash of private in-flight list -> owning process identity (reliable fetch). */
  readonly inflightRegistry: string;
  /** Hash of jid -> times its job was recovered from dead workers */
  readonly recoveries: string;
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
  /** The private list one process's reliable fetch keeps one queue's jobs in. */
  inflight(identity: string, queue: string): string;
  /** Claim for one tick of a periodic job (SET NX). */
  cronTick(name: string, tick: number): string;
  /** Saved cursor of an iterable job. */
  iteration(jid: string): string;
  /** Marks a dashboard "all" action's one-time token as used (SET NX EX), so a replayed form does nothing. */
  webAction(token: string): string;
  /** Strips the prefix and `queue:` from a queue key, the inverse of {@link Keys.queue}. */
  queueName(queueKey: string): string;
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
  return {
    prefix,
    queues: `${p}queues`,
    schedule: `${p}schedule`,
    retry: `${p}retry`,
    dead: `${p}dead`,
    processes: `${p}processes`,
    processCleanup: `${p}process_cleanup`,
    inflightRegistry: `${p}edgekiq:inflight`,
    recoveries: `${p}edgekiq:recoveries`,
    queue: (name) => queuePrefix + name,
    process: (identity) => p + identity,
    work: (identity) => `${p}${identity}:work`,
    legacyWork: (identity) => `${p}${identity}:workers`,
    signals: (identity) => `${p}${identity}-signals`,
    stat: (name) => `${p}stat:${name}`,
    statDay: (name, day) => `${p}stat:${name}:${day}`,
    // "|" cannot appear in a hostname, so identity and queue stay separable.
    inflight: (identity, queue) => `${p}edgekiq:inflight:${identity}|${queue}`,
    cronTick: (name, tick) => `${p}edgekiq:cron:${name}:${tick}`,
    iteration: (jid) => `${p}edgekiq:it:${jid}`,
    webAction: (token) => `${p}edgekiq:web:done:${token}`,
    queueName: (queueKey) => queueKey.startsWith(queuePrefix) ? queueKey.slice(queuePrefix.length) : queueKey,
  };
}
