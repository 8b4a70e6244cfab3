/**
 * Maps and sets whose entries come and go with every job (the units
 * running, the batches awaiting acknowledgement), built anew now and then.
 *
 * Why: V8 grows or compacts a Map's (or Set's) table by allocating a new
 * one, and allocates it in the old generation when the table it replaces is
 * there. A long-lived collection's table reaches the old generation after
 * any quiet spell, and from then on every table it outgrows is old-space
 * garbage until the next full GC, still pointing at the young entries it
 * held: those (the unit, its payload, its control) survive every
 * young-generation GC and are promoted. In a worker taking 14,000 jobs/s
 * that was about 1 KB promoted per job and scavenges of 1.5-3 ms instead of
 * 0.6-1.5 ms, which is where its p99 latency came from (4-5 ms; 2 ms built
 * anew). A fresh collection's table is young, and stays young while it
 * churns.
 *
 * @module
 */

/** Deletions after which the next insertion builds the collection anew (copying what it holds: a few entries). */
const RENEW_AFTER = 256;

/**
 * A `Map` for entries that churn (see the module doc). Built anew on an
 * insertion, never while a caller may be iterating over a deletion.
 *
 * @example
 * ```ts
 * const running = new ChurningMap<number, string>();
 * running.set(1, "job");
 * running.delete(1);
 * ```
 */
export class ChurningMap<K, V> implements ReadonlyMap<K, V> {
  #map = new Map<K, V>();
  #deletions = 0;

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  set(key: K, value: V): this {
    if (this.#deletions >= RENEW_AFTER) {
      this.#deletions = 0;
      this.#map = new Map(this.#map);
    }
    this.#map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    const deleted = this.#map.delete(key);
    if (deleted) this.#deletions++;
    return deleted;
  }

  clear(): void {
    this.#deletions = 0;
    this.#map = new Map();
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    this.#map.forEach((value, key) => callback.call(thisArg, value, key, this));
  }

  keys(): MapIterator<K> {
    return this.#map.keys();
  }

  values(): MapIterator<V> {
    return this.#map.values();
  }

  entries(): MapIterator<[K, V]> {
    return this.#map.entries();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map[Symbol.iterator]();
  }
}

/**
 * A `Set` for members that churn (see the module doc): a {@link ChurningMap}
 * of members.
 *
 * @example
 * ```ts
 * const dirty = new ChurningSet<object>();
 * dirty.add(batch);
 * dirty.delete(batch);
 * ```
 */
export class ChurningSet<T> implements Iterable<T> {
  #members = new ChurningMap<T, true>();

  get size(): number {
    return this.#members.size;
  }

  has(member: T): boolean {
    return this.#members.has(member);
  }

  add(member: T): this {
    this.#members.set(member, true);
    return this;
  }

  delete(member: T): boolean {
    return this.#members.delete(member);
  }

  clear(): void {
    this.#members.clear();
  }

  [Symbol.iterator](): MapIterator<T> {
    return this.#members.keys();
  }
}
