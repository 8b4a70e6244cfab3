/**
 * `edgekiq/web`: HTTP entry points. `dashboard()` is Sidekiq's Web UI as a
 * mountable hono app; `cronRoutes()` are the serverless poll/drain routes.
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
export { cronRoutes, pollAndDrain, verifyBearer } from "./cron_routes.ts";
export type { CronAuth, CronRoutesOptions, TickOptions, TickResult } from "./cron_routes.ts";
export { dashboard } from "./dashboard/dashboard.tsx";
export type { DashboardOptions } from "./dashboard/dashboard.tsx";
export { verifyBasic } from "./dashboard/auth.ts";
export type { DashboardAuth } from "./dashboard/auth.ts";
export type { DashboardEnv, DashboardVariables } from "./dashboard/view.ts";
