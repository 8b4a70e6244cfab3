/**
 * The scheduled poller: moves due jobs from `schedule` and `retry` to their
 * queues, prunes dead processes, and recovers orphaned in-flight jobs.
 *
 * Timing is Sidekiq's. The interval scales with the number of processes, so
 * the whole cluster polls about once per `averageScheduledPollInterval`
 * seconds however many processes there are; each waits a random time around
 * that average so they do not all poll in step.
 *
 * @module
 */
import type { Client } from "../client.ts";
import type { Keys } from "../keys.ts";
import { type Logger, silentLogger } from "../logger.ts";
import { parsePayload, serializePayload, wireTime } from "../payload.ts";
import { POLL_CHECK, type PollCheck, pollCheckKeys } from "../scripts/poll_check.ts";
import { PROMOTE } from "../scripts/promote.ts";
import type { RedisArg, Transport } from "../transport/transport.ts";
import { enqueueDuePeriodic, type PeriodicSchedule, registerPeriodic } from "../periodic/mod.ts";
import { recoverOrphans } from "./recovery.ts";

/** What one poll did. */
export interface PollResult {
  /** Jobs moved from `schedule` and `retry` to their queues. */
  promoted: number;
  /** Dead process entries removed from `processes`. */
  pruned: number;
  /** Orphaned jobs put back on their queues. */
  recovered: number;
  /** Orphaned jobs buried as poison pills. */
  poisoned: number;
  /** Periodic jobs enqueued for ticks that came due. */
  periodic: number;
}

/** Options for {@link Poller}. */
export interface PollerOptions {
  client: Client;
  logger: Logger;
  /** This process's identity, if it is a worker (its own lists are never recovered). */
  identity?: string;
  /** Average seconds between polls across the cluster; default 5. */
  averageScheduledPollInterval?: number;
  /** Fixed average for this process, in seconds; skips the initial wait. */
  pollIntervalAverage?: number;
  /** Due entries moved per round trip; default 100. */
  batchSize?: number;
  /** Recoveries before a job is buried; default 3. */
  maxRecoveries?: number;
  /** How many held hashes this process registered itself (they are never orphans). */
  ownPrivateLists?: number;
  /** Receives each poison pill's raw payload, unparsed. */
  onPoison?: (raw: string) => void;
  onError?: (error: unknown, context: Record<string, unknown>) => void;
  /** Seconds before the first poll; default 10 + rand(5), or rand(5) with `pollIntervalAverage`. */
  initialWait?: number;
  /**
   * Cron schedules this app declares: registered in Redis (idempotently,
   * usually at no cost) every poll. Due ticks of every app's schedules are
   * enqueued whether or not this process declares any: no leader.
   */
  periodic?: readonly PeriodicSchedule[];
  /** Who owns `periodic` (an app name): a schedule removed from that owner's code stops at its next deploy. */
  periodicOwner?: string;
}

/**
 * Polls on a jittered `setTimeout`, or once on demand (serverless cron).
 *
 * @example
 * ```ts
 * const poller = new Poller({ client, logger });
 * const { promoted } = await poller.runOnce(); // from a cron trigger
 * ```
 */
export class Poller {
  #o: PollerOptions;
  #k: Keys;
  #transport: Transport;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<unknown> = Promise.resolve();
  #stopped = true;
  #processCount = 1;

  constructor(options: PollerOptions) {
    this.#o = options;
    this.#k = options.client.keys;
    this.#transport = options.client.transport;
  }

  /** Starts polling on a timer. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    // Sidekiq's initial wait: 10 s for heartbeats to register (skipped with a
    // fixed average), plus up to 5 s so processes started together do not
    // poll together. An explicit initialWait replaces both.
    const initial = this.#o.initialWait ?? ((this.#o.pollIntervalAverage !== undefined ? 0 : 10) + 5 * Math.random());
    this.#schedule(initial * 1000);
  }

  /** Stops the timer and waits for a poll in progress. No handle stays open. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running.catch(() => {});
  }

  /**
   * One poll: promote due jobs, prune dead processes (once a minute across
   * the cluster), recover orphans.
   */
  async runOnce(now: number = Date.now()): Promise<PollResult> {
    const run = this.#poll(now);
    this.#running = run;
    return await run;
  }

  /**
   * Acts on a poll check another command already made (a worker over HTTP
   * runs it inside its heartbeat): promote, enqueue periodic ticks, prune,
   * recover, as one poll would.
   */
  act(check: PollCheck, now: number = Date.now()): Promise<PollResult> {
    // A schedule registered now is due by the next check (the next beat).
    const run = this.#register(now).then(() => this.#act(check, now));
    this.#running = run;
    return run;
  }

