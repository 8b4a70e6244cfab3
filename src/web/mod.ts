/**
 * `edgekiq/web`: HTTP entry points. `dashboard()` is Sidekiq's Web UI as a
 * mountable hono app; `metricsHandler()` a Prometheus endpoint with the
 * same auth rules; `cronRoutes()` are the serverless poll/drain routes;
 * `eventRoutes()` streams a queue's job events as Server-Sent Events.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { cronRoutes, dashboard, verifyBasic } from "edgekiq/web";
 * import { upstashTransport } from "edgekiq/upstash";
 *
 * const transport = upstashTransport({ url: UPSTASH_URL, token: UPSTASH_TOKEN });
 * const app = new Hono();
 * app.route("/cron", cronRoutes({ transport, jobs: [SendEmail], budgetMs: 25_000, auth: CRON_SECRET }));
 * app.route("/jobs", dashboard({ transport, auth: (c) => verifyBasic(c.req.raw, "admin", DASHBOARD_PASSWORD) }));
 * export default app;
 * ```
 *
 * @module
 */
export { cronRoutes } from "../features/preset/cron_routes.ts";
export type { CronRoutesOptions } from "../features/preset/cron_routes.ts";
export { verifyBearer } from "./bearer_auth.ts";
export type { CronAuth } from "./bearer_auth.ts";
export { eventRoutes } from "../features/events/event_routes.ts";
export type { EventRoutesOptions } from "../features/events/event_routes.ts";
export { dashboard } from "../features/preset/dashboard.ts";
export type { DashboardPresetOptions as DashboardOptions } from "../features/preset/dashboard.ts";
export type {
  DashboardApp,
  DashboardExtension,
  DashboardFeature,
  NavItem,
  RouteDeps,
} from "./dashboard/dashboard_feature.ts";
export { honoApp, page, viewOf } from "./dashboard/render.ts";
export { Layout } from "./dashboard/layout.tsx";
export type { LayoutProps } from "./dashboard/layout.tsx";
export { metricsHandler } from "../features/preset/metrics_handler.ts";
export type { MetricsHandlerPresetOptions as MetricsHandlerOptions } from "../features/preset/metrics_handler.ts";
export { renderExposition } from "./metrics/exposition.ts";
export type { HistogramSample, MetricFamily, MetricLabels, MetricSample } from "./metrics/exposition.ts";
export type { MetricsScrape, MetricsSource } from "./metrics/metrics_source.ts";
export { verifyBasic } from "./dashboard/auth.ts";
export type { DashboardAuth } from "./dashboard/auth.ts";
export type { DashboardEnv, DashboardVariables } from "./dashboard/view.ts";
