/**
 * Progress events at a bounded rate: a job that calls `ctx.progress()` in a
 * tight loop writes at most one event per interval. The first report is
 * written at once; later ones within the interval only keep the newest
 * value, written when the interval is up, so the last value is never lost
 * while the job runs. When the job ends, a value still waiting is dropped
 * (its outcome event says more), so no progress follows a job's end.
 *
 * @module
 */
import type { JobPayload } from "../../payload.ts";
import type { ProgressContext } from "../../server/worker_feature.ts";

/** One progress report: what to write, and where. */
export interface ProgressReport {
  readonly payload: Readonly<JobPayload>;
  readonly value: unknown;
  readonly context: ProgressContext;
}

interface JobState {
  last: number;
  pending?: ProgressReport;
  timer?: ReturnType<typeof setTimeout>;
}

/** Jobs remembered before old ones are swept (jobs put back by a shutdown never say they ended). */
const SWEEP_ABOVE = 256;

/**
 * Rate-limits progress writes per job.
 *
 * @example
 * ```ts
 * const throttle = new ProgressThrottle(1000, (report) => writeProgress(report));
 * throttle.report({ payload, value: 0.5, context }); // written now
 * throttle.report({ payload, value: 0.6, context }); // written a second after the first, unless the job ends
 * throttle.end(payload.jid);
 * ```
 */
export class ProgressThrottle {
  #intervalMs: number;
  #write: (report: ProgressReport) => void;
  #jobs = new Map<string, JobState>();

  constructor(intervalMs: number, write: (report: ProgressReport) => void) {
    this.#intervalMs = intervalMs;
    this.#write = write;
  }

  /** A job reported progress. */
  report(report: ProgressReport): void {
    const jid = report.payload.jid;
    const now = Date.now();
    const state = this.#jobs.get(jid);
    if (!state || (now - state.last >= this.#intervalMs && !state.timer)) {
      if (!state && this.#jobs.size >= SWEEP_ABOVE) this.#sweep(now);
      this.#jobs.set(jid, { last: now });
      this.#write(report);
      return;
    }
    state.pending = report;
    state.timer ??= setTimeout(() => {
      state.timer = undefined;
      const pending = state.pending;
      state.pending = undefined;
      if (!pending) return;
      state.last = Date.now();
      this.#write(pending);
    }, Math.max(0, state.last + this.#intervalMs - now));
  }

  /** The job's run ended: a value still waiting is dropped. */
  end(jid: string): void {
    const state = this.#jobs.get(jid);
    if (!state) return;
    clearTimeout(state.timer);
    this.#jobs.delete(jid);
  }

  /** Drops everything waiting (the worker stops). */
  clear(): void {
    for (const state of this.#jobs.values()) clearTimeout(state.timer);
    this.#jobs.clear();
  }

  /** How many jobs it remembers (for tests). */
  get size(): number {
    return this.#jobs.size;
  }

  #sweep(now: number): void {
    for (const [jid, state] of this.#jobs) {
      if (!state.timer && now - state.last >= 10 * this.#intervalMs) this.#jobs.delete(jid);
    }
  }
}
