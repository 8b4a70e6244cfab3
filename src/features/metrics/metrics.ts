/**
 * Sidekiq's `Metrics::Query` (`lib/sidekiq/metrics/query.rb`): per-class
 * execution metrics over a period, as edgekiq's tracker and Ruby Sidekiq 7
 * and 8 write them, with the deploy marks that fall inside it.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import {
  histogramWindow,
  iso8601,
  legacyHistogramWindow,
  legacyMinuteBucket,
  minuteBucket,
  tenMinuteBucket,
  utcDay,
} from "./buckets.ts";
import { HISTOGRAM_SIZE } from "./histogram.ts";
import { METRICS_READ } from "./read_script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { invalid } from "../../api/arguments.ts";
import { arr, num, pairs, str } from "../../transport/reply_readers.ts";

/** The periods Sidekiq's Web UI offers. Up to 8h reads minute buckets; longer ones 10-minute buckets. */
export type MetricsPeriod = "1h" | "2h" | "4h" | "8h" | "24h" | "48h" | "72h";

/** Which Sidekiq's keys to read: 8's (edgekiq's default) or 7's minute-only format. */
export type MetricsFormat = "sidekiq8" | "sidekiq7";

/**
 * Minute buckets (`minutes`) or 10-minute buckets (`hours` × 6) for each
 * period, as Sidekiq's Web UI `METRICS_PERIODS`.
 *
 * @example
 * ```ts
 * for (const period of Object.keys(METRICS_PERIODS)) console.log(period); // "1h", "2h", ... "72h"
 * ```
 */
export const METRICS_PERIODS: Readonly<Record<MetricsPeriod, { minutes?: number; hours?: number }>> = Object.freeze({
  "1h": { minutes: 60 },
  "2h": { minutes: 120 },
  "4h": { minutes: 240 },
  "8h": { minutes: 480 },
  "24h": { hours: 24 },
  "48h": { hours: 48 },
  "72h": { hours: 72 },
});

/** Options for {@link Metrics}. */
export interface MetricsOptions {
  /** The key format to read (default `sidekiq8`). Sidekiq 7 kept minute buckets only, so its periods stop at 8h. */
  format?: MetricsFormat;
}

/** Options for one query. */
export interface MetricsQueryOptions {
  /** The period ending now (default `1h`). */
  period?: MetricsPeriod;
  /** The end of the period (default: now). */
  now?: Date;
}

/** Runs, failures and milliseconds, totalled or per bucket. */
export interface MetricsCounts {
  /** Runs, failed or not (Sidekiq's `p`). */
  p: number;
  /** Failed runs (`f`). */
  f: number;
  /** Milliseconds spent in successful runs (`ms`). */
  ms: number;
  /**
   * Jobs dropped because they expired before they started (`x`, written by
   * edgekiq's `expiringJobs()`; Sidekiq's readers leave it aside). Not runs:
   * not in `p`.
   */
  x: number;
}

/** One class's metrics over a period. */
export interface JobMetrics {
  /** The job class (`wrapped` for ActiveJob). */
  name: string;
  /** Totals over the period. */
  totals: MetricsCounts;
  /** Successful runs: `p - f`. */
  success: number;
  /** Mean milliseconds of a successful run (0 when there was none), Sidekiq's `total_avg`. */
  avgMs: number;
  /** Per bucket, aligned with {@link MetricsResult.buckets} (oldest first). */
  series: { p: number[]; f: number[]; ms: number[]; x: number[] };
}

/** A deploy mark inside the period. */
export interface DeployMark {
  /** When it was marked (floored to the minute). */
  time: Date;
  /** Its label. */
  label: string;
  /** The bucket it falls in (ISO time of the bucket's start). */
  bucket: string;
}

/** What a query returns. */
export interface MetricsResult {
  /** The period asked for. */
  period: MetricsPeriod;
  /** `minutely` (periods up to 8h) or `hourly` (10-minute buckets). */
  granularity: "minutely" | "hourly";
  /** Start of the period. */
  startsAt: Date;
  /** End of the period. */
  endsAt: Date;
  /** Each bucket's start as `2025-02-14T08:05:00Z`, oldest first. */
  buckets: string[];
  /** Deploy marks inside the period, oldest first. */
  marks: DeployMark[];
}

/** {@link Metrics.topJobs}: every class that ran, most total time first. */
export interface TopJobsResult extends MetricsResult {
  /** Classes by total successful milliseconds, descending (as Sidekiq's Web UI orders them). */
  jobs: JobMetrics[];
}

/** {@link Metrics.forJob}: one class, with its execution-time histogram. */
export interface JobMetricsResult extends MetricsResult {
  /** The class's metrics. */
  job: JobMetrics;
  /**
   * For minute periods: each minute's 26 histogram counters (aligned with
   * `buckets`; index 0 is the fastest, see `HISTOGRAM_LABELS`). Null for
   * 10-minute periods, which Sidekiq keeps no histogram for.
   */
  histogram: number[][] | null;
  /** The histogram summed over the period, or null as above. */
  histogramTotals: number[] | null;
}

