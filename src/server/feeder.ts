/**
 * The feeder: keeps a capsule's processors supplied. It holds a small buffer
 * (the prefetch, sized by {@link Prefetch}) and tops it up through one
 * fetch-once path; every fetch carries the acks of the jobs finished since
 * the last one. While jobs run, a second fetch may go out behind the first,
 * so Redis prepares the next batch while this process runs the last one.
 *
 * What happens when the queues are empty is an explicit policy:
 * - `block`: wait in Redis for the next job (TCP), abortably;
 * - `backoff`: poll again after a growing pause (HTTP, where every request is billed);
 * - `drain`: never wait; report empty once nothing runs (serverless drain).
 *
 * Suspects (jobs that were running in a process that died) start one at a
 * time, in order: an innocent job never runs twice beside the same poison pill.
 *
 * @module
 */
import type { Fetcher } from "./fetch.ts";
import type { UnitOfWork } from "./unit_of_work.ts";
import type { Prefetch } from "./prefetch.ts";

/** Fetches a capsule keeps on their way at once while it is busy. */
const MAX_IN_FLIGHT = 2;

/** What to do when a fetch finds the queues empty. */
export type IdlePolicy = "block" | "backoff" | "drain";

/** Options for {@link Feeder}. */
export interface FeederOptions {
  fetcher: Fetcher;
  concurrency: number;
  prefetch: Prefetch;
  idle: IdlePolicy;
  /** Longest pause of the `backoff` policy, ms. */
  pollMaxMs: number;
  /** `drain` policy: the queues were empty and nothing was running or held. */
  onEmpty?: () => void;
  /**
   * The fetch found this process presumed dead (its entry expired). Resolve
   * once it is registered again (a heartbeat), or reject to pause; a drain
   * ends instead.
   */
  onDead: () => Promise<void>;
  /**
   * The held hashes had been recovered while this process stalled: jobs held
   * from before are back on their queues. The buffer is already dropped;
   * running jobs must acknowledge with their payload.
   */
  onRecovered: () => void;
  /** Errors the feeder survives (fetch failures). */
  onError: (error: unknown, context: Record<string, unknown>) => void;
}

/**
 * Supplies one capsule's processors with jobs.
 *
 * @example
 * ```ts
 * const feeder = new Feeder({ fetcher, concurrency: 10, prefetch, idle: "block", pollMaxMs: 5000,
 *   onDead: () => worker.beat(), onRecovered: () => {}, onError });
 * feeder.start();
 * const unit = feeder.take() ?? await feeder.next();
 * ```
 */
export class Feeder {
  #o: FeederOptions;
  #running = false;
  #buffer: UnitOfWork[] = [];
  #waiting: Array<(unit: UnitOfWork | undefined) => void> = [];
  /** Units handed out and not yet finished. */
  #active = 0;
  #suspectActive = false;
  #loop: Promise<void> = Promise.resolve();
  #launched = new Set<Promise<void>>();
  #requested = 0;
  /** Waiting processors a fetch on its way will start at once. */
  #promised = 0;
  #failed = false;
  /** The last background fetch found nothing: wait for a processor before asking again. */
  #dry = false;
  #wake: (() => void) | undefined;
  /** A wake-up that came while the loop was busy; its next wait returns at once. */
  #wakePending = false;
  #sleep: { timer: ReturnType<typeof setTimeout>; resolve: () => void } | undefined;
  #blocking = new AbortController();
  /** Something must reach Redis soon (a lock released at a job's start) even if no fetch is due. */
  #flushWanted = false;

  constructor(options: FeederOptions) {
    this.#o = options;
  }

  /** Units handed out and not finished, plus those fetched and waiting. */
  get held(): number {
    return this.#active + this.#buffer.length;
  }

