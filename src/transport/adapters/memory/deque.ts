/**
 * A double-ended queue with O(1) push and pop at both ends: Redis lists hold
 * job queues of 100k entries that are pushed on the left and popped on the
 * right, which a plain array's `shift`/`unshift` would make quadratic.
 *
 * @module
 */

/**
 * A growable ring buffer of list items.
 *
 * @example
 * ```ts
 * const d = new Deque<string>();
 * d.pushLeft("a");
 * d.popRight(); // "a"
 * ```
 */
export class Deque<T> {
  #items: (T | undefined)[] = new Array(16);
  #head = 0;
  #size = 0;

  /** Number of items. */
  get length(): number {
    return this.#size;
  }

  /** Adds to the left (index 0). */
  pushLeft(item: T): void {
    this.#grow();
    this.#head = (this.#head - 1 + this.#items.length) % this.#items.length;
    this.#items[this.#head] = item;
    this.#size++;
  }

  /** Adds to the right (index length-1). */
  pushRight(item: T): void {
    this.#grow();
    this.#items[(this.#head + this.#size) % this.#items.length] = item;
    this.#size++;
  }

  /** Removes from the left. */
  popLeft(): T | undefined {
    if (this.#size === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#items.length;
    this.#size--;
    return item;
  }

  /** Removes from the right. */
  popRight(): T | undefined {
    if (this.#size === 0) return undefined;
    const i = (this.#head + this.#size - 1) % this.#items.length;
    const item = this.#items[i];
    this.#items[i] = undefined;
    this.#size--;
    return item;
  }

  /** The item at `index` (0 = left). */
  at(index: number): T | undefined {
    if (index < 0 || index >= this.#size) return undefined;
    return this.#items[(this.#head + index) % this.#items.length];
  }

  /** Replaces the item at `index`. */
  set(index: number, item: T): void {
    this.#items[(this.#head + index) % this.#items.length] = item;
  }

  /** Items from `start` to `stop` inclusive, left to right. */
  slice(start: number, stop: number): T[] {
    const out: T[] = [];
    for (let i = Math.max(0, start); i <= Math.min(stop, this.#size - 1); i++) out.push(this.at(i) as T);
    return out;
  }

  /** Replaces the whole content. */
  reset(items: T[]): void {
    this.#items = items.length >= 16 ? items.slice() : [...items, ...new Array(16 - items.length)];
    if (this.#items.length < 16) this.#items.length = 16;
    this.#head = 0;
    this.#size = items.length;
  }

  #grow(): void {
    if (this.#size < this.#items.length) return;
    const next = new Array<T | undefined>(this.#items.length * 2);
    for (let i = 0; i < this.#size; i++) next[i] = this.at(i);
    this.#items = next;
    this.#head = 0;
  }
}
