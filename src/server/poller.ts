/**
 * The scheduled poller: moves due jobs from `schedule` and `retry` to their
 * queues, prunes dead processes, and recovers orphaned in-flight jobs.
 *
 * Timing is Sidekiq's. The interval scales with the number of processes, so
 * the whole cluster polls about once per `averageScheduledPollInterval`
 * seconds however many processes there are; each waits a random time around
 * that average so they do not all poll in step. One change makes delays
 * precise: the poll check also says when the next entry comes due, to one
 * poller of the fleet (it claims that time), whose next poll comes then if
 * that is sooner than its interval (never sooner than {@link MIN_WAKE_MS}
 * after the last). An idle poller (nothing scheduled) polls exactly as
 * before; a job scheduled further ahead than one interval runs within
 * milliseconds of its time, and one pushed with a shorter delay is seen at
 * the next poll. Racing pollers are safe anyway: each move is guarded by
 * its `ZREM`.
 *
 * Each step of a poll (each feature's task, promote, prune, recover) is on
 * its own: one that throws is reported to `onError` and named in the
 * result's `failed`, and the others still run, so a broken periodic
 * schedule or a key of the wrong type never stops the recovery of a dead
 * process's jobs.
 *
 * @module
 */
import { type Client, moveThroughMiddleware } from "../client.ts";
import type { Keys } from "../keys.ts";
import { type Logger, silentLogger } from "../logger.ts";
import { parsePayload, serializePayload, wireTime } from "../payload.ts";
import { POLL_CHECK, type PollCheck, pollCheckKeys } from "../scripts/poll_check.ts";
import { PROMOTE } from "../scripts/promote.ts";
import type { RedisArg, Transport } from "../transport/transport.ts";
import { recoverOrphans } from "./recovery.ts";
import type { FeatureContext, PollTask, WorkerFeature } from "./worker_feature.ts";

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
  /** What each feature's poll task did, by feature name (`periodic`: jobs enqueued for ticks that came due). */
  features: Record<string, number>;
  /**
   * The steps that failed this time (`"promote retry"`, `"prune"`, a
   * feature's name, ...). Each step is isolated: one failing never stops
   * the others (orphans are recovered whatever a feature does).
   */
  failed: string[];
  /**
   * When the next scheduled or retrying job (or feature task) comes due,
   * epoch ms, if this poller is the one to poll then (it claimed that time;
   * a fleet's other pollers keep their interval). A poll without an
   * identity (serverless) always hears it: a cron may use it to call again
   * then. Undefined when nothing waits.
   */
  nextDueAt?: number;
}

/**
 * The shortest wait between two polls a due time may cause, ms: a stream of
 * entries due every millisecond costs a process at most 20 checks a second.
 */
