/**
 * Per-class execution metrics, counted in memory as jobs finish and flushed
 * in Sidekiq's format (`lib/sidekiq/metrics/tracking.rb`) so Sidekiq 7 and
 * 8's Web UI Metrics pages, and edgekiq's `Metrics` API, read them.
 *
 * @module
 */
import type { Keys } from "../../keys.ts";
import type { RedisArg, Transport } from "../../transport/transport.ts";
import { ConfigError } from "../../errors.ts";
import {
  histogramWindow,
  legacyHistogramWindow,
  legacyMinuteBucket,
  MID_TERM,
  minuteBucket,
  SHORT_TERM,
  tenMinuteBucket,
} from "./buckets.ts";
import { METRICS_FLUSH } from "./flush_script.ts";
import { HISTOGRAM_SIZE, histogramIndex } from "./histogram.ts";

/** Options for {@link MetricsTracker}. */
export interface MetricsTrackerOptions {
  /** Also write Sidekiq 7's keys (`j|20250214|8:5`, `HardJob-14-08:5`), for an estate still running Sidekiq 7. */
  sidekiq7?: boolean;
  /** Write the per-class execution-time histograms (default true; they need BITFIELD). */
  histogram?: boolean;
  /**
   * Unsent batches kept while Redis is unreachable (default 60: ten minutes
   * of 10-second heartbeats). Past it the oldest is dropped and counted in
   * {@link MetricsTracker.droppedBatches}: metrics are advisory, memory is not.
   */
  maxPending?: number;
}

/** What {@link MetricsTracker.flush} did. */
export interface MetricsFlushResult {
  /** Batches sent (this flush's and any earlier unsent ones), in one script call. */
  sent: number;
  /** Batches Redis applied; fewer than `sent` when some had already been applied before a lost reply. */
  applied: number;
}

/** One class's counts since the last flush. */
class ClassCounts {
  p = 0;
  f = 0;
  /** Jobs dropped as expired before they ran (`x`): not runs, so not in `p`. */
  x = 0;
  ok = 0;
  ms = 0;
  readonly hist: Uint32Array = new Uint32Array(HISTOGRAM_SIZE);
}

/** One flush's writes, kept whole until Redis confirms them. */
interface Batch {
  seq: number;
  /** Metric hashes and their TTLs; every field goes to each. */
  hashes: [key: string, ttl: number][];
  /** `<Class>|p`, count, `<Class>|f`, count, `<Class>|x`, count, `<Class>|ms`, total, ... */
  fields: RedisArg[];
  /** Histogram keys with their TTL and `bucket, count` pairs. */
  grams: { key: string; ttl: number; counts: number[] }[];
}

/**
 * Counts runs (`p`), failures (`f`) and successful milliseconds (`ms`) per
 * job class, with Sidekiq's 26-bucket duration histogram, and writes them
 * to Redis in one script call per flush.
 *
 * `record()` runs once per job and allocates nothing once a class has been
 * seen in the current interval. `flush()` writes Sidekiq 8's minute and
 * 10-minute hashes (and Sidekiq 7's minute hash with `sidekiq7: true`) and
 * the histograms, for the flush's own UTC minute, as Sidekiq does on each
 * heartbeat.
 *
 * A flush that fails keeps its batch and sends it again with the next one.
 * Each batch carries a sequence number and the script records the highest
 * it applied for this tracker, before it writes anything, so a batch whose
 * first send did land (only the reply was lost) or failed half-way is
 * skipped on the resend instead of counted twice: at most once.
 *
 * @example
 * ```ts
 * const tracker = new MetricsTracker();
 * tracker.record("HardJob", 12.5, false);
 * tracker.record("HardJob", 3, true);
 * await tracker.flush(transport, keys()); // HINCRBY j|250214|8:05 HardJob|p 2 ... in one EVALSHA
 * ```
 */
export class MetricsTracker {
  /** This tracker's id: names the key that remembers its last applied batch. */
  readonly id: string;
  #counts = new Map<string, ClassCounts>();
  #pending: Batch[] = [];
  #seq = 0;
  #dropped = 0;
  #sidekiq7: boolean;
  #histogram: boolean;
  #maxPending: number;
  #flushing: Promise<unknown> = Promise.resolve();

