/**
 * Which queues a busy fetch names. Naming a queue costs Redis a key each
 * call (parsed, looked up, and in a script made a Lua string) and the worker
 * its place in the order, so a capsule of 1,000 queues whose work sits on a
 * few would pay for 1,000 on every fetch. Both fetch strategies ask this.
 *
 * @module
 */
import type { QueueList } from "./queues.ts";

/**
 * Up to this many queues, every fetch names all of a capsule's queues;
 * beyond it, one found empty sits out for {@link EMPTY_FOR_MS} while others
 * have work (docs/performance.md, "Queues").
 */
export const FEW_QUEUES = 16;

/**
 * How long a queue found empty is left out of a busy capsule's fetches
 * (with more than {@link FEW_QUEUES} queues): a job pushed to it meanwhile
 * waits at most this much longer, and only while the capsule has other
 * work; an idle capsule asks every queue.
 */
export const EMPTY_FOR_MS = 50;

/**
 * The queues of one capsule that a fetch found empty, and when.
 *
 * @example
 * ```ts
 * const empties = new EmptyQueues(parseQueues(queueNames));
 * const named = empties.named(true);
 * const result = await pop(named);
 * empties.noted(named, result.empty, sentAt); // result.empty: positions in `named`
 * ```
 */
export class EmptyQueues {
  readonly #list: QueueList;
  /** Each queue's position in the list. */
  readonly #position = new Map<string, number>();
  /** When each queue (by position) was last found empty, in ms; 0 when not found empty since it was last named. */
  readonly #at: Float64Array;

  constructor(list: QueueList) {
    this.#list = list;
    list.names.forEach((q, i) => this.#position.set(q, i));
    this.#at = new Float64Array(list.names.length);
  }

  /**
   * The queues a call names, in the order to try them: every queue, unless
   * `busy` (the call takes jobs) and the list has more than
   * {@link FEW_QUEUES}: then a queue found empty within the last
   * {@link EMPTY_FOR_MS} is left out while others are named, unless
   * `needed` (given the queue's position in the list) says to name it anyway. Only the queues named are ordered (a
   * weighted order of the few, not of all 1,000). When every queue was
   * found empty a moment ago, all are named: that is the call that goes
   * idle or blocks.
   */
  named(busy: boolean, needed?: (position: number) => boolean): string[] {
    if (this.#at.length <= FEW_QUEUES || !busy) return this.#list.order();
    const now = Date.now();
    const names = this.#list.names;
    const live: string[] = [];
    for (let i = 0; i < names.length; i++) {
      if (now - this.#at[i] >= EMPTY_FOR_MS || needed?.(i)) live.push(names[i]);
    }
    return live.length === 0 ? this.#list.order() : this.#list.order(undefined, live);
  }

  /** Takes in what a call sent at `sentAt` found: the queues it named, and the positions in them it found empty. */
  noted(named: readonly string[], empty: readonly number[], sentAt: number): void {
    for (const queue of named) this.#at[this.#position.get(queue)!] = 0;
    for (const p of empty) this.#at[this.#position.get(named[p])!] = sentAt;
  }
}
