/**
 * The execution metrics on the Prometheus endpoint: per job class, the
 * runs, failures and run-time histogram of the last few minutes, read from
 * the Sidekiq-format keys every edgekiq worker and Ruby Sidekiq 7/8 process
 * writes. They are gauges over a sliding window, not counters: the keys
 * hold per-minute counts that expire, so no process-independent running
 * total exists to export, and a Prometheus counter must never go down.
 * `histogram_quantile()` reads the `le` series directly (no `rate()`).
 *
 * @module
 */
import { ConfigError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import type { MetricFamily } from "../../web/metrics/exposition.ts";
import type { MetricsScrape, MetricsSource } from "../../web/metrics/metrics_source.ts";
import { arr, num, pairs } from "../../transport/reply_readers.ts";
import { histogramWindow, legacyHistogramWindow, legacyMinuteBucket, minuteBucket } from "./buckets.ts";
import { HISTOGRAM_BOUNDS, HISTOGRAM_SIZE } from "./histogram.ts";
import type { MetricsFormat } from "./metrics.ts";
import { METRICS_READ } from "./read_script.ts";

/** Options for {@link jobMetricsSeries}. */
export interface JobMetricsSeriesOptions {
  /** The keys to read (default `sidekiq8`). */
  format?: MetricsFormat;
  /** Minutes the window covers, ending with the current one (default 5, at most 60). */
  windowMinutes?: number;
  /** Classes exported, busiest first (default 200): label cardinality stays bounded. */
  maxClasses?: number;
}

function wholeNumber(name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new ConfigError(
      `Cannot export job metrics as '${name}' must be a whole number from 1 to ${max}: current value is ${
        describeValue(value)
      }`,
    );
  }
  return value;
}

interface ClassWindow {
  p: number;
  f: number;
  ms: number;
}

/**
 * The execution metrics' series source: two read-only script calls per
 * scrape (the window's minute hashes, then every exported class's
 * histogram for each minute), whatever the number of classes.
 *
 * @example
 * ```ts
 * const feature = { name: "metrics", dashboard: { metrics: jobMetricsSeries({ windowMinutes: 10 }) } };
 * ```
 */
export function jobMetricsSeries(options: JobMetricsSeriesOptions = {}): MetricsSource {
  const format = options.format ?? "sidekiq8";
  const window = wholeNumber("windowMinutes", options.windowMinutes ?? 5, 60);
  const maxClasses = wholeNumber("maxClasses", options.maxClasses ?? 200, 10_000);
  return {
    async collect({ client, now }: MetricsScrape): Promise<MetricFamily[]> {
      const k = client.keys;
      const minutes = Array.from({ length: window }, (_, i) => new Date(now.getTime() - i * 60_000));
      const bucket = format === "sidekiq7" ? legacyMinuteBucket : minuteBucket;
      const hashKeys = minutes.map((t) => k.metrics(bucket(t)));
      const hashes = await client.transport.script(METRICS_READ, hashKeys, [hashKeys.length, 0, 0]);
      const classes = new Map<string, ClassWindow>();
      for (const reply of hashes) {
        for (const [field, value] of pairs(reply)) {
          const bar = field.lastIndexOf("|");
          const metric = field.slice(bar + 1);
          if (bar <= 0 || !(metric === "p" || metric === "f" || metric === "ms")) continue;
          const name = field.slice(0, bar);
          let counts = classes.get(name);
          if (!counts) classes.set(name, counts = { p: 0, f: 0, ms: 0 });
          counts[metric] += num(value);
        }
      }
      const names = [...classes.keys()]
        .sort((a, b) => classes.get(b)!.p - classes.get(a)!.p || (a < b ? -1 : 1))
        .slice(0, maxClasses)
        .sort();
      const gramKeys = names.flatMap((name) =>
        minutes.map((t) =>
          format === "sidekiq7"
            ? k.legacyHistogram(name, legacyHistogramWindow(t))
            : k.histogram(name, histogramWindow(t))
        )
      );
      const grams = gramKeys.length
        ? await client.transport.script(METRICS_READ, gramKeys, [0, gramKeys.length, 0])
        : [];
      const series = (pick: (c: ClassWindow) => number) =>
        names.map((name) => ({ labels: { class: name }, value: pick(classes.get(name)!) }));
      return [
        {
          name: "edgekiq_job_runs_window",
          help: `Runs per job class over the last ${window} minutes, failed or not (Sidekiq's metrics p).`,
          type: "gauge",
          samples: series((c) => c.p),
        },
        {
          name: "edgekiq_job_failures_window",
          help: `Failed runs per job class over the last ${window} minutes (Sidekiq's metrics f).`,
          type: "gauge",
          samples: series((c) => c.f),
        },
        {
          name: "edgekiq_job_runtime_window_seconds",
          help: `Run time of successful runs per job class over the last ${window} minutes (Sidekiq's histogram; ` +
            "a sliding window, not a running total: use histogram_quantile() on it directly, without rate()).",
          type: "histogram",
          samples: names.map((name, c) => {
            const totals = new Array<number>(HISTOGRAM_SIZE).fill(0);
            for (let m = 0; m < window; m++) {
              const counters = arr(grams[c * window + m]);
              for (let b = 0; b < HISTOGRAM_SIZE; b++) totals[b] += num(counters[b]);
            }
            let running = 0;
            const buckets = totals.map((count, b): [number, number] => [HISTOGRAM_BOUNDS[b] / 1000, running += count]);
            return { labels: { class: name }, buckets, sum: classes.get(name)!.ms / 1000, count: running };
          }),
        },
      ];
    },
  };
}