  constructor(options: MetricsTrackerOptions = {}) {
    const maxPending = options.maxPending ?? 60;
    if (!Number.isInteger(maxPending) || maxPending < 1) {
      throw new ConfigError(
        `Cannot create metrics tracker as 'maxPending' must be a whole number >= 1: current value is ${maxPending}`,
      );
    }
    this.#maxPending = maxPending;
    this.#sidekiq7 = options.sidekiq7 === true;
    this.#histogram = options.histogram !== false;
    const bytes = crypto.getRandomValues(new Uint8Array(8));
    this.id = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /**
   * Counts one finished run of `className`: always a run; a failure if
   * `failed`, else `ms` towards its time and histogram (Sidekiq leaves failed
   * runs out of the time, whose point is spotting slow successes).
   *
   * @example
   * ```ts
   * tracker.record(displayClass(payload), performance.now() - started, false);
   * ```
   */
  record(className: string, ms: number, failed: boolean): void {
    let c = this.#counts.get(className);
    if (c === undefined) {
      c = new ClassCounts();
      this.#counts.set(className, c);
    }
    c.p++;
    if (failed) {
      c.f++;
      return;
    }
    c.ok++;
    // NaN and negative durations (a clock step) count as 0 ms.
    if (ms > 0) c.ms += ms;
    c.hist[histogramIndex(ms > 0 ? ms : 0)]++;
  }

  /**
   * Counts one job of `className` dropped because it expired before it
   * started (`expiringJobs()`): edgekiq's `x` field beside Sidekiq's, which
   * Sidekiq's readers leave aside. It never ran, so it is not a run (`p`).
   *
   * @example
   * ```ts
   * tracker.expired("Digest");
   * ```
   */
  expired(className: string): void {
    let c = this.#counts.get(className);
    if (c === undefined) {
      c = new ClassCounts();
      this.#counts.set(className, c);
    }
    c.x++;
  }

  /** Batches not yet confirmed by Redis (sent again with the next flush). */
  get pendingBatches(): number {
    return this.#pending.length;
  }

  /** Batches given up on because Redis stayed unreachable past `maxPending` flushes. */
  get droppedBatches(): number {
    return this.#dropped;
  }

  /**
   * Writes everything counted since the last flush, plus any earlier batch
   * still unconfirmed, in one script call (one round trip, one billed command
   * on Upstash), for the UTC minute of `now`. Does nothing when there is
   * nothing to write. Flushes run one at a time; a second call waits for the
   * first. Rejects if the write fails, keeping the batches for next time.
   *
   * @example
   * ```ts
   * await tracker.flush(transport, keys(), { now: new Date("2025-02-14T08:05:00Z") });
   * ```
   */
  flush(transport: Transport, keys: Keys, options: { now?: Date } = {}): Promise<MetricsFlushResult> {
    const run = this.#flushing.then(() => this.#flushNow(transport, keys, options.now ?? new Date()));
    this.#flushing = run.catch(() => {});
    return run;
  }

  async #flushNow(transport: Transport, keys: Keys, now: Date): Promise<MetricsFlushResult> {
    if (this.#counts.size > 0) {
      const counts = this.#counts;
      this.#counts = new Map();
      this.#pending.push(this.#batch(counts, keys, now));
      const excess = this.#pending.length - this.#maxPending;
      if (excess > 0) {
        this.#pending.splice(0, excess);
        this.#dropped += excess;
      }
    }
    if (this.#pending.length === 0) return { sent: 0, applied: 0 };
    const batches = this.#pending;
    const [scriptKeys, argv] = encode(batches, keys.metricsFlushed(this.id));
    const applied = await transport.script(METRICS_FLUSH, scriptKeys, argv);
    // Flushes are serialised, so nothing was added to the pending list meanwhile.
    this.#pending = [];
    return { sent: batches.length, applied };
  }

  #batch(counts: Map<string, ClassCounts>, keys: Keys, now: Date): Batch {
    const hashes: Batch["hashes"] = [
      [keys.metrics(tenMinuteBucket(now)), MID_TERM],
      [keys.metrics(minuteBucket(now)), SHORT_TERM],
    ];
    if (this.#sidekiq7) hashes.push([keys.metrics(legacyMinuteBucket(now)), SHORT_TERM]);
    const fields: RedisArg[] = [];
    const grams: Batch["grams"] = [];
    const window = histogramWindow(now);
    const legacyWindow = legacyHistogramWindow(now);
    for (const [name, c] of counts) {
      if (c.p > 0) fields.push(`${name}|p`, c.p);
      if (c.f > 0) fields.push(`${name}|f`, c.f);
      if (c.x > 0) fields.push(`${name}|x`, c.x);
      if (c.ok === 0) continue;
      // HINCRBY takes integers; Sidekiq's own clock is whole milliseconds.
      fields.push(`${name}|ms`, Math.round(c.ms));
      if (!this.#histogram) continue;
      const pairs: number[] = [];
      c.hist.forEach((n, bucket) => n > 0 && pairs.push(bucket, n));
      grams.push({ key: keys.histogram(name, window), ttl: SHORT_TERM, counts: pairs });
      if (this.#sidekiq7) grams.push({ key: keys.legacyHistogram(name, legacyWindow), ttl: SHORT_TERM, counts: pairs });
    }
    return { seq: ++this.#seq, hashes, fields, grams };
  }
}

/** KEYS and ARGV for {@link METRICS_FLUSH}: every key once, batches in order. */
function encode(batches: readonly Batch[], trackerKey: string): [string[], RedisArg[]] {
  const keys = [trackerKey];
  const index = new Map<string, number>();
  const at = (key: string): number => {
    let n = index.get(key);
    if (n === undefined) {
      n = keys.push(key);
      index.set(key, n);
    }
    return n;
  };
  const argv: RedisArg[] = [SHORT_TERM, batches[batches.length - 1].seq];
  for (const b of batches) {
    argv.push(b.seq, b.hashes.length);
    for (const [key, ttl] of b.hashes) argv.push(at(key), ttl);
    argv.push(b.fields.length / 2);
    for (const f of b.fields) argv.push(f);
    argv.push(b.grams.length);
    for (const g of b.grams) {
      argv.push(at(g.key), g.ttl, g.counts.length / 2);
      for (const n of g.counts) argv.push(n);
    }
  }
  return [keys, argv];
}
