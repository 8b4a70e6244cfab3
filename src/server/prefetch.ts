/**
 * How many jobs a capsule holds ready beyond the ones running: its prefetch.
 *
 * A fetch costs a round trip however many jobs it carries (on loopback that is
 * one write and one read system call, ~25 µs each on a small VM, plus the
 * script call in Redis; over HTTP it is a billed request). The buffer has to
 * last while the next fetch is on its way, or processors sit idle; anything
 * beyond that is hoarding, which lets one process sit on jobs while another
 * one idles. By Little's law the jobs needed to cover a round trip are
 * `concurrency × trip / job time`, so the size follows the two measured
 * averages: slow jobs keep the floor (`2 × concurrency`), jobs that finish
 * within a round trip grow it toward the ceiling.
 *
 * @module
 */

/**
 * The default most a capsule prefetches for fast jobs, when that is more than
 * 2 × concurrency. A round trip's cost is mostly its system calls, so the
 * worker's CPU per no-op job falls as batches grow: measured at
 * concurrency 10 (docs/performance.md, "Prefetch"), 7.0 µs per job with a
 * ceiling of 100, 3.7 µs with a fixed 1,000; 300 keeps most of that while
 * one process holds at most 300 quick jobs the others cannot take. Slow
 * jobs never grow it (Little's law below), so nothing slow is hoarded.
 */
export const PREFETCH_CEILING = 300;

/** Weight of the newest sample in the moving averages. */
const ALPHA = 0.1;

/** Options for {@link Prefetch}. */
export interface PrefetchOptions {
  concurrency: number;
  /** The size while nothing is measured, and the least it adapts to. */
  min: number;
  /** The most it adapts to; equal to `min` for a fixed prefetch. */
  max: number;
}

/**
 * An adaptive prefetch size between `min` and `max`.
 *
 * @example
 * ```ts
 * const prefetch = new Prefetch({ concurrency: 10, min: 20, max: 100 });
 * prefetch.trip(0.3); // a fetch took 0.3 ms
 * prefetch.job(0.02); // a job took 20 µs
 * prefetch.size; // 100: fast jobs, a batch per round trip is worth it
 * ```
 */
export class Prefetch {
  #options: PrefetchOptions;
  #size: number;
  #tripMs = 0;
  #jobMs = 0;

  constructor(options: PrefetchOptions) {
    this.#options = { ...options, max: Math.max(options.min, options.max) };
    this.#size = options.min;
  }

  /** Jobs to hold ready beyond the running ones now. */
  get size(): number {
    return this.#size;
  }

  /** Records how long a fetch that did not block took, in ms. */
  trip(ms: number): void {
    this.#tripMs = this.#tripMs ? this.#tripMs + ALPHA * (ms - this.#tripMs) : ms;
    this.#update();
  }

  /** Records how long a job took from hand-off to outcome, in ms. */
  job(ms: number): void {
    this.#jobMs = this.#jobMs ? this.#jobMs + ALPHA * (ms - this.#jobMs) : ms;
    this.#update();
  }

  #update(): void {
    const { min, max, concurrency } = this.#options;
    if (min === max || !this.#tripMs || !this.#jobMs) return;
    // Two round trips' worth: one batch runs while the next is on its way.
    const wanted = Math.ceil((2 * concurrency * this.#tripMs) / this.#jobMs);
    this.#size = Math.min(max, Math.max(min, wanted));
  }
}
