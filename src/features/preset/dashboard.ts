/**
 * `dashboard()` as `edgekiq/web` exports it: the dashboard with the default
 * features' pages (Metrics, Periodic) added.
 *
 * @module
 */
import type { Hono } from "hono";
import type { MetricsFormat } from "../metrics/metrics.ts";
import { dashboard as buildDashboard, type DashboardOptions } from "../../web/dashboard/dashboard.tsx";
import type { DashboardEnv } from "../../web/dashboard/view.ts";
import { withDefaultFeatures } from "./built_in.ts";
import { jobMetrics } from "../metrics/job_metrics.ts";
import { jobProfiles } from "../profiles/job_profiles.ts";

/** Options for {@link dashboard}: the dashboard's, and the Metrics pages' key format. */
export interface DashboardPresetOptions<E extends object = Record<string, unknown>> extends DashboardOptions<E> {
  /**
   * The execution-metrics keys the Metrics page reads: `"sidekiq8"` (the
   * default; edgekiq's workers and Sidekiq 8 write them) or `"sidekiq7"` for
   * an estate whose Ruby side still runs Sidekiq 7 (periods up to 8h).
   * Ignored when `features` has its own `jobMetrics()`.
   */
  metricsFormat?: MetricsFormat;
}

/**
 * Builds the dashboard as a hono app: mount it with
 * `app.route("/jobs", dashboard({...}))`; links follow the mount, nested
 * ones included (`/admin/jobs`).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { dashboard, verifyBasic } from "edgekiq/web";
 *
 * const app = new Hono();
 * app.route("/jobs", dashboard({ transport, auth: (c) => verifyBasic(c.req.raw, "admin", process.env.JOBS_PASSWORD) }));
 * // or behind a proxy that authenticates: auth: (c) => c.req.header("x-auth-user") === "ops"
 * ```
 */
export function dashboard<E extends object = Record<string, unknown>>(
  options: DashboardPresetOptions<E>,
): Hono<DashboardEnv<E>> {
  const { metricsFormat, ...rest } = options ?? ({} as DashboardPresetOptions<E>);
  const given = rest.features ?? [];
  const named = new Set(given.map((f) => f?.name));
  // A sharded namespace's dashboard gets none of the default features' pages (their state is not sharded).
  if (typeof rest.shards === "number" && rest.shards > 1) return buildDashboard({ ...rest, features: given });
  const features = [
    ...given,
    ...(named.has("metrics") ? [] : [jobMetrics({ format: metricsFormat ?? "sidekiq8" })]),
    // Always shown, profiles or not, as Sidekiq 8's tab: the page says how to record one.
    ...(named.has("profiles") ? [] : [jobProfiles()]),
  ];
  return buildDashboard({ ...rest, features: withDefaultFeatures(features, {}, { periodic: true }) });
}