const PERIODS = Object.keys(METRICS_PERIODS).join(", ");
const MAX_NAME = 1000;
const ACTION = "query metrics";

interface Plan {
  period: MetricsPeriod;
  granularity: "minutely" | "hourly";
  /** Bucket times, newest first, as Sidekiq walks them. */
  times: Date[];
  hashKeys: string[];
  startsAt: Date;
  endsAt: Date;
}

/**
 * Reads execution metrics: the busiest classes over a period, or one class
 * with its histogram. One script call per query (one billed command on
 * Upstash), whatever the period.
 *
 * @example
 * ```ts
 * const metrics = new Metrics(client);
 * const { jobs } = await metrics.topJobs({ period: "24h", filter: "mail" });
 * for (const job of jobs) console.log(job.name, job.totals.p, job.totals.f, job.avgMs);
 * const { job, histogramTotals } = await metrics.forJob("HardJob", { period: "1h" });
 * ```
 */
export class Metrics {
  #client: Client;
  #format: MetricsFormat;

  /**
   * Reads metrics through `client`'s transport and key prefix.
   *
   * @param client The client whose transport and key prefix to use.
   * @param options The key format to read.
   */
  constructor(client: Client, options: MetricsOptions = {}) {
    const format = options.format ?? "sidekiq8";
    if (format !== "sidekiq8" && format !== "sidekiq7") {
      throw invalid("create Metrics", "format", '"sidekiq8" or "sidekiq7"', format);
    }
    this.#client = client;
    this.#format = format;
  }

