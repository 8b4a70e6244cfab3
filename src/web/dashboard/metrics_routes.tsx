/**
 * The Metrics pages' routes: `/metrics` (the top classes over a period,
 * `?period=` and `?substr=`) and `/metrics/:name` (one class). Each costs
 * the header's three commands plus one script call for the metrics,
 * whatever the period or the number of classes.
 *
 * @module
 */
import type { Hono } from "hono";
import { Metrics } from "../../api/metrics.ts";
import { loadSnapshot } from "../../api/snapshot.ts";
import { MetricsPage } from "./pages/metrics.tsx";
import { MetricsJobPage } from "./pages/metrics_job.tsx";
import { filterText, metricsPeriod, metricsPeriods, nameParam } from "./params.ts";
import { page, type RouteDeps, viewOf } from "./render.ts";
import type { DashboardEnv } from "./view.ts";

/**
 * Registers the Metrics routes on the dashboard app.
 *
 * @example
 * ```ts
 * metricsRoutes(app, deps);
 * ```
 */
export function metricsRoutes(app: Hono<DashboardEnv>, deps: RouteDeps): void {
  const format = deps.metricsFormat;
  const periods = metricsPeriods(format);

  app.get("/metrics", async (c) => {
    const view = viewOf(c, deps);
    const period = metricsPeriod(c.req.query("period"), format);
    const substr = filterText(c.req.query("substr"));
    const client = c.get("client");
    const [{ stats }, result] = await Promise.all([
      loadSnapshot(client),
      new Metrics(client, { format }).topJobs({ period, filter: substr || undefined }),
    ]);
    return await page(
      c,
      <MetricsPage view={view} stats={stats} result={result} period={period} periods={periods} substr={substr} />,
    );
  });

  app.get("/metrics/:name", async (c) => {
    const view = viewOf(c, deps);
    const name = nameParam("name", c.req.param("name"));
    const period = metricsPeriod(c.req.query("period"), format);
    const client = c.get("client");
    const [{ stats }, result] = await Promise.all([
      loadSnapshot(client),
      new Metrics(client, { format }).forJob(name, { period }),
    ]);
    return await page(
      c,
      <MetricsJobPage view={view} stats={stats} result={result} period={period} periods={periods} />,
    );
  });
}
