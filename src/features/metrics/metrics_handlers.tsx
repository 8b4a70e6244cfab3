/**
 * The Metrics pages' handlers (loaded on a dashboard's first request for
 * them, see `metrics_dashboard.ts`): `/metrics` (the top classes over a
 * period, `?period=` and `?substr=`) and `/metrics/:name` (one class). Each costs
 * the header's three commands plus one script call for the metrics,
 * whatever the period or the number of classes.
 *
 * @module
 */
import { Metrics } from "./metrics.ts";
import { loadSnapshot } from "../../api/snapshot.ts";
import { MetricsPage } from "./metrics_views.tsx";
import { MetricsJobPage } from "./metrics_job_views.tsx";
import { filterText, nameParam } from "../../web/dashboard/params.ts";
import { metricsPeriod, metricsPeriods } from "./metrics_params.ts";
import type { MetricsFormat } from "./metrics.ts";
import { type Ctx, page, viewOf } from "../../web/dashboard/render.ts";
import type { RouteDeps } from "../../web/dashboard/dashboard_feature.ts";

/** `GET /metrics`: the top classes over a period, in the metrics keys of `format`. */
export async function metricsList(c: Ctx, deps: RouteDeps, format: MetricsFormat): Promise<Response> {
  const view = viewOf(c, deps);
  const period = metricsPeriod(c.req.query("period"), format);
  const substr = filterText(c.req.query("substr"));
  const client = c.get("client");
  const [{ stats }, result] = await Promise.all([
    loadSnapshot(client),
    new Metrics(client, { format }).topJobs({ period, filter: substr || undefined }),
  ]);
  const periods = metricsPeriods(format);
  return await page(
    c,
    <MetricsPage view={view} stats={stats} result={result} period={period} periods={periods} substr={substr} />,
  );
}

/** `GET /metrics/:name`: one class over a period. */
export async function metricsJob(c: Ctx, deps: RouteDeps, format: MetricsFormat): Promise<Response> {
  const view = viewOf(c, deps);
  const name = nameParam("name", c.req.param("name"));
  const period = metricsPeriod(c.req.query("period"), format);
  const client = c.get("client");
  const [{ stats }, result] = await Promise.all([
    loadSnapshot(client),
    new Metrics(client, { format }).forJob(name, { period }),
  ]);
  const periods = metricsPeriods(format);
  return await page(
    c,
    <MetricsJobPage view={view} stats={stats} result={result} period={period} periods={periods} />,
  );
}
