/**
 * A capsule: a named set of queues with a concurrency. It holds one fetcher
 * and `concurrency` processors: async loops sharing the fetcher, none with a
 * Redis connection of its own.
 *
 * The fetcher keeps a small buffer (the prefetch, sized by {@link Prefetch})
 * topped up: it fetches when a processor is waiting with nothing buffered, or
 * when enough slots have freed up to make a batch worth a round trip, and
 * every fetch carries the acks of the jobs finished since the last one. While
 * jobs run, a second fetch may go out behind the first, so Redis prepares the
 * next batch while this process runs the last one.
 *
 * @module
 */
import type { Logger } from "../logger.ts";
import type { Fetcher, UnitOfWork } from "./fetch.ts";
import { Prefetch } from "./prefetch.ts";
import { type ProcessorDeps, processUnit } from "./processor.ts";

/** Fetches a capsule keeps on their way at once while it is busy. */
const MAX_IN_FLIGHT = 2;

/** A job being worked on, as the heartbeat's work hash shows it. */
export interface BusyUnit {
  readonly unit: UnitOfWork;
  /** Epoch ms when it started. */
  readonly startedAt: number;
}

/** Options for {@link Capsule}. */
export interface CapsuleOptions {
  name: string;
  concurrency: number;
  /** Jobs held ready beyond the running ones: the least, and the size until jobs are timed. */
  prefetch: number;
  /** The most it grows to while jobs finish faster than a round trip; default `prefetch` (fixed). */
  prefetchMax?: number;
  fetcher: Fetcher;
  deps: Omit<ProcessorDeps, "signal">;
  logger: Logger;
  /** Longest idle back-off for non-blocking (HTTP) transports, ms. */
  pollMaxMs: number;
  /**
   * Serverless drain mode: never block or back off; call this when a fetch
   * finds the queues empty and nothing is running.
   */
  onEmpty?: () => void;
  /** Called with errors the capsule survives (fetch failures, processor crashes). */
  onError: (error: unknown, context: Record<string, unknown>) => void;
}

/** Lifecycle states. */
export type CapsuleState = "new" | "running" | "quiet" | "stopped";

/**
 * Runs one capsule's fetcher and processors.
 *
 * @example
 * ```ts
 * const capsule = new Capsule({ name: "default", concurrency: 10, prefetch: 10, fetcher, deps, logger, pollMaxMs: 5000, onError });
 * capsule.start();
 * await capsule.quiet();
 * await capsule.stop(25_000);
 * ```
 */
export class Capsule {
  readonly name: string;
  readonly concurrency: number;
  #o: CapsuleOptions;
  #abort = new AbortController();
  #state: CapsuleState = "new";
  #buffer: UnitOfWork[] = [];
  #busy = new Map<number, BusyUnit>();
  #waiting: Array<(unit: UnitOfWork | undefined) => void> = [];
  #wakeFetcher: (() => void) | undefined;
  /** A wake-up that came while the fetcher was busy; the next wait returns at once. */
  #wakePending = false;
  #fetchLoop: Promise<void> = Promise.resolve();
  #processors: Promise<void>[] = [];
  #settled: Array<() => void> = [];
  #nextSlot = 0;
  /** Units handed to processors and not yet finished (counted at hand-off, before `busy` sees them). */
  #active = 0;
  #sleepTimer: ReturnType<typeof setTimeout> | undefined;
  #abandoned = new Set<UnitOfWork>();
  #prefetch: Prefetch;
  #sleepResolve: (() => void) | undefined;
  /** Background fetches on their way, and the jobs they may bring. */
  #launched = new Set<Promise<void>>();
  #requested = 0;
  #fetchFailed = false;
  /** The last background fetch found nothing: wait for a processor before asking again. */
  #dry = false;

