/**
 * Execution metrics as a feature: each job's outcome is counted in memory
 * (a synchronous observer, no promise per job), written beside each
 * heartbeat (one command when jobs ran, none when idle) and at stop, in
 * Sidekiq 7/8's Redis format; the dashboard gets its Metrics pages and the
 * Prometheus endpoint its per-class series.
 *
 * @module
 */
import type { Feature } from "../feature.ts";
import type { FeatureContext } from "../../server/worker_feature.ts";
import type { MetricsFormat } from "./metrics.ts";
import { metricsDashboard } from "./metrics_dashboard.ts";
import { jobMetricsSeries } from "./metrics_series.ts";
import { MetricsTracker, type MetricsTrackerOptions } from "./tracker.ts";
import { displayClass } from "../../activejob.ts";

/** Options for {@link jobMetrics}. */
export interface JobMetricsOptions extends MetricsTrackerOptions {
  /**
   * The execution-metrics keys the dashboard's Metrics pages read:
   * `"sidekiq8"` (the default; edgekiq's workers and Sidekiq 8 write them)
   * or `"sidekiq7"` for an estate whose Ruby side still runs Sidekiq 7
   * (periods up to 8h). Workers always write both.
   */
  format?: MetricsFormat;
  /**
   * Minutes covered by its series on the Prometheus endpoint
   * (`metricsHandler()`): per-class runs, failures and the run-time
   * histogram over the last `windowMinutes` (default 5, at most 60).
   */
  windowMinutes?: number;
}

/** The metrics feature, with the tracker it records into. */
export interface JobMetricsFeature extends Feature {
  readonly name: "metrics";
  /** What the feature counts into and flushes. */
  readonly tracker: MetricsTracker;
}

/**
 * Execution metrics per job class, on by default in `createWorker` and
 * `drain` (the root entry point adds it; `metrics: false` turns it off)
 * and in `dashboard()`.
 *
 * @example
 * ```ts
 * createWorker({ transport, jobs, features: [jobMetrics({ format: "sidekiq7" })] });
 * ```
 */
export function jobMetrics(options: JobMetricsOptions = {}): JobMetricsFeature {
  const { format = "sidekiq8", windowMinutes, ...trackerOptions } = options;
  const series = jobMetricsSeries({ format, windowMinutes });
  // Made on first use: a tracker draws a random id, which an edge runtime
  // refuses at module scope (where `cronRoutes()` may build this feature).
  let made: MetricsTracker | undefined;
  const tracker = () => made ??= new MetricsTracker(trackerOptions);
  const flush = async ({ transport, keys }: FeatureContext) => {
    if (made) await made.flush(transport, keys);
  };
  return Object.freeze(
    {
      name: "metrics",
      get tracker() {
        return tracker();
      },
      // A run that threw counts as failed; a Discard from perform is not a failure (it ended as it meant to).
      // A job dropped as expired never ran: counted apart (`x`), not as a run.
      observe(outcome) {
        if (outcome.kind === "later") return;
        if (outcome.code === "expired") return tracker().expired(displayClass(outcome.payload));
        tracker().record(displayClass(outcome.payload), outcome.ms, outcome.error !== undefined);
      },
      beat: flush,
      stop: flush,
      dashboard: { ...metricsDashboard(format), metrics: series },
    } satisfies JobMetricsFeature,
  );
}
