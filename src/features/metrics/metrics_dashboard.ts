/**
 * The Metrics pages in the dashboard: the nav entry and the routes (their
 * handlers load on first use, so the feature itself never loads hono).
 *
 * @module
 */
import type { DashboardExtension } from "../../web/dashboard/dashboard_feature.ts";
import { lazyRoute } from "../../web/dashboard/render.ts";
import type { MetricsFormat } from "./metrics.ts";

const handlers = () => import("./metrics_handlers.tsx");

/**
 * The Metrics pages reading metrics keys of `format`, for the metrics
 * feature's `dashboard` part.
 *
 * @example
 * ```ts
 * const feature = { name: "metrics", dashboard: metricsDashboard("sidekiq7") };
 * ```
 */
export function metricsDashboard(format: MetricsFormat): DashboardExtension {
  return {
    nav: [{ section: "metrics", path: "/metrics", label: "Metrics" }],
    routes(app, deps) {
      lazyRoute(app, deps, "GET", "/metrics", () => handlers().then((m) => (c, d) => m.metricsList(c, d, format)));
      lazyRoute(app, deps, "GET", "/metrics/:name", () => handlers().then((m) => (c, d) => m.metricsJob(c, d, format)));
    },
  };
}
