/**
 * One job class's metrics (Sidekiq's `metrics_for_job`): totals, runs,
 * failures and average time per bucket with deploy marks, and the
 * execution-time histogram in Sidekiq's 26 buckets.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { JobMetricsResult, MetricsPeriod } from "./metrics.ts";
import type { StatsSnapshot } from "../../api/stats.ts";
import { HISTOGRAM_LABELS } from "./histogram.ts";
import { absoluteTime, formatCount } from "../../web/dashboard/format.ts";
import { Layout } from "../../web/dashboard/layout.tsx";
import type { View } from "../../web/dashboard/view.ts";
import { Empty } from "../../web/dashboard/widgets.tsx";
import { DeployMarks, epoch, markPoints, PeriodForm, shownMillis } from "./metrics_views.tsx";

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
      {job.totals.p === 0 && job.totals.x === 0
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
                <b>{shownMillis(job.totals.ms, job.success)}</b>
              </div>
              <div class="card">
                <span>Average time</span>
                <b>{shownMillis(job.avgMs, job.success)}</b>
              </div>
              {job.totals.x > 0
                ? (
                  <div class="card" title="Dropped before they started: they expired (expiringJobs)">
                    <span>Expired</span>
                    <b>{formatCount(job.totals.x)}</b>
                  </div>
                )
                : null}
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
              {histogram && job.success === 0
                ? (
                  <Empty
                    title={`No successful run of ${job.name} in the last ${period}`}
                    detail={`All ${
                      formatCount(job.totals.p)
                    } of its runs failed. The histogram, like the times above, ` +
                      "counts successful runs only: Sidekiq does not time a failed run (it may have failed at once or " +
                      "after a timeout), and edgekiq writes the same keys."}
                  />
                )
                : histogram
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
