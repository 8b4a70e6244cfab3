/**
 * The cancel feature in the dashboard: a Cancel button on each running
 * job's row of the Busy page (it asks first and carries a one-time token),
 * its route (loaded on first use, so the feature never loads hono) and its
 * notice.
 *
 * @module
 */
import type { DashboardExtension } from "../../web/dashboard/dashboard_feature.ts";
import { lazyRoute } from "../../web/dashboard/render.ts";

/**
 * The Cancel button, for the cancel feature's `dashboard` part.
 *
 * @example
 * ```ts
 * const feature = { name: "cancel", dashboard: CANCEL_DASHBOARD };
 * ```
 */
export const CANCEL_DASHBOARD: DashboardExtension = {
  notices: {
    "job-cancelled": {
      text: () =>
        "Cancel sent: the job's ctx.stopping aborts within one heartbeat on the process running it " +
        "(one with jobCancellation()), and its waiting copies are skipped.",
    },
  },
  workActions: [{
    path: "/busy/cancel",
    value: "cancel",
    label: "Cancel",
    danger: true,
    confirm: ({ jid, className }) =>
      `Cancel ${className} ${jid}? Its ctx.stopping aborts and it is not retried; this cannot be undone.`,
  }],
  routes(app, deps) {
    lazyRoute(app, deps, "POST", "/busy/cancel", () => import("./cancel_handlers.ts").then((m) => m.cancelAction));
  },
};
