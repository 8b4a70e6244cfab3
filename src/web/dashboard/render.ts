/**
 * What the routes share: the per-request view, HTML responses, and the
 * notices an action leaves for the page it redirects to (named, never
 * free text from the URL).
 *
 * @module
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { MetricsFormat } from "../../api/metrics.ts";
import type { JobSetOptions } from "../../api/sorted_set.ts";
import { formatCount } from "./format.ts";
import { liveInterval } from "./params.ts";
import type { DashboardEnv, View } from "./view.ts";

/** Settings the routes read, fixed when the dashboard is built. */
export interface RouteDeps {
  /** Header and tab title. */
  title: string;
  /** The metrics key format the Metrics pages read. */
  metricsFormat: MetricsFormat;
  /** Death handlers for jobs killed from the dashboard. */
  setOptions: JobSetOptions;
}

/** Any dashboard context, whatever the platform bindings. */
// deno-lint-ignore no-explicit-any
export type Ctx = Context<DashboardEnv<any>>;

/**
 * The view for this request: links, nonce, clock, the live interval (from
 * `?interval=`, clamped to 2–20 s).
 *
 * @example
 * ```ts
 * const view = viewOf(c, deps);
 * ```
 */
export function viewOf(c: Ctx, deps: RouteDeps): View {
  const raw = c.req.query("interval");
  return {
    base: c.get("base"),
    nonce: c.get("nonce"),
    title: deps.title,
    now: Date.now(),
    interval: liveInterval(raw),
    intervalExplicit: raw !== undefined && raw !== "",
  };
}

/**
 * An HTML response from a rendered page.
 *
 * @example
 * ```ts
 * return await page(c, <BusyPage {...props} />);
 * ```
 */
export async function page(
  c: Ctx,
  node: Child,
  status: 200 | 400 | 401 | 403 | 404 | 413 | 500 = 200,
): Promise<Response> {
  return c.html(`<!doctype html>${await node}`, status);
}

const NOTICES: Record<string, (n: number) => string> = {
  retried: (n) => `Retried ${formatCount(n)} job${n === 1 ? "" : "s"}: back on their queues.`,
  enqueued: (n) => `Added ${formatCount(n)} job${n === 1 ? "" : "s"} to their queues.`,
  deleted: (n) => `Deleted ${formatCount(n)} job${n === 1 ? "" : "s"}.`,
  killed: (n) => `Moved ${formatCount(n)} job${n === 1 ? "" : "s"} to the dead set.`,
  cleared: () => "Queue cleared.",
  quieted: (n) => `Asked ${formatCount(n)} process${n === 1 ? "" : "es"} to quiet.`,
  stopped: (n) => `Asked ${formatCount(n)} process${n === 1 ? "" : "es"} to stop.`,
  gone: () => "Nothing was done: the job or process was already gone.",
  paused: () => "Schedule paused: it enqueues nothing until resumed.",
  resumed: () => "Schedule resumed: it runs again from its next tick.",
  "not-paused": () => "Nothing was done: that schedule was not paused.",
  "run-now": () => "Enqueued the schedule's job now; its timing is unchanged.",
  "schedule-gone": () => "Nothing was done: that schedule is gone (no running app declares it any more).",
  "none-selected": () => "Select some rows first.",
  "already-done": () => "Nothing was done: that form had already been sent (a replay or a double click).",
};

/**
 * The notice named by `?notice=` (and its count `?n=`), if it is one we know.
 *
 * @example
 * ```ts
 * noticeOf(c); // { text: "Deleted 3 jobs." }
 * ```
 */
export function noticeOf(c: Ctx): { text: string; error?: boolean } | undefined {
  const name = c.req.query("notice");
  if (!name || !Object.hasOwn(NOTICES, name)) return undefined;
  const n = Number(c.req.query("n") ?? "0");
  const text = NOTICES[name](Number.isInteger(n) && n >= 0 && n < 1e9 ? n : 0);
  return { text, error: name === "gone" || name === "none-selected" || name === "schedule-gone" };
}

/**
 * A 303 to `path` (under the dashboard) carrying a notice.
 *
 * @example
 * ```ts
 * return redirectWith(c, "/retries", "deleted", 3);
 * ```
 */
export function redirectWith(c: Ctx, path: string, notice: string, n: number = 0): Response {
  return c.redirect(`${c.get("base")}${path}?notice=${notice}&n=${n}`, 303);
}
