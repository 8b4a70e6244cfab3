/**
 * The Metrics pages' URL parameters: `period`, from the periods the metrics
 * format keeps. Only a listed value ever reaches a link or a form (Sidekiq's
 * metrics `period` XSS echoed it raw).
 *
 * @module
 */
import { METRICS_PERIODS, type MetricsFormat, type MetricsPeriod } from "./metrics.ts";
import { rule } from "../../web/dashboard/params.ts";

/**
 * The metrics periods a format keeps: Sidekiq 8's `1h` to `72h`, Sidekiq 7's
 * `1h` to `8h` (it kept minute buckets only).
 *
 * @example
 * ```ts
 * metricsPeriods("sidekiq7"); // ["1h", "2h", "4h", "8h"]
 * ```
 */
export function metricsPeriods(format: MetricsFormat): MetricsPeriod[] {
  const all = Object.keys(METRICS_PERIODS) as MetricsPeriod[];
  return format === "sidekiq7" ? all.filter((p) => METRICS_PERIODS[p].minutes) : all;
}

/**
 * `period` for the Metrics pages: one of {@link metricsPeriods} (default
 * `1h`). Anything else is a 400 that quotes it escaped and cut short; only
 * a listed value ever reaches a link or a form (Sidekiq's metrics `period`
 * XSS echoed it raw).
 *
 * @example
 * ```ts
 * metricsPeriod("24h", "sidekiq8"); // "24h"
 * metricsPeriod("<script>", "sidekiq8"); // throws ParamError
 * ```
 */
export function metricsPeriod(raw: string | undefined, format: MetricsFormat): MetricsPeriod {
  if (raw === undefined || raw === "") return "1h";
  const periods = metricsPeriods(format);
  if (!(periods as string[]).includes(raw)) throw rule("period", `one of ${periods.join(", ")}`, raw);
  return raw as MetricsPeriod;
}
