/**
 * Sidekiq's execution-time histogram (`lib/sidekiq/metrics/shared.rb`): 26
 * buckets of job durations, stored per class per minute as unsigned 16-bit
 * counters in one string, written with `BITFIELD ... OVERFLOW SAT INCRBY u16`
 * and read with `BITFIELD_RO ... GET u16 #0 ... GET u16 #25`.
 *
 * @module
 */

/**
 * Each bucket's upper bound in milliseconds (exclusive): a 280 ms job counts
 * in bucket 7 (225-335 ms). The last bucket takes everything slower.
 *
 * @example
 * ```ts
 * HISTOGRAM_BOUNDS[7]; // 335
 * ```
 */
export const HISTOGRAM_BOUNDS: readonly number[] = Object.freeze([
  20,
  30,
  45,
  65,
  100,
  150,
  225,
  335,
  500,
  750,
  1100,
  1700,
  2500,
  3800,
  5750,
  8500,
  13000,
  20000,
  30000,
  45000,
  65000,
  100000,
  150000,
  225000,
  335000,
  Infinity,
]);

/**
 * Sidekiq's label for each bucket, as its Web UI shows them.
 *
 * @example
 * ```ts
 * const { histogramTotals } = await new Metrics(client).forJob("HardJob");
 * histogramTotals?.forEach((n, i) => console.log(HISTOGRAM_LABELS[i], n)); // "20ms" 12, "30ms" 3, ...
 * ```
 */
export const HISTOGRAM_LABELS: readonly string[] = Object.freeze([
  "20ms",
  "30ms",
  "45ms",
  "65ms",
  "100ms",
  "150ms",
  "225ms",
  "335ms",
  "500ms",
  "750ms",
  "1.1s",
  "1.7s",
  "2.5s",
  "3.8s",
  "5.75s",
  "8.5s",
  "13s",
  "20s",
  "30s",
  "45s",
  "65s",
  "100s",
  "150s",
  "225s",
  "335s",
  "Slow",
]);

/**
 * The number of buckets (26).
 *
 * @example
 * ```ts
 * const counts = new Uint32Array(HISTOGRAM_SIZE);
 * ```
 */
export const HISTOGRAM_SIZE = 26;

/**
 * The bucket a duration falls in: the first whose bound exceeds it, as
 * Sidekiq's `Histogram#record_time`. Most jobs are fast, so the scan from the
 * bottom usually stops at once.
 *
 * @example
 * ```ts
 * histogramIndex(10); // 0
 * histogramIndex(280); // 7
 * histogramIndex(3e8); // 25 ("Slow")
 * ```
 */
export function histogramIndex(ms: number): number {
  let i = 0;
  while (i < HISTOGRAM_SIZE - 1 && !(ms < HISTOGRAM_BOUNDS[i])) i++;
  return i;
}

/**
 * The BITFIELD_RO arguments after the key that read all 26 counters.
 *
 * @example
 * ```ts
 * await transport.call("BITFIELD_RO", key, ...HISTOGRAM_READ);
 * ```
 */
export const HISTOGRAM_READ: readonly string[] = Object.freeze(
  Array.from({ length: HISTOGRAM_SIZE }, (_, i) => ["GET", "u16", `#${i}`]).flat(),
);
