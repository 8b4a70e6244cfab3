/**
 * The manager of one capsule (Sidekiq's Manager; the capsule is its
 * configuration, `CapsuleConfig`): `concurrency` processor loops fed by
 * one {@link Feeder} (which owns each fetched job's life), and the
 * capsule's lifecycle: quiet, stop, hard shutdown.
 *
 * @module
 */
import type { Logger } from "../logger.ts";
import type { BusyUnit, Feeder } from "./feeder.ts";
import type { Fetcher } from "./fetcher.ts";
import {
  CarriedOutcome,
  type PendingOutcome,
  type ProcessorDeps,
  ReadyUnit,
  readyUnit,
  type SharedDeps,
  type UnitOutcome,
  writeUncarried,
} from "./processor.ts";
import type { UnitOfWork } from "./unit_of_work.ts";
import type { OutcomeWrite } from "./worker_feature.ts";
import { Settler } from "./settler.ts";

export type { BusyUnit } from "./feeder.ts";

/** Options for {@link Manager}. */
export interface ManagerOptions {
  name: string;
  concurrency: number;
  fetcher: Fetcher;
  feeder: Feeder;
  deps: SharedDeps;
  logger: Logger;
  /** Errors the manager survives (processor crashes, failed requeues). */
  onError: (error: unknown, context: Record<string, unknown>) => void;
}

/** Lifecycle states. */
export type ManagerState = "new" | "running" | "quiet" | "stopped";

/**
 * Jobs per slot whose outcome writes may still be on their way while the
 * slot runs the next one (only with features' outcome writes: batches,
 * events). A no-op batch job at concurrency 10 ran at 15k jobs/s waiting
 * for each write, 33k with one in flight per slot, 37-43k with eight (and
 * those jobs no longer counted as busy nor, up to one slot's worth each,
 * against what the feeder fetches); 32 was no faster (`test/bench/batches.ts`).
 * Since a call carries a whole burst of writes (`Settler.flush`), 16 is the
 * best: 82-85k jobs/s against 71-72k with 8 and 75-77k with 24, 0.017
 * commands per job. A stop still waits for their writes (`#idleWithin`
 * counts them).
 */
const WRITES_PER_SLOT = 16;

/** A slot's units whose outcome is still being written, and its loop waiting for one to be (if it is). */
interface WritingSlot {
  count: number;
  wake: (() => void) | undefined;
}

/**
 * Runs one capsule's processors.
 *
 * @example
 * ```ts
 * const manager = new Manager({ name: "default", concurrency: 10, fetcher, feeder, deps, logger, onError });
 * manager.start();
 * await manager.quiet();
 * await manager.stop(25_000);
 * ```
 */
export class Manager {
  readonly name: string;
  readonly concurrency: number;
  readonly fetcher: Fetcher;
  #options: ManagerOptions;
  #abort = new AbortController();
  #state: ManagerState = "new";
  #processors: Promise<void>[] = [];
  #settled: Array<() => void> = [];

  constructor(options: ManagerOptions) {
    this.#options = options;
    this.name = options.name;
    this.concurrency = options.concurrency;
    this.fetcher = options.fetcher;
  }

  /** The capsule's state. */
  get state(): ManagerState {
    return this.#state;
  }

  /** The jobs running now (not those whose `perform` is over and whose outcome is still being written). */
  get busy(): ReadonlyMap<number, BusyUnit> {
    return this.#options.feeder.performing;
  }

  /** Aborted at hard shutdown: every running job's `ctx.signal`. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Units handed out and not finished, plus those fetched and waiting. */
  get inHand(): number {
    return this.#options.feeder.inHand;
  }