export const MIN_WAKE_MS = 50;
/** How long after an entry's due time its poll runs, ms: timers may fire a little early. */
const WAKE_LATE_MS = 2;

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
  ownHeldHashes?: number;
  /** Receives each poison pill's raw payload, unparsed. */
  onPoison?: (raw: string) => void;
  onError?: (error: unknown, context: Record<string, unknown>) => void;
  /** Seconds before the first poll; default rand(1). */
  initialWait?: number;
  /** Features whose poll tasks run each poll (periodic jobs, ...). */
  features?: readonly WorkerFeature[];
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
  #options: PollerOptions;
  #k: Keys;
  #transport: Transport;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #wake: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;
  #running: Promise<unknown> = Promise.resolve();
  #stopped = true;
  /** Stopped for good: no wake is armed any more. */
  #closed = false;
  #processCount = 1;
  #tasks: ReadonlyArray<{ name: string; task: PollTask }>;
  #dueKeys: string[];
  #context: FeatureContext;

  constructor(options: PollerOptions) {
    this.#options = options;
    this.#k = options.client.keys;
    this.#transport = options.client.transport;
    this.#tasks = (options.features ?? []).flatMap((f) => (f.poll ? [{ name: f.name, task: f.poll }] : []));
    this.#dueKeys = this.#tasks.flatMap(({ task }) => (task.due ? [task.due(this.#k)] : []));
    this.#context = {
      client: options.client,
      transport: this.#transport,
      keys: this.#k,
      logger: options.logger,
      identity: options.identity,
      onError: (error, context) => options.onError?.(error, context),
    };
  }

  /** The due keys the poll check reads (features' poll tasks), for a heartbeat that runs the check. */
  get dueKeys(): readonly string[] {
    return this.#dueKeys;
  }

  /** Starts polling on a timer. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    // Sidekiq waits 10-15 s before its first poll, so that heartbeats have
    // registered for the interval's process count. Here the worker beats
    // before its poller starts, and the first check says when the next job
    // comes due, so waiting only delays jobs already due (a job scheduled
    // 2 s ahead ran 12 s late): a random second spreads processes started
    // together. An explicit initialWait replaces it.
    const initial = this.#options.initialWait ?? Math.random();
    this.#schedule(initial * 1000);
  }

  /** Stops the timer and waits for a poll in progress. No handle stays open. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#wake?.timer);
    this.#wake = undefined;
    await this.#running.catch(() => {});
  }

  /**
   * One poll: promote due jobs, run the features' due poll tasks, prune dead
   * processes (once a minute across the cluster), recover orphans.
   */
  async runOnce(now: number = Date.now()): Promise<PollResult> {
    const run = this.#poll(now);
    this.#running = run;
    return await run;
  }

  /**
   * Acts on a poll check another command already made (a worker over HTTP
   * runs it inside its heartbeat): promote, run due tasks, prune, recover,
   * as one poll would.
   */
  act(check: PollCheck, now: number = Date.now()): Promise<PollResult> {
    const result = this.#emptyResult();
    // Prepared now, a task's new work is due by the next check (the next beat).
    const run = this.#prepare(now, result).then(() => this.#act(check, now, result));
    this.#running = run;
    return run;
  }

  async #poll(now: number): Promise<PollResult> {
    const result = this.#emptyResult();
    // Prepared first, so a task's new work (a schedule registered now) is seen by this check.
    await this.#prepare(now, result);
    // One command says what needs doing: an idle cycle costs just this.
    const check = await this.#transport.script(POLL_CHECK, pollCheckKeys(this.#k, this.#dueKeys), [
      now / 1000,
      this.#options.identity ?? "",
    ]);
    return this.#act(check, now, result);
  }

  /** A result with every task at 0: a task not due did nothing. */
  #emptyResult(): PollResult {
    const features = Object.fromEntries(this.#tasks.map(({ name }) => [name, 0]));
    return { promoted: 0, pruned: 0, recovered: 0, poisoned: 0, features, failed: [] };
  }

  async #prepare(now: number, result: PollResult): Promise<void> {
    for (const { name, task } of this.#tasks) {
      if (task.prepare) await this.#step(result, name, () => task.prepare!(this.#context, now));
    }
  }

  /** Runs one step of a poll, isolated: a failure is reported and recorded, and the poll goes on. */
  async #step(result: PollResult, name: string, step: () => Promise<unknown>): Promise<void> {
    try {
      await step();
    } catch (error) {
      if (!result.failed.includes(name)) result.failed.push(name);
      if (this.#options.onError) this.#options.onError(error, { context: "poller", step: name });
      else this.#options.logger.error("a poll step failed; the others ran", { step: name, error: String(error) });
    }
  }

  async #act(check: PollCheck, now: number, result: PollResult): Promise<PollResult> {
    this.#processCount = check.processes;
    if (check.next !== undefined) result.nextDueAt = check.next * 1000;
    if (check.retryDue) {
      await this.#step(result, "promote retry", async () => result.promoted += await this.promote(this.#k.retry, now));
    }
    if (check.scheduleDue) {
      await this.#step(result, "promote schedule", async () => {
        result.promoted += await this.promote(this.#k.schedule, now);
      });
    }
    let d = 0;
    for (const { name, task } of this.#tasks) {
      const due = task.due ? check.due[d++] : true;
      if (!due || result.failed.includes(name)) continue;
      await this.#step(result, name, async () => result.features[name] = await task.run(this.#context, now));
    }
    if (check.prune) await this.#step(result, "prune", async () => result.pruned = await this.#prune());
    // Only held hashes beyond this process's own can be orphans.
    if (check.heldHashes <= (this.#options.ownHeldHashes ?? 0)) return result;
    await this.#step(result, "recover", () => this.#recover(result));
    return result;
  }

  async #recover(result: PollResult): Promise<void> {
    const recovery = await recoverOrphans({
      transport: this.#transport,
      keys: this.#k,
      self: this.#options.identity,
      maxRecoveries: this.#options.maxRecoveries,
    });
    result.recovered = recovery.requeued;
    result.poisoned = recovery.poisoned.length;
    for (const { held, error } of recovery.failed) {
      this.#options.logger.error("orphaned jobs not recovered this time: they stay held for the next pass", {
        held,
        error,
      });
    }
    if (recovery.failed.length) result.failed.push("recover");
    for (const raw of recovery.poisoned) {
      // Named by jid and class, never by its raw text (it may be huge, hostile, or hold secrets).
      let job: { jid?: unknown; class?: unknown } = {};
      try {
        job = JSON.parse(raw);
      } catch { /* unreadable: its size is all there is to say */ }
      this.#options.logger.error(
        "poison pill: the job was running in too many processes that died; moved to the dead set",
        {
          jid: typeof job.jid === "string" ? job.jid : undefined,
          class: typeof job.class === "string" ? job.class : undefined,
          bytes: raw.length,
        },
      );
      try {
        this.#options.onPoison?.(raw);
      } catch (error) {
        this.#options.onError?.(error, { context: "onPoison" });
      }
    }
    if (result.recovered) this.#options.logger.warn("recovered orphaned jobs", { count: result.recovered });
  }

  /**
   * Moves every entry of `set` due by `now` to its queue, a batch per two
   * round trips: read the due entries, then one script moves them all. An
   * entry whose queue holds another type stays where it is and is read past
   * (it cannot stall the others; it is logged). Stops when a batch moves
   * nothing (entries another poller took, or that cannot move): no loop
   * without progress.
   */
  async promote(set: string, now: number = Date.now()): Promise<number> {
    const client = this.#options.client;
    const batch = this.#options.batchSize ?? 100;
    let total = 0;
    let skip = 0;
    for (;;) {
      const due = (await this.#transport.call(
        "ZRANGE",
        set,
        "-inf",
        now / 1000,
        "BYSCORE",
        "LIMIT",
        skip,
        batch,
      )) as string[];
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
          this.#options.logger.error("unreadable scheduled job moved to the dead set", { set, error: String(error) });
          triples.push(raw, raw, 0);
          continue;
        }
        payload.enqueued_at = enqueuedAt;
        const rewritten = await moveThroughMiddleware(client, payload);
        if (!rewritten) {
          triples.push(raw, raw, -1);
          continue;
        }
        let index = queueIndex.get(rewritten.queue);
        if (index === undefined) queueIndex.set(rewritten.queue, index = queueIndex.size + 1);
        triples.push(raw, serializePayload(rewritten, client.timeFormat), index);
      }
      const names = [...queueIndex.keys()];
      const { moved, stuck } = await this.#transport.script(
        PROMOTE,
        [set, this.#k.queues, this.#k.dead, ...names.map((q) => this.#k.queue(q))],
        [names.length, ...names, now / 1000, buryInvalid, ...triples],
      );
      total += moved;
      if (stuck) {
        this.#options.logger.error("due jobs left in place: their queue key holds another type than a list", {
          set,
          count: stuck,
        });
        skip += stuck;
      }
      if (due.length < batch || moved + stuck === 0) return total;
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
    if (this.#options.pollIntervalAverage !== undefined) {
      return this.#options.pollIntervalAverage * (Math.random() + 0.5) * 1000;
    }
    const count = Math.max(1, this.#processCount);
    const interval = count * (this.#options.averageScheduledPollInterval ?? 5);
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
        const { nextDueAt } = await this.runOnce();
        next = untilDue(this.#interval(), nextDueAt, Date.now(), MIN_WAKE_MS);
      } catch (error) {
        this.#options.onError?.(error, { context: "poller" });
      }
      this.#schedule(next);
    }, ms);
  }

  /**
   * For a poller driven by someone else's checks (a worker over HTTP runs
   * the check in its heartbeat): polls once more when the next entry comes
   * due, if that is within `horizonMs` (before the next beat's check), and
   * again after that poll while entries keep coming due within the
   * horizon. At most one such poll is armed; `stop()` clears it.
   */
  wakeFor(nextDueAt: number | undefined, horizonMs: number, floorMs: number = MIN_WAKE_MS): void {
    if (nextDueAt === undefined || this.#closed) return;
    const now = Date.now();
    const ms = untilDue(horizonMs, nextDueAt, now, floorMs);
    if (ms >= horizonMs) return;
    // A poll already armed for sooner stays; a later one is replaced.
    if (this.#wake && this.#wake.at <= now + ms) return;
    clearTimeout(this.#wake?.timer);
    const timer = setTimeout(async () => {
      this.#wake = undefined;
      try {
        const { nextDueAt: after } = await this.runOnce();
        this.wakeFor(after, horizonMs - (Date.now() - now), floorMs);
      } catch (error) {
        this.#options.onError?.(error, { context: "poller" });
      }
    }, ms);
    this.#wake = { at: now + ms, timer };
  }
}

/**
 * How long to wait for the next poll: `interval`, or until just after
 * `nextDueAt` (epoch ms) when that is sooner, but never less than `floor`.
 *
 * @example
 * ```ts
 * untilDue(5000, Date.now() + 1200, Date.now(), 50); // 1202
 * untilDue(5000, undefined, Date.now(), 50); // 5000
 * ```
 */
export function untilDue(interval: number, nextDueAt: number | undefined, now: number, floor: number): number {
  if (nextDueAt === undefined) return interval;
  return Math.min(interval, Math.max(floor, Math.ceil(nextDueAt - now) + WAKE_LATE_MS));
}

/**
 * One poll for serverless cron: promote due jobs, run the features' poll
 * tasks, prune dead processes, recover orphans. Costs nothing when not called: no timers, no
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