  constructor(options: CapsuleOptions) {
    this.#o = options;
    this.name = options.name;
    this.concurrency = options.concurrency;
    this.#prefetch = new Prefetch({
      concurrency: options.concurrency,
      min: options.prefetch,
      max: options.prefetchMax ?? options.prefetch,
    });
  }

  /** The capsule's state. */
  get state(): CapsuleState {
    return this.#state;
  }

  /** The jobs running now. */
  get busy(): ReadonlyMap<number, BusyUnit> {
    return this.#busy;
  }

  /** The signal every running job's `ctx.signal` is; aborted at hard shutdown. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** The fetcher. */
  get fetcher(): Fetcher {
    return this.#o.fetcher;
  }

  /** Units handed out and not finished, plus those fetched and waiting. */
  get held(): number {
    return this.#active + this.#buffer.length;
  }

  /** Starts the fetcher and the processors. */
  start(): void {
    if (this.#state !== "new") return;
    this.#state = "running";
    const deps: ProcessorDeps = { ...this.#o.deps, signal: this.#abort.signal };
    for (let i = 0; i < this.concurrency; i++) this.#processors.push(this.#processor(deps));
    this.#fetchLoop = this.#fetch();
  }

  /**
   * Stops fetching. Jobs already running finish; jobs fetched but not
   * started go straight back to their queues for other processes.
   */
  async quiet(): Promise<void> {
    if (this.#state !== "running") return;
    this.#state = "quiet";
    this.#wake();
    clearTimeout(this.#sleepTimer);
    this.#sleepResolve?.();
    await this.#fetchLoop;
    const unstarted = this.#buffer.splice(0);
    for (const resolve of this.#waiting.splice(0)) resolve(undefined);
    if (unstarted.length) await this.#safely(() => this.#o.fetcher.requeue(unstarted), "requeue prefetched jobs");
    await this.#safely(() => this.#o.fetcher.flush(), "flush acks");
  }

  /**
   * Quiets, waits up to `timeoutMs` for running jobs, then shuts down hard:
   * aborts `ctx.signal`, waits up to `graceMs` more, and puts every job still
   * running back on its queue atomically. A job that still finishes after
   * that is acknowledged, which also removes its requeued copy (seed 004).
   */
  async stop(timeoutMs: number, graceMs = 3000): Promise<number> {
    if (this.#state === "stopped") return 0;
    await this.quiet();
    let requeued = 0;
    if (!(await this.#idleWithin(timeoutMs))) {
      this.#o.logger.warn("hard shutdown: aborting jobs still running", { capsule: this.name, busy: this.#busy.size });
      this.#abort.abort(new DOMException("edgekiq is shutting down", "AbortError"));
      if (!(await this.#idleWithin(graceMs))) requeued = await this.requeueBusy();
    }
    await this.#safely(() => this.#o.fetcher.flush(), "flush acks");
    this.#state = "stopped";
    for (const resolve of this.#waiting.splice(0)) resolve(undefined);
    return requeued;
  }

  /**
   * Puts every running job back on its queue (hard shutdown, or a serverless
   * budget running out). They are marked abandoned: if one still finishes,
   * its ack removes the requeued copy.
   */
  async requeueBusy(): Promise<number> {
    const units = [...this.#busy.values()].map((b) => b.unit);
    if (units.length === 0) return 0;
    for (const u of units) this.#abandoned.add(u);
    const n = await this.#o.fetcher.requeue(units);
    this.#o.logger.warn("requeued unfinished jobs", { capsule: this.name, count: n });
    // A job finishing inside the requeue round trip is acked now, which takes
    // its requeued copy back off the queue.
    await this.#idleWithin(Math.min(500, this.#busy.size ? 500 : 0));
    await this.#safely(() => this.#o.fetcher.flush(), "flush acks");
    return n;
  }

  /** Resolves true once nothing runs, or false after `ms`. */
  #idleWithin(ms: number): Promise<boolean> {
    if (this.#busy.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#settled = this.#settled.filter((f) => f !== check);
        resolve(false);
      }, ms);
      const check = () => {
        if (this.#busy.size > 0) return;
        clearTimeout(timer);
        this.#settled = this.#settled.filter((f) => f !== check);
        resolve(true);
      };
      this.#settled.push(check);
    });
  }

  async #processor(deps: ProcessorDeps): Promise<void> {
    for (;;) {
      // A buffered job is taken without a promise; only an empty buffer waits.
      const unit = this.#take() ?? await this.#next();
      if (!unit) return;
      const slot = this.#nextSlot++;
      const started = performance.now();
      this.#busy.set(slot, { unit, startedAt: Date.now() });
      try {
        const outcome = await processUnit(deps, unit);
        if (outcome === "ack") this.#o.fetcher.ack(unit);
        // Guarded by the private list: a unit requeueBusy() already put back is not pushed twice.
        else if (outcome === "requeue") await this.#o.fetcher.requeue([unit]);
      } catch (error) {
        // Sidekiq's processor_result: an error outside the job's own failure
        // path (a Redis outage while burying, say) must not kill the slot.
        // The job stays unacknowledged; reliable fetch recovers it.
        this.#o.onError(error, { context: "processor", capsule: this.name, queue: unit.queue });
      } finally {
        this.#prefetch.job(performance.now() - started);
        this.#busy.delete(slot);
        this.#active--;
        if (this.#abandoned.delete(unit) && this.#o.fetcher.pendingAcks > 0) {
          void this.#safely(() => this.#o.fetcher.flush(), "flush acks");
        }
        if (this.#settled.length) { for (const check of this.#settled.slice()) check(); }
        this.#wake();
      }
    }
  }

  #take(): UnitOfWork | undefined {
    const unit = this.#buffer.shift();
    if (unit) {
      this.#active++;
      if (this.#buffer.length < this.#waiting.length + this.#lowWater()) this.#wake();
    }
    return unit;
  }

  #next(): Promise<UnitOfWork | undefined> {
    if (this.#state !== "running") return Promise.resolve(undefined);
    this.#wake();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #lowWater(): number {
    return Math.max(1, Math.floor(this.#prefetch.size / 2));
  }

  /** A processor finished a job or wants one: the queues are worth asking again. */
  #wake(): void {
    this.#dry = false;
    this.#wakeLoop();
  }

  #wakeLoop(): void {
    const wake = this.#wakeFetcher;
    this.#wakeFetcher = undefined;
    if (wake) wake();
    else this.#wakePending = true;
  }

  async #fetch(): Promise<void> {
    let backoff = 0;
    while (this.#state === "running") {
      if (this.#fetchFailed) {
        this.#fetchFailed = false;
        await this.#sleep(1000);
        continue;
      }
      const free = this.concurrency + this.#prefetch.size - this.#active - this.#buffer.length - this.#requested;
      const starving = this.#waiting.length > 0 && this.#buffer.length === 0;
      const inFlight = this.#launched.size;
      if (inFlight > 0 || !starving) {
        // Jobs are running (or a fetch is on its way). Top the buffer up in
        // the background; a second fetch may follow the first, so Redis
        // works on the next batch while this process runs the last one. After
        // an empty fetch, wait for a job to finish before asking again.
        const wait = this.#dry || free < this.#lowWater() || inFlight >= MAX_IN_FLIGHT ||
          (inFlight > 0 && this.#o.onEmpty !== undefined);
        if (wait) await this.#nextWake();
        else this.#launch(free);
        continue;
      }
      let units: UnitOfWork[];
      // Every processor is idle-waiting: fetch, and block once if empty. A
      // fetch that cannot block is a round trip like any other: time it.
      const block = !this.#o.onEmpty && this.#o.deps.transport.blocking;
      const sent = performance.now();
      try {
        units = await this.#o.fetcher.take(free, block);
        if (!block && units.length > 0) this.#prefetch.trip(performance.now() - sent);
      } catch (error) {
        this.#o.onError(error, { context: "fetch", capsule: this.name });
        await this.#sleep(1000);
        continue;
      }
      if (units.length === 0) {
        if (this.#o.onEmpty) {
          if (this.#active === 0 && this.#buffer.length === 0) this.#o.onEmpty();
          await this.#nextWake();
        } else if (!this.#o.deps.transport.blocking) {
          backoff = Math.min(this.#o.pollMaxMs, backoff ? backoff * 2 : 50);
          await this.#sleep(backoff);
        }
        continue;
      }
      backoff = 0;
      this.#deliver(units);
    }
    await Promise.all(this.#launched);
  }

  /** Starts a non-blocking fetch of up to `max` jobs and goes on without waiting for it. */
  #launch(max: number): void {
    this.#requested += max;
    const sent = performance.now();
    const done = this.#o.fetcher.take(max, false).then(
      (units) => {
        this.#prefetch.trip(performance.now() - sent);
        this.#deliver(units);
        this.#dry = units.length === 0;
      },
      (error) => {
        this.#fetchFailed = true;
        this.#o.onError(error, { context: "fetch", capsule: this.name });
      },
    ).finally(() => {
      this.#requested -= max;
      this.#launched.delete(done);
      this.#wakeLoop();
    });
    this.#launched.add(done);
  }

  #deliver(units: UnitOfWork[]): void {
    for (const unit of units) {
      const waiter = this.#waiting.shift();
      if (waiter) {
        this.#active++;
        waiter(unit);
      } else this.#buffer.push(unit);
    }
  }

  /**
   * Waits for a processor to finish or ask for work. A wake-up that arrived
   * while a fetch was in flight is not lost: without this, a fetch that came
   * back empty after the last job finished would wait forever.
   */
  #nextWake(): Promise<void> {
    if (this.#wakePending || this.#state !== "running") {
      this.#wakePending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => (this.#wakeFetcher = resolve));
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#sleepResolve = resolve;
      this.#sleepTimer = setTimeout(resolve, ms);
    });
  }

  async #safely(fn: () => Promise<unknown>, what: string): Promise<void> {
    try {
      await fn();
    } catch (error) {
      this.#o.onError(error, { context: what, capsule: this.name });
    }
  }
}
