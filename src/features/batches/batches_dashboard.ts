/**
 * The Batches pages in the dashboard: the nav entry, the routes (their
 * handlers load on first use, so the feature itself never loads hono), the
 * notices its action leaves, and the section a job's page shows for a job
 * in a batch or a flow.
 *
 * @module
 */
import type { DashboardExtension } from "../../web/dashboard/dashboard_feature.ts";
import { lazyRoute } from "../../web/dashboard/render.ts";

const pages = () => import("./batches_handlers.tsx");

/**
 * The Batches pages, for the batch feature's `dashboard` part.
 *
 * @example
 * ```ts
 * const feature = { name: "batches", dashboard: BATCHES_DASHBOARD };
 * ```
 */
export const BATCHES_DASHBOARD: DashboardExtension = {
  nav: [{ section: "batches", path: "/batches", label: "Batches" }],
  notices: {
    "batch-cancelled": { text: () => "Batch cancelled: its queued jobs are skipped, its running jobs asked to stop." },
    "batch-gone": { text: () => "Nothing was done: that batch is gone (it expired).", error: true },
  },
  routes(app, deps) {
    lazyRoute(app, deps, "GET", "/batches", () => pages().then((m) => m.batchList));
    lazyRoute(app, deps, "GET", "/batches/:bid", () => pages().then((m) => m.batchEntry));
    lazyRoute(app, deps, "POST", "/batches/:bid", () => pages().then((m) => m.batchAction));
  },
  jobSection: () => pages().then((m) => m.batchJobSection),
};
