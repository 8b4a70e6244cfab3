/**
 * The Limits page in the dashboard: the nav entry and the route (its
 * handler loads on first use, so the feature itself never loads hono).
 *
 * @module
 */
import type { DashboardExtension } from "../../web/dashboard/dashboard_feature.ts";
import { lazyRoute } from "../../web/dashboard/render.ts";

const pages = () => import("./limits_pages.tsx");

/**
 * The Limits page: each limiter's use and over-limit events per minute,
 * and each grouped queue's biggest backlogs.
 *
 * @example
 * ```ts
 * const feature = { name: "limits", dashboard: LIMITS_DASHBOARD };
 * ```
 */
export const LIMITS_DASHBOARD: DashboardExtension = {
  nav: [{ section: "limits", path: "/limits", label: "Limits" }],
  routes(app, deps) {
    lazyRoute(app, deps, "GET", "/limits", () => pages().then((m) => m.limitsPage));
  },
};
