/**
 * The Metrics page (Sidekiq 7 and 8's): per job class, runs, failures,
 * total and average time over a period, the top classes charted over time
 * with deploy marks, and a class-name filter. Reads what edgekiq's workers
 * and Ruby Sidekiq 7/8 write.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { DeployMark, JobMetrics, MetricsPeriod, TopJobsResult } from "./metrics.ts";
import type { StatsSnapshot } from "../../api/stats.ts";
import { absoluteTime, formatCount, formatMillis, truncate } from "../../web/dashboard/format.ts";
import { Layout } from "../../web/dashboard/layout.tsx";
import { MAX_FILTER_LENGTH } from "../../web/dashboard/params.ts";
import type { View } from "../../web/dashboard/view.ts";
import { Empty } from "../../web/dashboard/widgets.tsx";

/** Classes charted (the busiest), as Sidekiq's Web UI. */
export const CHART_CLASSES = 5;
/** Classes listed in the table; a filter narrows the rest. */
export const TABLE_CLASSES = 100;

/** What a time cell says for a class with no successful run: Sidekiq (and edgekiq) time successful runs only. */
export const NOT_TIMED = "not timed";

/**
 * A class's time as a cell shows it: `formatMillis`, or {@link NOT_TIMED}
 * when none of its runs succeeded (its failures were not timed; "0 ms"
 * would read as measured).
 *
 * @example
 * ```ts
 * shownMillis(0, 0); // "not timed"
 * ```
 */
export function shownMillis(ms: number, successes: number): string {
  return successes > 0 ? formatMillis(ms) : NOT_TIMED;
}

/**
 * The link to one class's metrics for a period.
 *
 * @example
 * ```ts
 * metricsHref("/jobs", "Mailer::Send", "1h"); // "/jobs/metrics/Mailer%3A%3ASend?period=1h"
 * ```
 */
export function metricsHref(base: string, name: string, period: MetricsPeriod): string {
  return `${base}/metrics/${encodeURIComponent(name)}?period=${period}`;
}

/**
 * Epoch seconds of an ISO bucket time (uPlot's x values).
 *
 * @example
 * ```ts
 * epoch("2025-02-14T08:05:00Z"); // 1739520300
 * ```
 */
export function epoch(iso: string): number {
  return Date.parse(iso) / 1000;
}

/**
 * Deploy marks as the charts draw them: `[epoch seconds, label]`.
 *
 * @example
 * ```ts
 * markPoints(result.marks); // [[1739520300, "cafed00d fix the mailer"]]
 * ```
 */
export function markPoints(marks: readonly DeployMark[]): Array<[number, string]> {
  return marks.map((m) => [epoch(m.bucket), m.label]);
}

/**
 * The period picker (and, on the overview, the class filter): a plain GET
 * form, so it works without JavaScript.
 *
 * @example
 * ```tsx
 * <PeriodForm action={`${base}/metrics`} period="1h" periods={["1h", "2h"]} substr="" />
 * ```
 */
export function PeriodForm(
  props: { action: string; period: MetricsPeriod; periods: readonly MetricsPeriod[]; substr?: string },
): Child {
  return (
    <form method="get" action={props.action} class="actions" id="metrics-form">
      {props.substr === undefined ? null : (
        <input
          type="search"
          name="substr"
          value={props.substr}
          maxlength={MAX_FILTER_LENGTH}
          placeholder="Filter: job class"
          aria-label="Filter by job class"
        />
      )}
      <select name="period" aria-label="Period">
        {props.periods.map((p) => <option key={p} value={p} selected={p === props.period}>{`Last ${p}`}</option>)}
      </select>
      <button type="submit">Show</button>
    </form>
  );
}

/**
 * The deploy marks of a period, listed (the charts draw them as lines).
 *
 * @example
 * ```tsx
 * <DeployMarks marks={result.marks} />
 * ```
 */
export function DeployMarks(props: { marks: readonly DeployMark[] }): Child {
  if (props.marks.length === 0) return null;
  return (
    <p class="legend-note">
      Deploys: {props.marks.map((m, i) => (
        <span key={i}>
          {i > 0 ? " · " : ""}
          <time datetime={m.time.toISOString()}>{absoluteTime(m.time)}</time> <span class="mono">{m.label}</span>
        </span>
      ))}
    </p>
  );
}

