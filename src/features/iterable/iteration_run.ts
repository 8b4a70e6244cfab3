/**
 * The context an iterable job's `each`, `perItem` and hooks receive: the
 * job's own context plus where its iteration stands (Sidekiq's `cursor`,
 * `current_object`, `executions`, `cancelled?`).
 *
 * @module
 */
import type { JobContext } from "../../job.ts";
import type { Keys } from "../../keys.ts";
import type { Logger } from "../../logger.ts";
import type { JobPayload } from "../../payload.ts";
import type { Transport } from "../../transport/transport.ts";
import type { IterationState } from "./iteration_states.ts";

/** What an iterable job's steps and hooks receive. */
export interface IterationContext<I = unknown, C = unknown> extends JobContext {
  /**
   * Where the job would resume: the cursor yielded with the last item done
   * (the saved one at the start of a run; null before the first item ever).
   */
  readonly cursor: C | null;
  /** The item being processed; in `onStop` and `onComplete`, the last one. */
  readonly current: I | undefined;
  /** Runs so far, this one included: 1 on the first run (then `onStart`), more on a resume (`onResume`). */
  readonly executions: number;
  /** Seconds spent iterating over every run, this one included. */
  readonly runtime: number;
  /** Whether the job was cancelled: true in `onCancel` and the `onStop` and `onComplete` after it. */
  readonly cancelled: boolean;
  /** When it was cancelled (epoch seconds), if it was. */
  readonly cancelledAt: number | undefined;
}

/** One run's live state, seen by the job as an {@link IterationContext}. */
export class IterationRun implements IterationContext {
  cursor: unknown;
  current: unknown = undefined;
  readonly executions: number;
  #ctx: JobContext;
  #before: number;
  #started = performance.now();
  #ended: number | undefined;
  #cancelledAt: number | undefined;

  constructor(ctx: JobContext, saved: IterationState | undefined) {
    this.#ctx = ctx;
    this.cursor = saved?.cursor ?? null;
    this.executions = (saved?.executions ?? 0) + 1;
    this.#before = saved?.runtime ?? 0;
    this.#cancelledAt = saved?.cancelled;
  }

  get jid(): string {
    return this.#ctx.jid;
  }
  get queue(): string {
    return this.#ctx.queue;
  }
  get retryCount(): number {
    return this.#ctx.retryCount;
  }
  get payload(): Readonly<JobPayload> {
    return this.#ctx.payload;
  }
  get logger(): Logger {
    return this.#ctx.logger;
  }
  get signal(): AbortSignal {
    return this.#ctx.signal;
  }
  get stopping(): AbortSignal {
    return this.#ctx.stopping;
  }
  get transport(): Transport {
    return this.#ctx.transport;
  }
  get keys(): Keys {
    return this.#ctx.keys;
  }
  progress(value: unknown): void {
    this.#ctx.progress(value);
  }

  /** Milliseconds this run has iterated. */
  get elapsedMs(): number {
    return (this.#ended ?? performance.now()) - this.#started;
  }

  get runtime(): number {
    return this.#before + this.elapsedMs / 1000;
  }

  get cancelled(): boolean {
    return this.#cancelledAt !== undefined;
  }

  get cancelledAt(): number | undefined {
    return this.#cancelledAt;
  }

  /** Records a cancel seen in Redis. */
  cancel(at: number): void {
    this.#cancelledAt ??= at;
  }

  /** Stops the run's clock: hooks after the loop do not count as iterating. */
  finish(): void {
    this.#ended ??= performance.now();
  }
}