  /** Starts the feeder and the processors. */
  start(): void {
    if (this.#state !== "new") return;
    this.#state = "running";
    const fetcher = this.fetcher;
    const shared = this.#options.deps;
    const deps: ProcessorDeps = {
      ...shared,
      signal: this.#abort.signal,
      stopping: this.#options.feeder.stopping,
      settler: new Settler({
        transport: shared.transport,
        keys: shared.keys,
        heldKey: (queue) => fetcher.heldKeyOf(queue),
        signal: this.#abort.signal,
        deathHandlers: shared.deathHandlers,
        onError: shared.onError,
      }),
      tools: {
        transport: shared.transport,
        keys: shared.keys,
        logger: shared.logger,
        releaseLater: (key, value) => {
          fetcher.releaseLater(key, value);
          this.#options.feeder.flushSoon();
        },
      },
    };
    // A fetcher that carries outcome writes takes a job's lone coalescing write in its next call (see Fetcher.carry).
    const carry = fetcher.carries?.({
      uncarried: (unit, write) => writeUncarried(deps, unit, write),
      wanted: () => this.#options.feeder.flushSoon(),
    });
    this.#options.feeder.start();
    for (let i = 0; i < this.concurrency; i++) this.#processors.push(this.#processor(deps, carry));
  }

  /**
   * Stops fetching. Jobs already running finish; jobs fetched but not
   * started go straight back to their queues for other processes. Running
   * jobs see `ctx.stopping` abort: long jobs stop at their next safe point.
   */
  async quiet(): Promise<void> {
    if (this.#state !== "running") return;
    this.#state = "quiet";
    await this.#options.feeder.quiet();
  }

  /**
   * Quiets, waits up to `timeoutMs` for running jobs, then shuts down hard:
   * aborts `ctx.signal`, waits up to `graceMs` more, and puts every job still
   * running back on its queue atomically (Sidekiq's contract: such a job runs
   * again, elsewhere). Resolves to the number of jobs put back.
   */
  async stop(timeoutMs: number, graceMs = 3000): Promise<number> {
    if (this.#state === "stopped") return 0;
    await this.quiet();
    let requeued = 0;
    if (!(await this.#idleWithin(timeoutMs))) {
      this.#options.logger.warn("hard shutdown: aborting jobs still running", {
        capsule: this.name,
        busy: this.#options.feeder.runningCount,
      });
      this.#abort.abort(new DOMException("edgekiq is shutting down", "AbortError"));
      if (!(await this.#idleWithin(graceMs))) {
        // If this fails the jobs stay held: the release at stop (or recovery) gives them back.
        requeued = await this.requeueBusy().catch((error) => {
          this.#options.onError(error, { context: "requeue running jobs", capsule: this.name });
          return 0;
        });
      }
    }
    await this.#options.feeder.flush();
    this.#state = "stopped";
    return requeued;
  }

  /**
   * Puts every running job back on its queue (hard shutdown, or a serverless
   * budget running out); a job that still finishes takes its requeued copy
   * back (see {@link Feeder.requeueRunning}). Resolves to how many went back.
   */
  async requeueBusy(): Promise<number> {
    const n = await this.#options.feeder.requeueRunning();
    if (n === 0) return 0;
    this.#options.logger.warn("requeued unfinished jobs", { capsule: this.name, count: n });
    await this.#idleWithin(500);
    await this.#options.feeder.flush();
    return n;
  }

  /**
   * Resolves true once no unit is handed out (no job running and none
   * whose outcome is still being written), or false after `ms`.
   */
  #idleWithin(ms: number): Promise<boolean> {
    const feeder = this.#options.feeder;
    if (feeder.runningCount === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#settled = this.#settled.filter((f) => f !== check);
        resolve(false);
      }, ms);
      const check = () => {
        if (feeder.runningCount > 0) return;
        clearTimeout(timer);
        this.#settled = this.#settled.filter((f) => f !== check);
        resolve(true);
      };
      this.#settled.push(check);
    });
  }

  async #processor(deps: ProcessorDeps, carry: ((write: OutcomeWrite) => boolean) | undefined): Promise<void> {
    const feeder = this.#options.feeder;
    // With features' outcome writes, a slot starts its next job as soon as
    // `perform` is over, while earlier ones' writes finish (at most
    // WRITES_PER_SLOT per slot): their round trip is not the slot's idle time.
    const overlap = deps.observers.some((f) => f.outcome !== undefined);
    const writing: WritingSlot = { count: 0, wake: undefined };
    const settler = deps.settler;
    for (;;) {
      // A buffered job is taken without a promise; only an empty buffer waits (sending the writes made so far).
      let unit = feeder.take();
      if (!unit) settler.flush();
      unit ??= await feeder.next();
      if (!unit) break;
      const started = performance.now();
      let pending: PendingOutcome | undefined;
      try {
        if (unit.recovered) await feeder.begin(unit);
        // A suspect's outcome and ack are written before the next suspect starts: never carried.
        let ready = readyUnit(deps, unit, {
          control: feeder.control(unit),
          defer: overlap,
          carry: unit.suspect ? undefined : carry,
        });
        // An outcome decided before `perform` (a receive hook's Discard, say) is awaited too: every job gives the
        // loop a turn, on which the feeder's loop fetches ahead (a slot running buffered jobs back to back starves it).
        if (!(ready instanceof ReadyUnit)) ready = await ready;
        let outcome: UnitOutcome | PendingOutcome | CarriedOutcome | Promise<UnitOutcome>;
        if (ready instanceof ReadyUnit) {
          ready.start();
          // Awaited here, in the loop, not in a helper: a job then costs the
          // promise its `perform` makes and the await on it, no other (each
          // also runs a hook per promise while AsyncLocalStorage is on).
          let result: unknown;
          let error: unknown;
          let threw = false;
          try {
            // Awaited even when `perform` is synchronous, for the same turn (flows of synchronous children ran 17%
            // slower without it).
            result = await ready.perform();
          } catch (thrown) {
            error = thrown;
            threw = true;
          }
          outcome = threw ? ready.threw(error) : ready.returned(result);
          if (outcome instanceof Promise) outcome = await outcome;
        } else outcome = ready;
        if (typeof outcome === "string") {
          const finishing = feeder.finish(unit, outcome, performance.now() - started);
          if (finishing) await finishing;
        } else if (outcome instanceof CarriedOutcome) {
          feeder.finishCarried(unit, outcome.write, performance.now() - started);
        } else pending = outcome;
      } catch (error) {
        await this.#failed(unit, error, started);
      }
      if (!pending) {
        if (this.#settled.length) this.#checkSettled();
        continue;
      }
      feeder.ran(unit, performance.now() - started);
      this.#whenWritten(unit, pending, { writing, started });
      // Writes of jobs finishing together share a call, so a few in flight per slot make each call carry more.
      while (writing.count > WRITES_PER_SLOT) {
        settler.flush();
        await new Promise<void>((wake) => (writing.wake = wake));
      }
    }
    settler.flush();
    while (writing.count > 0) await new Promise<void>((wake) => (writing.wake = wake));
  }

  /**
   * Hands a unit whose outcome is being written (the overlapping path; see
   * #processor) to the feeder once it is, by callback: no promise per job.
   */
  #whenWritten(unit: UnitOfWork, pending: PendingOutcome, at: { writing: WritingSlot; started: number }): void {
    const { writing, started } = at;
    writing.count++;
    const over = () => {
      writing.count--;
      const wake = writing.wake;
      writing.wake = undefined;
      wake?.();
      if (this.#settled.length) this.#checkSettled();
    };
    const failed = (error: unknown) => void this.#failed(unit, error, started).then(over, over);
    pending.settle((outcome) => {
      let finishing: Promise<void> | undefined;
      try {
        finishing = this.#options.feeder.finish(unit, outcome, performance.now() - started);
      } catch (error) {
        return failed(error);
      }
      if (finishing) finishing.then(over, failed);
      else over();
    }, failed);
  }

  /**
   * Sidekiq's processor_result: an error outside the job's own failure path
   * must not kill the slot. The job stays held.
   */
  async #failed(unit: UnitOfWork, error: unknown, started: number): Promise<void> {
    const feeder = this.#options.feeder;
    this.#options.onError(error, { context: "processor", capsule: this.name, queue: unit.queue });
    if (feeder.holds(unit)) {
      try {
        await feeder.finish(unit, "abandon", performance.now() - started);
      } catch { /* it stays held: recovery gives it back */ }
    }
  }

  #checkSettled(): void {
    for (const check of this.#settled.slice()) check();
  }
}
