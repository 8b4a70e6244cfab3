/**
 * One job class's metrics (Sidekiq's `metrics_for_job`): totals, runs,
 * failures and average time per bucket with deploy marks, and the
 * execution-time histogram in Sidekiq's 26 buckets.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { JobMetricsResult, MetricsPeriod } from "../../../api/metrics.ts";
import type { StatsSnapshot } from "../../../api/stats.ts";
import { HISTOGRAM_LABELS } from "../../../metrics/histogram.ts";
import { absoluteTime, formatCount, formatMillis } from "../format.ts";
import { Layout } from "../layout.tsx";
import type { View } from "../view.ts";
import { Empty } from "../widgets.tsx";
import { DeployMarks, epoch, markPoints, PeriodForm } from "./metrics.tsx";

/** Props of {@link MetricsJobPage}. */
export interface MetricsJobProps {
  view: View;
  stats: StatsSnapshot;
  result: JobMetricsResult;
  period: MetricsPeriod;
  periods: readonly MetricsPeriod[];
}

/**
 * The page.
 *
 * @example
 * ```tsx
 * <MetricsJobPage view={view} stats={stats} result={await metrics.forJob("HardJob")} period="1h" periods={periods} />
 * ```
 */
export function MetricsJobPage(props: MetricsJobProps): Child {
  const { view, result, period } = props;
  const { job } = result;
  const series = {
    t: result.buckets.map(epoch),
    p: job.series.p,
    f: job.series.f,
    avg: job.series.ms.map((ms, i) => {
      const ok = job.series.p[i] - job.series.f[i];
      return ok > 0 ? Math.round((ms / ok) * 100) / 100 : null;
    }),
    marks: markPoints(result.marks),
  };
  const histogram = result.histogramTotals;
  const timed = histogram?.reduce((a, b) => a + b, 0) ?? 0;
  const back = `${view.base}/metrics?period=${period}`;
  return (
    <Layout view={view} section="metrics" heading={`${job.name} · Metrics`} stats={props.stats} charts>
      <div class="head">
        <h1>
          <a href={back}>Metrics</a> / <span class="mono">{job.name}</span>
        </h1>
        <PeriodForm
          action={`${view.base}/metrics/${encodeURIComponent(job.name)}`}
          period={period}
          periods={props.periods}
        />
      </div>
      {job.totals.p === 0
        ? (
          <div class="panel">
            <Empty
              title={`${job.name} did not run in the last ${period}`}
              detail="No worker recorded a run of this class in the period. Try a longer one, or check the class name."
            />
          </div>
        )
        : (
          <>
            <div class="cards">
              <div class="card">
                <span>Runs</span>
                <b>{formatCount(job.totals.p)}</b>
              </div>
              <div class={job.totals.f > 0 ? "card danger" : "card"}>
                <span>Failures</span>
                <b>{formatCount(job.totals.f)}</b>
              </div>
              <div class="card">
                <span>Total time</span>
                <b>{formatMillis(job.totals.ms)}</b>
              </div>
              <div class="card">
                <span>Average time</span>
                <b>{formatMillis(job.avgMs)}</b>
              </div>
            </div>
            <div class="panel">
              <div class="head">
                <h2>Runs, failures and average time</h2>
              </div>
              <div class="chart" id="job-chart" data-series={JSON.stringify(series)}>
                <noscript>
                  <div class="nojs">The chart needs JavaScript; the totals are above.</div>
                </noscript>
              </div>
              <DeployMarks marks={result.marks} />
            </div>
            <div class="panel">
              <div class="head">
                <h2>Execution time</h2>
                <span class="muted small">
                  {histogram ? `${formatCount(timed)} successful runs` : null}
                </span>
              </div>
              {histogram
                ? (
                  <>
                    <div
                      class="chart"
                      id="histogram-chart"
                      data-histogram={JSON.stringify({ labels: HISTOGRAM_LABELS, counts: histogram })}
                    >
                    </div>
                    <details>
                      <summary>As a table</summary>
                      <table class="kv">
                        <tbody>
                          {histogram.map((n, i) => (n > 0
                            ? (
                              <tr key={i}>
                                <th>{i === histogram.length - 1 ? "slower" : `under ${HISTOGRAM_LABELS[i]}`}</th>
                                <td class="num">{formatCount(n)}</td>
                              </tr>
                            )
                            : null)
                          )}
                        </tbody>
                      </table>
                    </details>
                  </>
                )
                : (
                  <Empty
                    title="No histogram for this period"
                    detail="Sidekiq keeps the execution-time histogram for 8 hours, by minute: pick 1h to 8h."
                  />
                )}
            </div>
          </>
        )}
      <p class="legend-note">
        Data from {absoluteTime(result.startsAt)} to {absoluteTime(result.endsAt)}, in{" "}
        {result.granularity === "minutely" ? "1-minute" : "10-minute"} buckets.
      </p>
    </Layout>
  );
}