  /**
   * Every class that ran in the period, most total time first, each with its
   * totals and per-bucket series (Sidekiq's `top_jobs`). `filter` keeps the
   * classes whose name contains it, ignoring case (the Web UI's `substr`).
   *
   * @example
   * ```ts
   * const { jobs, marks } = await new Metrics(client).topJobs({ period: "8h" });
   * ```
   */
  async topJobs(options: MetricsQueryOptions & { filter?: string } = {}): Promise<TopJobsResult> {
    const filter = options.filter;
    if (filter !== undefined && (typeof filter !== "string" || filter.length > MAX_NAME)) {
      throw invalid(ACTION, "filter", `a string of at most ${MAX_NAME} characters`, filter);
    }
    const plan = this.#plan(options);
    const [hashes, , marks] = await this.#read(plan, [], []);
    const needle = filter?.toLowerCase();
    const jobs = new Map<string, JobMetrics>();
    hashes.forEach((reply, i) => {
      for (const [field, value] of pairs(reply)) {
        const bar = field.lastIndexOf("|");
        const name = field.slice(0, bar);
        const metric = field.slice(bar + 1);
        if (bar < 0 || !(metric === "p" || metric === "f" || metric === "ms" || metric === "x")) continue;
        if (needle && !name.toLowerCase().includes(needle)) continue;
        let job = jobs.get(name);
        if (!job) jobs.set(name, job = emptyJob(name, plan.times.length));
        add(job, metric, plan.times.length - 1 - i, num(value));
      }
    });
    const list = [...jobs.values()].map(finish);
    list.sort((a, b) => b.totals.ms - a.totals.ms || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { ...this.#frame(plan, marks), jobs: list };
  }

  /**
   * One class over the period (Sidekiq's `for_job`): totals, series and, for
   * periods up to 8h, each minute's execution-time histogram.
   *
   * @example
   * ```ts
   * const { job, histogram } = await new Metrics(client).forJob("HardJob", { period: "2h" });
   * ```
   */
  async forJob(name: string, options: MetricsQueryOptions = {}): Promise<JobMetricsResult> {
    if (typeof name !== "string" || name === "" || name.length > MAX_NAME) {
      throw invalid(ACTION, "name", `a job class name of 1 to ${MAX_NAME} characters`, name);
    }
    const plan = this.#plan(options);
    const k = this.#client.keys;
    const gramKeys = plan.granularity === "hourly"
      ? []
      : plan.times.map((t) =>
        this.#format === "sidekiq7"
          ? k.legacyHistogram(name, legacyHistogramWindow(t))
          : k.histogram(name, histogramWindow(t))
      );
    const fields = [`${name}|p`, `${name}|f`, `${name}|ms`, `${name}|x`];
    const [hashes, grams, marks] = await this.#read(plan, fields, gramKeys);
    const n = plan.times.length;
    const job = emptyJob(name, n);
    hashes.forEach((reply, i) => {
      const [p, f, ms, x] = arr(reply);
      add(job, "p", n - 1 - i, num(p));
      add(job, "f", n - 1 - i, num(f));
      add(job, "ms", n - 1 - i, num(ms));
      add(job, "x", n - 1 - i, num(x));
    });
    let histogram: number[][] | null = null;
    let histogramTotals: number[] | null = null;
    if (plan.granularity === "minutely") {
      histogram = grams.map((reply) => Array.from({ length: HISTOGRAM_SIZE }, (_, b) => num(arr(reply)[b]))).reverse();
      histogramTotals = new Array(HISTOGRAM_SIZE).fill(0);
      for (const minute of histogram) minute.forEach((c, b) => histogramTotals![b] += c);
    }
    return { ...this.#frame(plan, marks), job: finish(job), histogram, histogramTotals };
  }

  #plan(options: MetricsQueryOptions): Plan {
    const period = options.period ?? "1h";
    if (!Object.hasOwn(METRICS_PERIODS, period)) throw invalid(ACTION, "period", `one of ${PERIODS}`, period);
    const now = options.now ?? new Date();
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw invalid(ACTION, "now", "a valid Date", now);
    const { minutes, hours } = METRICS_PERIODS[period];
    if (hours && this.#format === "sidekiq7") {
      throw invalid(
        ACTION,
        "period",
        "at most 8h when reading Sidekiq 7's format (it keeps minute buckets only)",
        period,
      );
    }
    const stride = hours ? 600_000 : 60_000;
    const count = hours ? hours * 6 : minutes!;
    const k = this.#client.keys;
    const bucket = hours ? tenMinuteBucket : this.#format === "sidekiq7" ? legacyMinuteBucket : minuteBucket;
    const times: Date[] = [];
    const hashKeys: string[] = [];
    // Sidekiq walks back from `now` itself (not its floor), one stride at a time.
    for (let i = 0; i < count; i++) {
      const t = new Date(now.getTime() - i * stride);
      times.push(t);
      hashKeys.push(k.metrics(bucket(t)));
    }
    const startsAt = new Date(now.getTime() - count * stride);
    return { period, granularity: hours ? "hourly" : "minutely", times, hashKeys, startsAt, endsAt: now };
  }

  async #read(plan: Plan, fields: string[], gramKeys: string[]): Promise<[RedisReply[], RedisReply[], DeployMark[]]> {
    const k = this.#client.keys;
    const markKeys: string[] = [];
    const lastDay = utcDay(plan.endsAt);
    for (let t = plan.startsAt.getTime();; t += 86_400_000) {
      const day = utcDay(new Date(Math.min(t, plan.endsAt.getTime())));
      markKeys.push(k.deployMarks(day));
      if (day === lastDay) break;
    }
    const keys = [...plan.hashKeys, ...gramKeys, ...markKeys];
    const replies = await this.#client.transport.script(METRICS_READ, keys, [
      plan.hashKeys.length,
      gramKeys.length,
      fields.length,
      ...fields,
    ]);
    const hashes = replies.slice(0, plan.hashKeys.length);
    const grams = replies.slice(plan.hashKeys.length, plan.hashKeys.length + gramKeys.length);
    const marks: DeployMark[] = [];
    const from = plan.startsAt.getTime(), to = plan.endsAt.getTime();
    for (const reply of replies.slice(plan.hashKeys.length + gramKeys.length)) {
      for (const [stamp, label] of pairs(reply)) {
        const time = Date.parse(stamp);
        if (Number.isNaN(time) || time < from || time > to) continue;
        marks.push({ time: new Date(time), label: str(label) ?? "", bucket: bucketStart(time, plan.granularity) });
      }
    }
    marks.sort((a, b) => a.time.getTime() - b.time.getTime());
    return [hashes, grams, marks];
  }

  #frame(plan: Plan, marks: DeployMark[]): MetricsResult {
    const buckets = plan.times.map((t) => bucketStart(t.getTime(), plan.granularity)).reverse();
    const { period, granularity, startsAt, endsAt } = plan;
    return { period, granularity, startsAt, endsAt, buckets, marks };
  }
}

/** The start of the bucket `ms` falls in, as Sidekiq's `bkt_time_s`: `2025-02-14T08:40:00Z`. */
function bucketStart(ms: number, granularity: Plan["granularity"]): string {
  const size = granularity === "hourly" ? 600_000 : 60_000;
  return iso8601(ms - (ms % size));
}

function emptyJob(name: string, buckets: number): JobMetrics {
  const zeros = () => new Array<number>(buckets).fill(0);
  return {
    name,
    totals: { p: 0, f: 0, ms: 0, x: 0 },
    success: 0,
    avgMs: 0,
    series: { p: zeros(), f: zeros(), ms: zeros(), x: zeros() },
  };
}

function add(job: JobMetrics, metric: keyof MetricsCounts, bucket: number, value: number): void {
  job.totals[metric] += value;
  job.series[metric][bucket] += value;
}

function finish(job: JobMetrics): JobMetrics {
  job.success = job.totals.p - job.totals.f;
  job.avgMs = job.success > 0 ? job.totals.ms / job.success : 0;
  return job;
}
