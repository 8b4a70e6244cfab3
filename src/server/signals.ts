/**
 * Signals, Sidekiq's way: handlers only enqueue the signal; one loop acts on
 * it (Sidekiq's self-pipe). Remote signals from the heartbeat join the same
 * queue, so `Process#quiet!` from Ruby and `kill -TSTP` behave the same.
 *
 * - INT, TERM: stop (a second INT during shutdown: requeue and exit now);
 * - TSTP: quiet;
 * - TTIN: log every running job and each capsule's state.
 *
 * @module
 */
import type { Runtime, SignalName } from "../runtime/runtime.ts";

/** The signals a worker acts on. */
export const WORKER_SIGNALS: readonly SignalName[] = ["SIGINT", "SIGTERM", "SIGTSTP", "SIGTTIN"];

/**
 * A queue of signals drained by one async loop.
 *
 * @example
 * ```ts
 * const queue = new SignalQueue(async (sig) => { if (sig === "TERM") await worker.stop(); });
 * queue.listen(currentRuntime());
 * queue.push("TSTP"); // from a remote signal
 * ```
 */
export class SignalQueue {
  #pending: string[] = [];
  #draining = false;
  #handle: (signal: string) => Promise<void> | void;
  #unsubscribe: Array<() => void> = [];

  constructor(handle: (signal: string) => Promise<void> | void) {
    this.#handle = handle;
  }

  /** Subscribes to the process signals through the runtime layer. */
  listen(runtime: Runtime): void {
    for (const name of WORKER_SIGNALS) {
      this.#unsubscribe.push(runtime.onSignal(name, () => this.push(name.slice(3))));
    }
  }

  /** Unsubscribes from process signals. */
  close(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
  }

  /** Enqueues a signal by its short name (`INT`, `TERM`, `TSTP`, `TTIN`). */
  push(signal: string): void {
    this.#pending.push(signal);
    if (!this.#draining) void this.#drain();
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#pending.length) await this.#handle(this.#pending.shift()!);
    } finally {
      this.#draining = false;
    }
  }
}

/** What the worker's signals act on. */
export interface SignalTarget {
  /** INT/TERM: stop (timeout, then hard shutdown). */
  stop(): Promise<void>;
  /** A second INT while stopping: put running jobs back and exit now. */
  abort(): Promise<void>;
  /** TSTP: stop fetching. */
  quiet(): Promise<void>;
  /** TTIN: log what runs. */
  dump(): void;
  /** Whether a stop is already under way. */
  readonly stopping: boolean;
  warn(message: string, fields: Record<string, unknown>): void;
}

/**
 * The signal-to-action map, Sidekiq's: INT and TERM stop, a second INT
 * during the stop puts running jobs back and exits at once, TSTP quiets,
 * TTIN dumps the running jobs.
 *
 * @example
 * ```ts
 * const queue = new SignalQueue(signalActions(target));
 * ```
 */
export function signalActions(target: SignalTarget): (signal: string) => void {
  let interrupts = 0;
  return (signal) => {
    switch (signal) {
      case "INT":
      case "TERM":
        if (target.stopping && signal === "INT" && ++interrupts > 1) {
          void target.abort();
          return;
        }
        interrupts = 1;
        void target.stop();
        return;
      case "TSTP":
        void target.quiet();
        return;
      case "TTIN":
        target.dump();
        return;
      default:
        target.warn("unknown signal ignored", { signal });
    }
  };
}