  /** Starts the fetch loop. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /**
   * A unit to start now, if one is buffered and may start. Cheap: no
   * promise, which is what keeps a busy capsule fast.
   */
  take(): UnitOfWork | undefined {
    const head = this.#buffer[0];
    if (!head || (head.suspect && this.#suspectActive)) return undefined;
    this.#buffer.shift();
    this.#handOut(head);
    if (this.#buffer.length < this.#waiting.length + this.#lowWater()) this.#poke();
    return head;
  }

  /** Waits for the next unit; `undefined` once the feeder stops. */
  next(): Promise<UnitOfWork | undefined> {
    if (!this.#running) return Promise.resolve(undefined);
    this.#poke();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** A unit handed out has finished after `ms`; its outcome is the caller's business. */
  finished(unit: UnitOfWork, ms: number): void {
    this.#o.prefetch.job(ms);
    this.#active--;
    if (unit.suspect) {
      this.#suspectActive = false;
      this.#dispatch();
    }
    this.#poke();
  }

  /**
   * Sends what the fetcher has pending (acks, lock releases) with a round
   * trip of its own soon, instead of with the next fetch: when every slot
   * runs a long job there may be no next fetch for a long time.
   */
  flushSoon(): void {
    this.#flushWanted = true;
    this.#signal();
  }

  /**
   * Stops fetching: cuts a blocking wait short, waits for fetches on their
   * way, and returns the units fetched but not started (for the caller to
   * put back). Waiting processors get `undefined`.
   */
  async stop(): Promise<UnitOfWork[]> {
    if (!this.#running) return this.#buffer.splice(0);
    this.#running = false;
    this.#blocking.abort();
    this.#poke();
    if (this.#sleep) {
      clearTimeout(this.#sleep.timer);
      this.#sleep.resolve();
    }
    await this.#loop;
    for (const resolve of this.#waiting.splice(0)) resolve(undefined);
    return this.#buffer.splice(0);
  }

  #handOut(unit: UnitOfWork): void {
    this.#active++;
    if (unit.suspect) this.#suspectActive = true;
    this.#o.fetcher.started(unit);
  }

  /** Gives buffered units to waiting processors, in order, while they may start. */
  #dispatch(): void {
    while (this.#waiting.length > 0) {
      const unit = this.take();
      if (!unit) return;
      this.#waiting.shift()!(unit);
    }
  }

  #startable(): boolean {
    const head = this.#buffer[0];
    return head !== undefined && !(head.suspect && this.#suspectActive);
  }

  #lowWater(): number {
    return Math.max(1, Math.floor(this.#o.prefetch.size / 2));
  }

  /** A processor finished a job or wants one: the queues are worth asking again. */
  #poke(): void {
    this.#dry = false;
    this.#signal();
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    if (wake) wake();
    else this.#wakePending = true;
  }

  async #run(): Promise<void> {
    let backoff = 0;
    while (this.#running) {
      if (this.#failed) {
        this.#failed = false;
        await this.#pause(1000);
        continue;
      }
      const free = this.#o.concurrency + this.#o.prefetch.size - this.held - this.#requested;
      if (this.#flushWanted && this.#launched.size === 0) {
        // Carried by a fetch (taking what is free, often nothing) so it costs one round trip either way.
        this.#flushWanted = false;
        this.#launch(this.#fetch(Math.max(0, free), false));
        continue;
      }
      const starving = this.#waiting.length > 0 && !this.#startable();
      const inFlight = this.#launched.size;
      if (free <= 0 || inFlight > 0 || !starving) {
        // Jobs are running (or a fetch is on its way). Top the buffer up in
        // the background; after an empty fetch, wait for a job to finish
        // before asking again.
        const wait = free < this.#lowWater() || this.#dry || inFlight >= MAX_IN_FLIGHT ||
          (inFlight > 0 && this.#o.idle === "drain");
        if (wait) await this.#nextWake();
        else this.#launch(this.#fetch(free, false));
        continue;
      }
      // Every processor waits: fetch now, and apply the idle policy if empty.
      const got = await this.#fetch(free, this.#o.idle === "block");
      if (got > 0 || this.#failed || !this.#running) {
        backoff = 0;
        continue;
      }
      if (this.#o.idle === "drain") {
        if (this.held === 0) this.#o.onEmpty?.();
        await this.#nextWake();
      } else if (this.#o.idle === "backoff") {
        backoff = Math.min(this.#o.pollMaxMs, backoff ? backoff * 2 : 50);
        await this.#pause(backoff);
      }
    }
    await Promise.all(this.#launched);
  }

  /** Runs a fetch in the background, at most {@link MAX_IN_FLIGHT} at once. */
  #launch(fetch: Promise<number>): void {
    const done = fetch.then((got) => {
      this.#dry = got === 0;
    }).finally(() => {
      this.#launched.delete(done);
      this.#signal();
    });
    this.#launched.add(done);
  }

  /**
   * The one fetch path: take up to `max` (acks ride along), time the round
   * trip, deal with a presumed death or a recovery, deliver what came, and
   * block once if allowed and nothing came. Resolves to the units delivered;
   * failures are reported and pause the loop.
   */
  async #fetch(max: number, block: boolean): Promise<number> {
    const fetcher = this.#o.fetcher;
    this.#requested += max;
    // Processors waiting now start the new batch's first jobs as it arrives
    // (the fetch marks them started), unless buffered jobs come first (a
    // suspect waiting its turn) or a fetch already on its way was promised
    // them. Marking one that does not start could count an innocent job as
    // a poison pill's neighbour.
    const startNow = this.#buffer.length === 0 ? Math.max(0, this.#waiting.length - this.#promised) : 0;
    this.#promised += startNow;
    try {
      const sent = performance.now();
      const take = await fetcher.take(max, startNow);
      if (!take.alive) {
        await this.#o.onDead();
        return 0;
      }
      if (take.reregistered) {
        // Recovered while stalled: what the buffer holds is back on its queues.
        this.#buffer.length = 0;
        this.#o.onRecovered();
      }
      if (take.units.length > 0 || !block) {
        this.#o.prefetch.trip(performance.now() - sent);
        this.#deliver(take.units);
        return take.units.length;
      }
      if (!this.#running) return 0;
      const units = await fetcher.block(this.#blocking.signal);
      this.#deliver(units);
      return units.length;
    } catch (error) {
      this.#failed = true;
      this.#o.onError(error, { context: "fetch" });
      return 0;
    } finally {
      this.#requested -= max;
      this.#promised -= startNow;
    }
  }

  #deliver(units: readonly UnitOfWork[]): void {
    if (units.length === 0) return;
    // After stop() the caller requeues the buffer, so late units join it.
    for (const unit of units) this.#buffer.push(unit);
    if (this.#running) this.#dispatch();
  }

  /**
   * Waits for a processor to finish or ask for work. A wake-up that arrived
   * while a fetch was in flight is not lost: without this, a fetch that came
   * back empty after the last job finished would wait forever.
   */
  #nextWake(): Promise<void> {
    if (this.#wakePending || !this.#running) {
      this.#wakePending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => (this.#wake = resolve));
  }

  #pause(ms: number): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => {
      this.#sleep = { timer: setTimeout(resolve, ms), resolve };
    });
  }
}
