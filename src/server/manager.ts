/**
 * The manager of one capsule (Sidekiq's Manager; the capsule is its
 * configuration, {@link CapsuleConfig}): `concurrency` processor loops fed by
 * one {@link Feeder}, and the capsule's lifecycle: quiet, stop, hard
 * shutdown.
 *
 * @module
 */
import type { Logger } from "../logger.ts";
import type { Feeder } from "./feeder.ts";
import type { Fetcher } from "./fetch.ts";
import type { UnitOfWork } from "./unit_of_work.ts";
import { type ProcessorDeps, processUnit } from "./processor.ts";

/** A job being worked on, as the heartbeat's work hash shows it. */
export interface BusyUnit {
  readonly unit: UnitOfWork;
  /** Epoch ms when it started. */
  readonly startedAt: number;
}

/** Options for {@link Manager}. */
export interface ManagerOptions {
  name: string;
  concurrency: number;
  fetcher: Fetcher;
  feeder: Feeder;
  deps: Omit<ProcessorDeps, "signal" | "stopping" | "tools">;
  logger: Logger;
  /** Errors the manager survives (processor crashes, failed requeues). */
  onError: (error: unknown, context: Record<string, unknown>) => void;
}

/** Lifecycle states. */
export type ManagerState = "new" | "running" | "quiet" | "stopped";

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
  #o: ManagerOptions;
  #abort = new AbortController();
  #stopping = new AbortController();
  #state: ManagerState = "new";
  #busy = new Map<number, BusyUnit>();
  #processors: Promise<void>[] = [];
  #settled: Array<() => void> = [];
  #nextSlot = 0;
  /** Units whose job may be back on its queue: acknowledged with their payload. */
  #mayBeRequeued = new Set<UnitOfWork>();

  constructor(options: ManagerOptions) {
    this.#o = options;
    this.name = options.name;
    this.concurrency = options.concurrency;
    this.fetcher = options.fetcher;
  }

  /** The capsule's state. */
  get state(): ManagerState {
    return this.#state;
  }

  /** The jobs running now. */
  get busy(): ReadonlyMap<number, BusyUnit> {
    return this.#busy;
  }

  /** Aborted at hard shutdown: every running job's `ctx.signal`. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Units handed out and not finished, plus those fetched and waiting. */
  get held(): number {
    return this.#o.feeder.held;
  }

  /** Starts the feeder and the processors. */
  start(): void {
    if (this.#state !== "new") return;
    this.#state = "running";
    const fetcher = this.fetcher;
    const deps: ProcessorDeps = {
      ...this.#o.deps,
      signal: this.#abort.signal,
      stopping: this.#stopping.signal,
      tools: {
        releaseLater: (key, value) => {
          fetcher.releaseLater(key, value);
          this.#o.feeder.flushSoon();
        },
      },
    };
    this.#o.feeder.start();
    for (let i = 0; i < this.concurrency; i++) this.#processors.push(this.#processor(deps));
  }

  /**
   * Stops fetching. Jobs already running finish; jobs fetched but not
   * started go straight back to their queues for other processes. Running
   * jobs see `ctx.stopping` abort: long jobs stop at their next safe point.
   */
  async quiet(): Promise<void> {
    if (this.#state !== "running") return;
    this.#state = "quiet";
    this.#stopping.abort(new DOMException("edgekiq is stopping", "AbortError"));
    const unstarted = await this.#o.feeder.stop();
    if (unstarted.length) await this.#safely(() => this.fetcher.requeue(unstarted), "requeue prefetched jobs");
    await this.#safely(() => this.fetcher.flush(), "flush acks");
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
      this.#o.logger.warn("hard shutdown: aborting jobs still running", { capsule: this.name, busy: this.#busy.size });
      this.#abort.abort(new DOMException("edgekiq is shutting down", "AbortError"));
      if (!(await this.#idleWithin(graceMs))) {
        // If this fails the jobs stay held: the release at stop (or recovery) gives them back.
        requeued = await this.requeueBusy().catch((error) => {
          this.#o.onError(error, { context: "requeue running jobs", capsule: this.name });
          return 0;
        });
      }
    }
    await this.#safely(() => this.fetcher.flush(), "flush acks");
    this.#state = "stopped";
    return requeued;
  }

  /**
   * Puts every running job back on its queue (hard shutdown, or a serverless
   * budget running out). A job that still finishes is acknowledged with its
   * payload at once, which takes the requeued copy back if it has not started
   * elsewhere (the race Sidekiq leaves open: a job finishing between "put
   * back" and "exit" ran twice).
   */
  async requeueBusy(): Promise<number> {
    const units = [...this.#busy.values()].map((b) => b.unit);
    if (units.length === 0) return 0;
    for (const u of units) this.#mayBeRequeued.add(u);
    const n = await this.fetcher.requeue(units);
    this.#o.logger.warn("requeued unfinished jobs", { capsule: this.name, count: n });
    await this.#idleWithin(500);
    await this.#safely(() => this.fetcher.flush(), "flush acks");
    return n;
  }

  /**
   * This process stalled past its TTL and another recovered what it held:
   * the jobs running now are back on their queues too. Each is acknowledged
   * with its payload when it finishes, which takes the copy back if it has
   * not started elsewhere.
   */
  recovered(): void {
    for (const busy of this.#busy.values()) this.#mayBeRequeued.add(busy.unit);
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
    const feeder = this.#o.feeder;
    for (;;) {
      // A buffered job is taken without a promise; only an empty buffer waits.
      const unit = feeder.take() ?? await feeder.next();
      if (!unit) return;
      const slot = this.#nextSlot++;
      const started = performance.now();
      this.#busy.set(slot, { unit, startedAt: Date.now() });
      try {
        // A recovered job may be the pill: its start is written before it
        // runs, so if it kills this process too it is counted (the mark
        // otherwise travels with the next fetch, which a pill never allows).
        if (unit.recovered) await this.#safely(() => this.fetcher.writeStart(unit), "write a recovered job's start");
        const outcome = await processUnit(deps, unit);
        if (outcome === "ack") {
          this.fetcher.ack(unit, this.#mayBeRequeued.has(unit));
          // Its ack is written before the next suspect starts: were that one
          // the pill, this one would otherwise die held and counted with it.
          if (unit.suspect) await this.#safely(() => this.fetcher.flush(), "flush a suspect's ack");
          // After quiet no fetch carries acks any more: send them on their own.
          else if (this.#state !== "running") this.#flushSoon();
        } else if (outcome === "requeue") await this.fetcher.requeue([unit]);
        // "abandon": its outcome could not be written; it stays held, and
        // the release at stop (or recovery) gives it back.
      } catch (error) {
        // Sidekiq's processor_result: an error outside the job's own failure
        // path must not kill the slot. The job stays held.
        this.#o.onError(error, { context: "processor", capsule: this.name, queue: unit.queue });
      } finally {
        this.#mayBeRequeued.delete(unit);
        this.#busy.delete(slot);
        feeder.finished(unit, performance.now() - started);
        if (this.#settled.length) { for (const check of this.#settled.slice()) check(); }
      }
    }
  }

  #flushing: Promise<void> | undefined;
  #flushAgain = false;

  /** One flush at a time; acks that arrive meanwhile go in the next. */
  #flushSoon(): void {
    if (this.#flushing) {
      this.#flushAgain = true;
      return;
    }
    this.#flushing = this.#safely(() => this.fetcher.flush(), "flush acks").finally(() => {
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
      this.#o.onError(error, { context: what, capsule: this.name });
    }
  }
}
