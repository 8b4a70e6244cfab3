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
