/**
 * `edgekiq/web`: HTTP entry points for serverless and edge deployments.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { cronRoutes } from "edgekiq/web";
 * import { upstashTransport } from "edgekiq/upstash";
 *
 * const transport = upstashTransport({ url: UPSTASH_URL, token: UPSTASH_TOKEN });
 * const app = new Hono();
 * app.route("/cron", cronRoutes({ transport, jobs: [SendEmail], budgetMs: 25_000, auth: CRON_SECRET }));
 * export default app;
 * ```
 *
 * @module
 */
export { cronRoutes, pollAndDrain, verifyBearer } from "./cron_routes.ts";
export type { CronAuth, CronRoutesOptions, TickOptions, TickResult } from "./cron_routes.ts";