/** Props of {@link MetricsPage}. */
export interface MetricsProps {
  view: View;
  stats: StatsSnapshot;
  result: TopJobsResult;
  period: MetricsPeriod;
  periods: readonly MetricsPeriod[];
  substr: string;
}

function chartData(result: TopJobsResult, jobs: readonly JobMetrics[]): string {
  return JSON.stringify({
    t: result.buckets.map(epoch),
    jobs: jobs.map((j) => ({ name: j.name, p: j.series.p, f: j.series.f, ms: j.series.ms })),
    marks: markPoints(result.marks),
  });
}

/**
 * The page.
 *
 * @example
 * ```tsx
 * <MetricsPage view={view} stats={stats} result={await metrics.topJobs()} period="1h" periods={periods} substr="" />
 * ```
 */
export function MetricsPage(props: MetricsProps): Child {
  const { view, result, period, substr } = props;
  const jobs = result.jobs.slice(0, TABLE_CLASSES);
  const charted = jobs.slice(0, CHART_CLASSES);
  const span = `the last ${period}`;
  return (
    <Layout view={view} section="metrics" heading="Metrics" stats={props.stats} charts>
      <div class="head">
        <h1>Metrics</h1>
        <PeriodForm action={`${view.base}/metrics`} period={period} periods={props.periods} substr={substr} />
      </div>
      {result.jobs.length === 0
        ? (
          <div class="panel">
            <Empty
              title={substr
                ? `No job class matching “${truncate(substr, 60)}” ran in ${span}`
                : `No jobs ran in ${span}`}
              detail={substr
                ? "The filter matches any part of a job class's name, ignoring case."
                : "Workers write each job class's runs, failures and time here as they run jobs (edgekiq's by default, " +
                  "and Ruby Sidekiq 7 and later). Try a longer period."}
            />
          </div>
        )
        : (
          <>
            <div class="panel">
              <div class="head">
                <h2>Top {formatCount(charted.length)} by total time</h2>
                <label class="actions small muted" hidden>
                  Show
                  <select id="metric" name="metric">
                    <option value="ms">Total time</option>
                    <option value="p">Runs</option>
                    <option value="f">Failures</option>
                    <option value="avg">Average time</option>
                  </select>
                </label>
              </div>
              <div class="chart" id="metrics-chart" data-metrics={chartData(result, charted)}>
                <noscript>
                  <div class="nojs">The chart needs JavaScript; the table below has the same numbers.</div>
                </noscript>
              </div>
              <DeployMarks marks={result.marks} />
            </div>
            <div class="panel flush">
              <div class="bar">
                <h2>Most time-consuming jobs</h2>
                <span class="muted small">
                  {formatCount(result.jobs.length)} class{result.jobs.length === 1 ? "" : "es"}
                  {result.jobs.length > jobs.length ? `, the first ${formatCount(jobs.length)} shown` : ""}
                </span>
              </div>
              <table>
                <thead>
                  <tr>
                    <th>Job class</th>
                    <th class="num">Runs</th>
                    <th class="num">Failures</th>
                    <th class="num">Total time</th>
                    <th class="num">Average time</th>
                  </tr>
                </thead>
                <tbody>
                  {jobs.map((j, i) => (
                    <tr>
                      <td>
                        {i < CHART_CLASSES ? <i class={`swatch c${i}`}></i> : null}
                        <a class="mono" href={metricsHref(view.base, j.name, period)}>{j.name}</a>
                      </td>
                      <td class="num">{formatCount(j.totals.p)}</td>
                      <td class={j.totals.f > 0 ? "num error" : "num"}>{formatCount(j.totals.f)}</td>
                      <td class={j.success > 0 ? "num nowrap" : "num nowrap muted"}>
                        {shownMillis(j.totals.ms, j.success)}
                      </td>
                      <td class={j.success > 0 ? "num nowrap" : "num nowrap muted"}>
                        {shownMillis(j.avgMs, j.success)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      <p class="legend-note">
        Data from {absoluteTime(result.startsAt)} to {absoluteTime(result.endsAt)}, in{" "}
        {result.granularity === "minutely" ? "1-minute" : "10-minute"}{" "}
        buckets. Times are of successful runs; failures count as runs but are not timed (as in Sidekiq), so a class
        whose runs all failed shows "{NOT_TIMED}".
      </p>
    </Layout>
  );
}
