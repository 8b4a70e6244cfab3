/**
 * The feeder: the one owner of a fetched job's life in this process, from
 * fetched to buffered, running and finished (acknowledged, put back, or
 * left held). It holds a small buffer (the prefetch, sized by
 * {@link Prefetch}) and tops it up through one fetch-once path; every fetch
 * carries the acks of the jobs finished since the last one. While jobs run,
 * a second fetch may go out behind the first, so Redis prepares the next
 * batch while this process runs the last one. Processors only take units
 * and hand them back with their outcome.
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
import type { Fetcher, Take } from "./fetcher.ts";
import type { UnitOfWork } from "./unit_of_work.ts";
import type { Prefetch } from "./prefetch.ts";
import type { UnitOutcome } from "./settler.ts";
import { JobControl } from "./job_control.ts";
import type { OutcomeWrite } from "./worker_feature.ts";
import { ChurningMap } from "./churning_map.ts";

/** A job being worked on, as the heartbeat's work hash shows it. */
export interface BusyUnit {
  readonly unit: UnitOfWork;
  /** Epoch ms when it started. */
  readonly startedAt: number;
  /** Its stop switch and reported progress. */
  readonly control: JobControl;
}

/** A unit handed out, as the feeder follows it until it is finished: one record, found by the unit, per job. */
class Busy implements BusyUnit {
  // Declared, not defined: assigned once in the constructor (a class field would be defined first, then assigned;
  // this record is made for every job).
  declare readonly unit: UnitOfWork;
  declare readonly slot: number;
  declare readonly startedAt: number;
  declare readonly control: JobControl;
  /** Its `perform` is over and only its outcome's writes remain. */
  declare writing: boolean;
  /** Its job may be back on its queue (put back, or recovered elsewhere): acknowledged with its payload. */
  declare mayBeRequeued: boolean;

