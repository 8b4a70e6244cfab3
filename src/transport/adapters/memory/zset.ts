/**
 * A sorted set: members ordered by score, then by member bytes, as Redis
 * orders them. A Map gives O(1) score lookups; a sorted array with binary
 * search gives ordered ranges (O(n) inserts, which memmove makes cheap at
 * the sizes a job queue's retry or schedule set reaches).
 *
 * @module
 */

/**
 * One member and its score.
 *
 * @example
 * ```ts
 * const e: ZEntry = { score: 1.5, member: "a" };
 * ```
 */
export interface ZEntry {
  /** The score. */
  score: number;
  /** The member. */
  member: string;
}

/**
 * Compares strings by their UTF-8 bytes, as Redis's memcmp does. JavaScript's
 * `<` compares UTF-16 units, which disagrees only when a surrogate (an astral
 * character such as an emoji) meets U+E000..U+FFFF; those units are remapped.
 *
 * @example
 * ```ts
 * compareBytes("\uFFFD", "😀") < 0; // true, as in UTF-8
 * ```
 */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) return remap(x) - remap(y);
  }
  return a.length - b.length;
}

function remap(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/**
 * A sorted set.
 *
 * @example
 * ```ts
 * const z = new ZSet();
 * z.add("job", 1700000000.5);
 * z.entries[0].member; // "job"
 * ```
 */
export class ZSet {
  /** Score by member. */
  readonly scores: Map<string, number> = new Map();
  #sorted: ZEntry[] = [];

  /** Number of members. */
  get size(): number {
    return this.scores.size;
  }

  /** Entries in order (do not mutate). */
  get entries(): readonly ZEntry[] {
    return this.#sorted;
  }

  /** Index of the first entry not before (score, member). */
  #lowerBound(score: number, member: string): number {
    let lo = 0, hi = this.#sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const e = this.#sorted[mid];
      if (e.score < score || (e.score === score && compareBytes(e.member, member) < 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Adds or rescores; true if the member is new. */
  add(member: string, score: number): boolean {
    const old = this.scores.get(member);
    if (old !== undefined) {
      if (old === score) return false;
      this.#sorted.splice(this.#lowerBound(old, member), 1);
    }
    this.scores.set(member, score);
    this.#sorted.splice(this.#lowerBound(score, member), 0, { score, member });
    return old === undefined;
  }

  /** Removes; true if it was there. */
  remove(member: string): boolean {
    const old = this.scores.get(member);
    if (old === undefined) return false;
    this.#sorted.splice(this.#lowerBound(old, member), 1);
    this.scores.delete(member);
    return true;
  }

  /** The 0-based rank of a member, or undefined. */
  rank(member: string): number | undefined {
    const score = this.scores.get(member);
    return score === undefined ? undefined : this.#lowerBound(score, member);
  }

  /**
   * How many entries score below `score` (or at most `score` when `orEqual`):
   * the index where a score range starts or ends, by binary search.
   */
  countBelow(score: number, orEqual: boolean): number {
    let lo = 0, hi = this.#sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const s = this.#sorted[mid].score;
      if (s < score || (orEqual && s === score)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Removes entries by rank range [start, stop]; returns how many. */
  removeRange(start: number, stop: number): number {
    if (start > stop) return 0;
    const removed = this.#sorted.splice(start, stop - start + 1);
    for (const e of removed) this.scores.delete(e.member);
    return removed.length;
  }
}
