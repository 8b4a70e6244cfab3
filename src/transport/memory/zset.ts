/**
 * A sorted set: members ordered by score, then by member (bytewise), as
 * Redis orders them. A map gives O(1) score lookups; a sorted array with
 * binary search gives ordered ranges.
 *
 * @module
 */

/** One entry. */
export interface ZEntry {
  score: number;
  member: string;
}

function less(a: ZEntry, score: number, member: string): boolean {
  return a.score < score || (a.score === score && a.member < member);
}

/** A sorted set. */
export class ZSet {
  readonly scores = new Map<string, number>();
  #sorted: ZEntry[] = [];

  /** Number of members. */
  get size(): number {
    return this.scores.size;
  }

  /** Entries in order. */
  get entries(): readonly ZEntry[] {
    return this.#sorted;
  }

  /** Index of the first entry not less than (score, member). */
  #lowerBound(score: number, member: string): number {
    let lo = 0, hi = this.#sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (less(this.#sorted[mid], score, member)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Adds or updates; returns true if the member is new. */
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

  /** Removes; returns true if it was there. */
  remove(member: string): boolean {
    const old = this.scores.get(member);
    if (old === undefined) return false;
    this.#sorted.splice(this.#lowerBound(old, member), 1);
    this.scores.delete(member);
    return true;
  }

  /** The rank of a member, or undefined. */
  rank(member: string): number | undefined {
    const score = this.scores.get(member);
    return score === undefined ? undefined : this.#lowerBound(score, member);
  }

  /** Index of the first entry with score >= min (or > min when exclusive). */
  firstAtLeast(min: number, exclusive: boolean): number {
    let lo = 0, hi = this.#sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const s = this.#sorted[mid].score;
      if (s < min || (exclusive && s === min)) lo = mid + 1;
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
