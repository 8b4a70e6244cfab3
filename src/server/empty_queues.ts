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
 * beyond it, one found empty sits out a while as long as others have work
 * (docs/performance.md, "Queues").
 */
export const FEW_QUEUES = 16;

/**
 * How long a queue just found empty is left out of a busy capsule's fetches
 * (with more than {@link FEW_QUEUES} queues). Each time it is found empty
 * again the wait doubles, up to {@link EMPTY_FOR_MAX_MS}; a job taken from
 * it starts the count again. A job pushed to a queue sitting out waits at
 * most that much longer, and only while the capsule has other work: an idle
 * capsule asks every queue.
 */
export const EMPTY_FOR_MS = 50;

/**
 * The longest a queue found empty again and again sits out. Why it grows:
 * with a fixed 50 ms, a capsule of 1,000 queues whose work sits on one
 * named each empty queue 20 times a second, which cost Redis 11-28% more
 * per job than one queue (a key in a script is a Lua string, an argument of
 * LMPOP, and a position in the reply); at 400 ms a long-empty queue is asked
 * 2.5 times a second.
 */
export const EMPTY_FOR_MAX_MS = 400;

/** How many times in a row a queue can be found empty before its wait stops doubling. */
const MAX_STREAK = Math.log2(EMPTY_FOR_MAX_MS / EMPTY_FOR_MS);

/** What one call found about the queues it named. */
export interface QueuesFound {
  /** Positions, in the queues named, of those found empty. */
  readonly empty: readonly number[];
  /** Position of the queue jobs were taken from, or -1. */
  readonly taken: number;
  /** When the call was sent, in ms since the epoch. */
  readonly sentAt: number;
}

/**
 * The queues of one capsule that a fetch found empty, and when.
 *
 * @example
 * ```ts
 * const empties = new EmptyQueues(parseQueues(queueNames));
 * const named = empties.named(true);
 * const result = await pop(named);
 * empties.noted(named, { empty: result.empty, taken: result.queueIndex, sentAt });
 * ```
 */
export class EmptyQueues {
  readonly #list: QueueList;
  readonly #now: () => number;
  /** Each queue's position in the list. */
  readonly #position = new Map<string, number>();
  /** When each queue (by position) was last found empty, in ms; 0 when not found empty since it was last named. */
  readonly #at: Float64Array;
  /** How many times in a row each queue was found empty (its wait is EMPTY_FOR_MS doubled that many times less one). */
  readonly #streak: Uint8Array;

  constructor(list: QueueList, options: { now?: () => number } = {}) {
    this.#list = list;
    this.#now = options.now ?? Date.now;
    list.names.forEach((q, i) => this.#position.set(q, i));
    this.#at = new Float64Array(list.names.length);
    this.#streak = new Uint8Array(list.names.length);
  }

  /**
   * The queues a call names, in the order to try them: every queue, unless
   * `busy` (the call takes jobs) and the list has more than
   * {@link FEW_QUEUES}: then a queue found empty a moment ago (see
   * {@link EMPTY_FOR_MS}) is left out while others are named, unless
   * `needed` (given the queue's position in the list) says to name it anyway. Only the queues named are ordered (a
   * weighted order of the few, not of all 1,000). When every queue was
   * found empty a moment ago, all are named: that is the call that goes
   * idle or blocks.
   */
  named(busy: boolean, needed?: (position: number) => boolean): string[] {
    if (this.#at.length <= FEW_QUEUES || !busy) return this.#list.order();
    const now = this.#now();
    const names = this.#list.names;
    const live: string[] = [];
    for (let i = 0; i < names.length; i++) {
      if (now - this.#at[i] >= EMPTY_FOR_MS << Math.max(0, this.#streak[i] - 1) || needed?.(i)) live.push(names[i]);
    }
    return live.length === 0 ? this.#list.order() : this.#list.order(undefined, live);
  }

  /** Takes in what a call found about the queues it named (positions in `named`). */
  noted(named: readonly string[], found: QueuesFound): void {
    // Named and not found empty: asked again next time (in a weighted order the ones after the taken queue were not looked at).
    for (const queue of named) this.#at[this.#position.get(queue)!] = 0;
    for (const p of found.empty) {
      const i = this.#position.get(named[p])!;
      this.#at[i] = found.sentAt;
      if (this.#streak[i] <= MAX_STREAK) this.#streak[i]++;
    }
    if (found.taken >= 0) this.#streak[this.#position.get(named[found.taken])!] = 0;
  }
}
