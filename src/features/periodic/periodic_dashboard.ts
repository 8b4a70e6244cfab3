/**
 * The Periodic pages in the dashboard: the nav entry, the routes (their
 * handlers load on first use, so the feature itself never loads hono) and
 * the notices its actions leave.
 *
 * @module
 */
import type { DashboardExtension } from "../../web/dashboard/dashboard_feature.ts";
import { lazyRoute } from "../../web/dashboard/render.ts";

/** The notices the Periodic actions leave. */
const PERIODIC_NOTICES: DashboardExtension["notices"] = {
  paused: { text: () => "Schedule paused: it enqueues nothing until resumed." },
  resumed: { text: () => "Schedule resumed: it runs again from its next tick." },
  "not-paused": { text: () => "Nothing was done: that schedule was not paused." },
  "run-now": { text: () => "Enqueued the schedule's job now; its timing is unchanged." },
  "schedule-gone": {
    text: () => "Nothing was done: that schedule is gone (no running app declares it any more).",
    error: true,
  },
};

const pages = () => import("./periodic_handlers.tsx");

/**
 * The Periodic pages, for the periodic feature's `dashboard` part.
 *
 * @example
 * ```ts
 * const feature = { name: "periodic", dashboard: PERIODIC_DASHBOARD };
 * ```
 */
export const PERIODIC_DASHBOARD: DashboardExtension = {
  nav: [{ section: "periodic", path: "/periodic", label: "Periodic" }],
  notices: PERIODIC_NOTICES,
  routes(app, deps) {
    lazyRoute(app, deps, "GET", "/periodic", () => pages().then((m) => m.periodicList));
    lazyRoute(app, deps, "GET", "/periodic/:name", () => pages().then((m) => m.periodicEntry));
    lazyRoute(app, deps, "POST", "/periodic/:name", () => pages().then((m) => m.periodicAction));
  },
};
