/**
 * What a capsule's fetches last found about its queues: paused (skipped
 * until resumed) or broken (a key of another type than a list: skipped, and
 * told once). A blocking fetch watches neither; a queue is told broken
 * again only after a fetch has found it well.
 *
 * @module
 */
import type { Logger } from "../logger.ts";

/**
 * The paused and broken queues, as the last fetch that named each found them.
 *
 * @example
 * ```ts
 * const states = new QueueStates(logger, (q) => keys.queue(q));
 * states.note(["a", "b"], { paused: ["a"], broken: [] });
 * states.watchable(["a", "b"]); // ["b"]
 * ```
 */
export class QueueStates {
  #paused = new Set<string>();
  #broken = new Set<string>();
  #logger: Logger | undefined;
  #keyOf: (queue: string) => string;

  constructor(logger: Logger | undefined, keyOf: (queue: string) => string) {
    this.#logger = logger;
    this.#keyOf = keyOf;
  }

  /**
   * Takes in what a fetch that named `named` found. Without `broken` the
   * call looked at no queue's key (it took nothing): what was found broken
   * stays so.
   */
  note(named: readonly string[], found: { paused: readonly string[]; broken?: readonly string[] }): void {
    for (const queue of named) this.#paused.delete(queue);
    for (const queue of found.paused) this.#paused.add(queue);
    if (!found.broken) return;
    const broken = new Set(found.broken);
    for (const queue of broken) {
      if (this.#broken.has(queue)) continue;
      this.#broken.add(queue);
      this.#logger?.error("queue skipped: its key holds another type than a list", {
        queue,
        key: this.#keyOf(queue),
      });
    }
    for (const queue of named) if (!broken.has(queue)) this.#broken.delete(queue);
  }

  /** The queues of `order` a blocking fetch may watch: neither paused nor broken. */
  watchable(order: readonly string[]): readonly string[] {
    if (this.#paused.size === 0 && this.#broken.size === 0) return order;
    return order.filter((q) => !this.#paused.has(q) && !this.#broken.has(q));
  }
}