  constructor(unit: UnitOfWork, slot: number, control: JobControl) {
    this.unit = unit;
    this.slot = slot;
    this.startedAt = Date.now();
    this.control = control;
    this.writing = false;
    this.mayBeRequeued = false;
  }
}

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
   * from before are back on their queues. The buffer is already dropped, and
   * running jobs will be acknowledged with their payload (for the log).
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
 * await feeder.begin(unit);
 * feeder.finish(unit, outcome, ms);
 * ```
 */
export class Feeder {
  #options: FeederOptions;
  #fetching = false;
  #buffer: UnitOfWork[] = [];
  #waiting: Array<(unit: UnitOfWork | undefined) => void> = [];
  /** Units handed out and not yet finished, each with its record (churning with every job: see ChurningMap). */
  #busy = new ChurningMap<UnitOfWork, Busy>();
  #nextSlot = 0;
  /** Fetching stopped (quiet): acks go out on their own, one flush at a time. */
  #quiet = false;
  #flushing: Promise<void> | undefined;
  #flushAgain = false;
  /** Aborts at quiet: the capsule's stopping, which every job's `ctx.stopping` joins. */
  #stopping = new AbortController();
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
  /** The loop's pause; `idle`: a backoff pause (one after a failed fetch is never cut short by work to send). */
  #sleep: { timer: ReturnType<typeof setTimeout>; resolve: () => void; idle: boolean } | undefined;
  #blocking = new AbortController();
  /** Something must reach Redis soon (a lock released at a job's start) even if no fetch is due. */
  #flushWanted = false;
  /** Units whose `perform` is over and only their outcome's writes remain (they hold no slot's time). */
  #writing = 0;

  constructor(options: FeederOptions) {
    this.#options = options;
  }

  /** Units handed out and not finished, plus those fetched and waiting. */
  get inHand(): number {
    return this.#busy.size + this.#buffer.length;
  }

  /**
   * A handed-out unit's `perform` is over, `ms` after it was handed out,
   * and only its outcome's writes remain: it no longer counts against what
   * to fetch, nor as busy.
   */
  ran(unit: UnitOfWork, ms: number): void {
    const busy = this.#busy.get(unit);
    if (!busy) return;
    if (!busy.writing) {
      busy.writing = true;
      this.#writing++;
    }
    // What a job holds a slot for is its perform: its writes' wait would make jobs look slow and shrink the prefetch.
    this.#options.prefetch.job(ms);
    // Room to fetch into, but no news of the queues: after a fetch that found them empty, no fetch for this alone.
    this.#signal();
  }

  /** How many units are handed out and not finished (those whose writes remain too). */
  get runningCount(): number {
    return this.#busy.size;
  }

  /** The units handed out and not finished, by slot (those whose writes remain too). */
  get running(): ReadonlyMap<number, BusyUnit> {
    return this.#bySlot(false);
  }

  /** The units whose `perform` is running now, by slot: what a heartbeat reports as busy. */
  get performing(): ReadonlyMap<number, BusyUnit> {
    return this.#bySlot(true);
  }

  /** Whether `unit` is handed out and not finished. */
  holds(unit: UnitOfWork): boolean {
    return this.#busy.has(unit);
  }

  #bySlot(performingOnly: boolean): Map<number, BusyUnit> {
    const out = new Map<number, BusyUnit>();
    for (const busy of this.#busy.values()) if (!(performingOnly && busy.writing)) out.set(busy.slot, busy);
    return out;
  }

  /** Aborts when the capsule quiets or stops (or a drain's budget is nearly spent). */
  get stopping(): AbortSignal {
    return this.#stopping.signal;
  }

  /** The control of a unit handed out and not yet finished. */
  control(unit: UnitOfWork): JobControl | undefined {
    return this.#busy.get(unit)?.control;
  }

  /** Starts the fetch loop. */
  start(): void {
    if (this.#fetching) return;
    this.#fetching = true;
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
    if (!this.#fetching) return Promise.resolve(undefined);
    this.#poke();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /**
   * Before a unit runs: a recovered job may be the pill that killed its last
   * process, so its start is written first (if it kills this one too before
   * the next call, it is counted). Starts that come together share one call.
   */
  begin(unit: UnitOfWork): Promise<void> | undefined {
    // Most units are not recovered: no promise for them (a promise per job is
    // measurable on a busy capsule).
    if (!unit.recovered) return undefined;
    return this.#safely(() => this.#options.fetcher.writeStart(unit), "write a recovered job's start");
  }

  /**
   * A unit handed out has finished after `ms` with `outcome`: it is
   * acknowledged (with its payload if it may have been put back meanwhile),
   * put back, or left held (`abandon`: the release at stop, or recovery,
   * gives it back).
   */
  finish(unit: UnitOfWork, outcome: UnitOutcome, ms: number): Promise<void> | undefined {
    let writing: Promise<unknown> | undefined;
    try {
      if (outcome === "ack") {
        this.#options.fetcher.ack(unit, this.#busy.get(unit)?.mayBeRequeued ?? false);
        // Its ack is written before the next suspect starts: were that one
        // the pill, this one would otherwise die held and counted with it.
        if (unit.suspect) writing = this.#safely(() => this.#options.fetcher.flush(), "flush a suspect's ack");
        // After quiet no fetch carries acks any more: send them on their own.
        else if (this.#quiet) this.#flushSoon();
      } else if (outcome === "requeue") writing = this.#options.fetcher.requeue([unit]);
    } catch (error) {
      this.#release(unit, ms);
      throw error;
    }
    // An acknowledgement rides the next fetch: the common case ends here,
    // with no promise.
    if (!writing) return this.#release(unit, ms);
    return writing.then(() => this.#release(unit, ms), (error) => {
      this.#release(unit, ms);
      throw error;
    });
  }

  /**
   * A handed-out unit has finished after `ms` and its outcome is `write`
   * alone, carried by the fetcher's next call (see `Fetcher.carry`): it
   * leaves its slot now, as an acknowledged one does, and stays held until
   * the write is in and its acknowledgement has followed.
   */
  finishCarried(unit: UnitOfWork, write: OutcomeWrite, ms: number): void {
    try {
      this.#options.fetcher.carry!(unit, { write, mayBeRequeued: this.#busy.get(unit)?.mayBeRequeued ?? false });
      // After quiet no fetch carries anything: send it on its own.
      if (this.#quiet) this.#flushSoon();
    } finally {
      this.#release(unit, ms);
    }
  }

  /** A finished unit leaves its slot. */
  #release(unit: UnitOfWork, ms: number): undefined {
    const busy = this.#busy.get(unit);
    if (!busy?.writing) this.#options.prefetch.job(ms);
    if (busy) {
      busy.control.dispose();
      this.#busy.delete(unit);
      if (busy.writing) this.#writing--;
    }
    if (unit.suspect) {
      this.#suspectActive = false;
      this.#dispatch();
    }
    this.#poke();
    return undefined;
  }

  /**
   * Puts every running unit back on its queue (hard shutdown, or a
   * serverless budget running out). A job that still finishes is
   * acknowledged with its payload, which takes the requeued copy back if it
   * has not started elsewhere (the race Sidekiq leaves open: a job finishing
   * between "put back" and "exit" ran twice). Resolves to how many went back.
   */
  async requeueRunning(): Promise<number> {
    const busy = [...this.#busy.values()];
    if (busy.length === 0) return 0;
    for (const b of busy) b.mayBeRequeued = true;
    const units = busy.map((b) => b.unit);
    return await this.#options.fetcher.requeue(units);
  }

  /**
   * Sends what the fetcher has pending (acks, lock releases) with a round
   * trip of its own soon, instead of with the next fetch: when every slot
   * runs a long job there may be no next fetch for a long time.
   */
  flushSoon(): void {
    // After quiet no loop runs to carry it: a flush of its own.
    if (this.#quiet) return this.#flushSoon();
    this.#flushWanted = true;
    this.#signal();
    // A backoff pause would keep it for up to pollMaxMs: the pause ends, and the loop's next call carries it.
    const sleep = this.#sleep;
    if (sleep?.idle) {
      this.#sleep = undefined;
      clearTimeout(sleep.timer);
      sleep.resolve();
    }
  }

  /**
   * Stops fetching: cuts a blocking wait short, waits for fetches on their
   * way, puts the units fetched but not started back on their queues (for
   * other processes) and sends what is pending. Waiting processors get
   * `undefined`; running units finish as usual.
   */
  async quiet(): Promise<void> {
    this.#quiet = true;
    if (!this.#stopping.signal.aborted) this.#stopping.abort(new DOMException("edgekiq is stopping", "AbortError"));
    if (this.#fetching) {
      this.#fetching = false;
      this.#blocking.abort();
      this.#poke();
      if (this.#sleep) {
        clearTimeout(this.#sleep.timer);
        this.#sleep.resolve();
      }
      await this.#loop;
      for (const resolve of this.#waiting.splice(0)) resolve(undefined);
    }
    const unstarted = this.#buffer.splice(0);
    if (unstarted.length) await this.#safely(() => this.#options.fetcher.requeue(unstarted), "requeue prefetched jobs");
    await this.flush();
  }

  /** Sends what the fetcher has pending (acks, releases, marks) on its own; failures are reported. */
  flush(): Promise<void> {
    return this.#safely(() => this.#options.fetcher.flush(), "flush acks");
  }

  /** One flush at a time; acks that arrive meanwhile go in the next. */
  #flushSoon(): void {
    if (this.#flushing) {
      this.#flushAgain = true;
      return;
    }
    this.#flushing = this.flush().finally(() => {
      this.#flushing = undefined;
      if (this.#flushAgain) {
        this.#flushAgain = false;
        this.#flushSoon();
      }
    });
  }

  async #safely(fn: () => Promise<unknown>, what: string): Promise<void> {
    try {
      await fn();
    } catch (error) {
      this.#options.onError(error, { context: what });
    }
  }

  #handOut(unit: UnitOfWork): void {
    this.#busy.set(unit, new Busy(unit, this.#nextSlot++, new JobControl(this.#stopping.signal)));
    if (unit.suspect) this.#suspectActive = true;
    this.#options.fetcher.started(unit);
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
    return Math.max(1, Math.floor(this.#options.prefetch.size / 2));
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
    while (this.#fetching) {
      if (this.#failed) {
        this.#failed = false;
        await this.#pause(1000);
        continue;
      }
      // Units only writing their outcome leave room, up to one slot's worth each: what is in hand stays bounded
      // by twice the concurrency plus the prefetch.
      const free = this.#options.concurrency + this.#options.prefetch.size - this.inHand +
        Math.min(this.#writing, this.#options.concurrency) - this.#requested;
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
          (inFlight > 0 && this.#options.idle === "drain");
        if (wait) await this.#nextWake();
        else this.#launch(this.#fetch(free, false));
        continue;
      }
      // Every processor waits: fetch now, and apply the idle policy if empty.
      const got = await this.#fetch(free, this.#options.idle === "block");
      if (got > 0 || this.#failed || !this.#fetching) {
        backoff = 0;
        continue;
      }
      if (this.#options.idle === "drain") {
        // Carried outcome writes not yet in Redis may push work (a batch's callback): not empty until they are in.
        if (this.inHand === 0 && !this.#options.fetcher.unwritten) this.#options.onEmpty?.();
        await this.#nextWake();
      } else if (this.#options.idle === "backoff") {
        backoff = Math.min(this.#options.pollMaxMs, backoff ? backoff * 2 : 50);
        await this.#pause(backoff, true);
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
    const fetcher = this.#options.fetcher;
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
      if (!(await this.#heed(take))) return 0;
      if (take.units.length > 0 || !block) {
        this.#options.prefetch.trip(performance.now() - sent);
        this.#deliver(take.units);
        return take.units.length;
      }
      if (!this.#fetching) return 0;
      // The job that ends the wait takes one of the waiting processors; the rest of its burst may come with it.
      const blocked = await fetcher.block(this.#blocking.signal, {
        take: max - 1,
        startNow: Math.max(0, startNow - 1),
      });
      const alive = await this.#heed(blocked);
      // Delivered even from a process found presumed dead: the job that ended the wait was taken all the same.
      this.#deliver(blocked.units);
      if (blocked.failure !== undefined) {
        this.#failed = true;
        this.#options.onError(blocked.failure, { context: "fetch" });
      }
      return alive ? blocked.units.length : 0;
    } catch (error) {
      this.#failed = true;
      this.#options.onError(error, { context: "fetch" });
      return 0;
    } finally {
      this.#requested -= max;
      this.#promised -= startNow;
    }
  }

  /**
   * Acts on what a call found about this process: presumed dead (beat
   * again; false), or recovered while stalled (what the buffer holds is
   * back on its queues, and so are the jobs running now: each is
   * acknowledged with its payload, which takes the copy back if it has not
   * started elsewhere).
   */
  async #heed(take: Take): Promise<boolean> {
    if (!take.alive) {
      await this.#options.onDead();
      return false;
    }
    if (take.reregistered) {
      this.#buffer.length = 0;
      for (const busy of this.#busy.values()) busy.mayBeRequeued = true;
      this.#options.onRecovered();
    }
    return true;
  }

  #deliver(units: readonly UnitOfWork[]): void {
    if (units.length === 0) return;
    // After quiet() the buffer is requeued, so late units join it.
    for (const unit of units) this.#buffer.push(unit);
    if (this.#fetching) this.#dispatch();
  }

  /**
   * Waits for a processor to finish or ask for work. A wake-up that arrived
   * while a fetch was in flight is not lost: without this, a fetch that came
   * back empty after the last job finished would wait forever.
   */
  #nextWake(): Promise<void> {
    if (this.#wakePending || !this.#fetching) {
      this.#wakePending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => (this.#wake = resolve));
  }

  #pause(ms: number, idle = false): Promise<void> {
    if (!this.#fetching) return Promise.resolve();
    return new Promise((resolve) => {
      const sleep = {
        timer: setTimeout(() => {
          if (this.#sleep === sleep) this.#sleep = undefined;
          resolve();
        }, ms),
        resolve,
        idle,
      };
      this.#sleep = sleep;
    });
  }
}
