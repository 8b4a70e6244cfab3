/**
 * The end of a burst of work: what runs side by side in one process (jobs
 * started by one fetch's reply, say) adds its part within a few microtask
 * rounds of each other, so waiting for a few rounds in which nothing was
 * added gathers the whole burst, and costs no time when there is nothing
 * more to come (everything runnable then waits on I/O).
 *
 * @module
 */

/** Microtask rounds with nothing added after which a burst is over, by default. */
const QUIET_ROUNDS = 16;

/**
 * Calls `fire` once a burst is over: after some microtask rounds in which
 * `note()` was not called, or at a 0 ms timer (a backstop), whichever comes
 * first; `end()` ends the watch sooner, without firing.
 *
 * @example
 * ```ts
 * const burst = new EndOfBurst(() => sendAll(queued));
 * queued.push(item);
 * burst.note(); // sendAll runs once the items added alongside this one are in
 * ```
 */
export class EndOfBurst {
  #fire: () => void;
  #rounds: number;
  #watching = false;
  #watches = 0;
  #notes = 0;
  #backstop: ReturnType<typeof setTimeout> | undefined;

  /** `rounds`: the quiet microtask rounds that end a burst; more than one item takes to be added. */
  constructor(fire: () => void, options: { rounds?: number } = {}) {
    this.#fire = fire;
    this.#rounds = options.rounds ?? QUIET_ROUNDS;
  }

  /** Something was added: the quiet rounds start again, and the watch starts if it is off. */
  note(): void {
    this.#notes++;
    if (this.#watching) return;
    this.#watching = true;
    this.#backstop = setTimeout(() => this.#over(), 0);
    // A watch ended by `end()` stops at its next round, even if a new one has begun by then.
    const watch = ++this.#watches;
    const round = (seen: number, quiet: number): void => {
      if (!this.#watching || watch !== this.#watches) return;
      if (this.#notes !== seen) quiet = 0;
      else if (++quiet >= this.#rounds) return this.#over();
      queueMicrotask(() => round(this.#notes, quiet));
    };
    queueMicrotask(() => round(this.#notes, 0));
  }

  /** Ends the watch without firing (the caller acts now); false if none was on. */
  end(): boolean {
    if (!this.#watching) return false;
    this.#watching = false;
    clearTimeout(this.#backstop);
    return true;
  }

  #over(): void {
    if (this.end()) this.#fire();
  }
}