  async #poll(now: number): Promise<PollResult> {
    // Registered first, so a new schedule's due tick is seen by this check.
    await this.#register(now);
    // One command says what needs doing: an idle cycle costs just this.
    const check = await this.#transport.script(POLL_CHECK, pollCheckKeys(this.#k), [now / 1000]);
    return this.#act(check, now);
  }

  /** Registers this app's schedules (usually no command: it is remembered). */
  async #register(now: number): Promise<void> {
    if (this.#o.periodic?.length) {
      await registerPeriodic(this.#o.client, this.#o.periodic, { owner: this.#o.periodicOwner, now });
    }
  }

  async #act(check: PollCheck, now: number): Promise<PollResult> {
    const result: PollResult = { promoted: 0, pruned: 0, recovered: 0, poisoned: 0, periodic: 0 };
    const client = this.#o.client;
    this.#processCount = check.processes;
    if (check.retryDue) result.promoted += await this.promote(this.#k.retry, now);
    if (check.scheduleDue) result.promoted += await this.promote(this.#k.schedule, now);
    if (check.periodicDue) {
      result.periodic = (await enqueueDuePeriodic({ client, now, schedules: this.#o.periodic })).enqueued;
    }
    if (check.prune) result.pruned = await this.#prune();
    // Only lists beyond this process's own can be orphans.
    if (check.privateLists <= (this.#o.ownPrivateLists ?? 0)) return result;
    const recovery = await recoverOrphans({
      transport: this.#transport,
      keys: this.#k,
      self: this.#o.identity,
      maxRecoveries: this.#o.maxRecoveries,
    });
    result.recovered = recovery.requeued;
    result.poisoned = recovery.poisoned.length;
    for (const raw of recovery.poisoned) {
      // Named by jid and class, never by its raw text (it may be huge, hostile, or hold secrets).
      let job: { jid?: unknown; class?: unknown } = {};
      try {
        job = JSON.parse(raw);
      } catch { /* unreadable: its size is all there is to say */ }
      this.#o.logger.error("poison pill: the job was running in too many processes that died; moved to the dead set", {
        jid: typeof job.jid === "string" ? job.jid : undefined,
        class: typeof job.class === "string" ? job.class : undefined,
        bytes: raw.length,
      });
      try {
        this.#o.onPoison?.(raw);
      } catch (error) {
        this.#o.onError?.(error, { context: "onPoison" });
      }
    }
    if (result.recovered) this.#o.logger.warn("recovered orphaned jobs", { count: result.recovered });
    return result;
  }

  /**
   * Moves every entry of `set` due by `now` to its queue, a batch per two
   * round trips: read the due entries, then one script moves them all. Stops
   * when a batch moves nothing (entries another poller took, or that cannot
   * move): no loop without progress.
   */
  async promote(set: string, now: number = Date.now()): Promise<number> {
    const client = this.#o.client;
    const batch = this.#o.batchSize ?? 100;
    let total = 0;
    for (;;) {
      const due =
        (await this.#transport.call("ZRANGE", set, "-inf", now / 1000, "BYSCORE", "LIMIT", 0, batch)) as string[];
      if (!due || due.length === 0) return total;
      const queueIndex = new Map<string, number>();
      const triples: RedisArg[] = [];
      const enqueuedAt = wireTime(Date.now(), client.timeFormat);
      // U+FFFD is what invalid bytes decode to: let the script check the real bytes.
      let buryInvalid = 0;
      for (const raw of due) {
        if (raw.includes("\uFFFD")) buryInvalid = batch;
        let payload;
        try {
          payload = parsePayload(raw);
        } catch (error) {
          this.#o.logger.error("unreadable scheduled job moved to the dead set", { set, error: String(error) });
          triples.push(raw, raw, 0);
          continue;
        }
        payload.enqueued_at = enqueuedAt;
        const rewritten = await client.applyMiddleware(payload);
        if (!rewritten) {
          triples.push(raw, raw, -1);
          continue;
        }
        let index = queueIndex.get(rewritten.queue);
        if (index === undefined) queueIndex.set(rewritten.queue, index = queueIndex.size + 1);
        triples.push(raw, serializePayload(rewritten, client.timeFormat), index);
      }
      const names = [...queueIndex.keys()];
      const moved = await this.#transport.script(
        PROMOTE,
        [set, this.#k.queues, this.#k.dead, ...names.map((q) => this.#k.queue(q))],
        [names.length, ...names, now / 1000, buryInvalid, ...triples],
      );
      total += moved;
      if (due.length < batch || moved === 0) return total;
    }
  }

  async #prune(): Promise<number> {
    const members = (await this.#transport.call("SMEMBERS", this.#k.processes)) as string[];
    if (!members?.length) return 0;
    const infos = await this.#transport.pipeline(members.map((m) => ["HGET", this.#k.process(m), "info"] as const));
    const dead = members.filter((_, i) => infos[i] === null);
    if (dead.length) await this.#transport.call("SREM", this.#k.processes, ...dead);
    return dead.length;
  }

  /** Sidekiq's `random_poll_interval`, in ms. */
  #interval(): number {
    if (this.#o.pollIntervalAverage !== undefined) {
      return this.#o.pollIntervalAverage * (Math.random() + 0.5) * 1000;
    }
    const count = Math.max(1, this.#processCount);
    const interval = count * (this.#o.averageScheduledPollInterval ?? 5);
    // With few processes a purely random wait would sometimes leave long
    // gaps; adding half the interval keeps the cluster's poll rate even.
    return (count < 10 ? interval * Math.random() + interval / 2 : interval * Math.random()) * 1000;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(async () => {
      this.#timer = undefined;
      if (this.#stopped) return;
      let next = 5000;
      try {
        await this.runOnce();
        next = this.#interval();
      } catch (error) {
        this.#o.onError?.(error, { context: "poller" });
      }
      this.#schedule(next);
    }, ms);
  }
}

/**
 * One poll for serverless cron: promote due jobs, prune dead processes,
 * recover orphans. Costs nothing when not called: no timers, no
 * connections of its own.
 *
 * @example
 * ```ts
 * export default { async scheduled() { await pollOnce({ client }); await drain({ ... }); } };
 * ```
 */
export function pollOnce(
  options: Omit<PollerOptions, "logger"> & { logger?: Logger; /** Epoch ms; default now. */ now?: number },
): Promise<PollResult> {
  return new Poller({ logger: silentLogger, ...options }).runOnce(options.now);
}
