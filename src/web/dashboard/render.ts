/**
 * What the routes share: the per-request view, HTML responses, and the
 * notices an action leaves for the page it redirects to (named, never
 * free text from the URL).
 *
 * @module
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { Hono } from "hono";
import type { DashboardApp, RouteDeps } from "./dashboard_feature.ts";
import { formatCount } from "./format.ts";
import { liveInterval } from "./params.ts";
import type { DashboardEnv, DashboardVariables, View } from "./view.ts";

export type { RouteDeps } from "./dashboard_feature.ts";

/**
 * The dashboard's hono app behind the opaque {@link DashboardApp} a
 * feature's `routes` receives.
 *
 * @example
 * ```ts
 * routes: (app, deps) => honoApp(app).get("/hello", (c) => c.text("hi")),
 * ```
 */
export function honoApp(app: DashboardApp): Hono<DashboardEnv> {
  return app as unknown as Hono<DashboardEnv>;
}

/** A page or action handler a feature's page module exports. */
export type PageHandler = (c: Ctx, deps: RouteDeps) => Promise<Response> | Response;

/**
 * Registers a route whose handler lives in a page module loaded on its
 * first request: a feature's pages (JSX, so hono) load only in a dashboard,
 * never with the feature itself, and the root entry point stays hono-free.
 *
 * @example
 * ```ts
 * lazyRoute(app, deps, "GET", "/periodic", () => import("./periodic_pages.tsx").then((m) => m.periodicList));
 * ```
 */
export function lazyRoute(
  app: DashboardApp,
  deps: RouteDeps,
  method: "GET" | "POST",
  path: string,
  load: () => Promise<PageHandler>,
): void {
  let handler: Promise<PageHandler> | undefined;
  honoApp(app).on(method, path, async (c) => await (await (handler ??= load()))(c, deps));
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
  // Set only once auth and the same-origin check passed: a refused caller learns nothing of the server.
  const client = c.get("client") as DashboardVariables["client"] | undefined;
  return {
    base: c.get("base"),
    nonce: c.get("nonce"),
    title: deps.title,
    now: Date.now(),
    interval: liveInterval(raw),
    intervalExplicit: raw !== undefined && raw !== "",
    nav: deps.nav,
    redis: client
      ? {
        endpoint: client.transport.endpoint ?? client.transport.kind,
        prefix: client.shards.length > 1
          ? `${client.keys.prefix} in ${client.shards.length} shards`
          : client.keys.prefix,
      }
      : undefined,
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

const NOTICES: Record<string, { text: (n: number) => string; error?: boolean }> = Object.fromEntries(
  Object.entries({
    retried: (n) => `Retried ${formatCount(n)} job${n === 1 ? "" : "s"}: back on their queues.`,
    enqueued: (n) => `Added ${formatCount(n)} job${n === 1 ? "" : "s"} to their queues.`,
    deleted: (n) => `Deleted ${formatCount(n)} job${n === 1 ? "" : "s"}.`,
    killed: (n) => `Moved ${formatCount(n)} job${n === 1 ? "" : "s"} to the dead set.`,
    cleared: () => "Queue cleared.",
    "queue-paused": () => "Queue paused: no edgekiq process takes its jobs until it is resumed; running jobs finish.",
    "queue-resumed": () => "Queue resumed: every edgekiq process takes its jobs again at its next fetch.",
    "queue-was-paused": () => "Nothing was done: that queue was already paused.",
    "queue-not-paused": () => "Nothing was done: that queue was not paused.",
    quieted: (n) => `Asked ${formatCount(n)} process${n === 1 ? "" : "es"} to quiet.`,
    stopped: (n) => `Asked ${formatCount(n)} process${n === 1 ? "" : "es"} to stop.`,
    gone: () => "Nothing was done: the job or process was already gone.",
    "none-selected": () => "Select some rows first.",
    "already-done": () => "Nothing was done: that form had already been sent (a replay or a double click).",
  } as Record<string, (n: number) => string>).map(([name, text]) => [
    name,
    { text, error: name === "gone" || name === "none-selected" },
  ]),
);

/**
 * The notice named by `?notice=` (and its count `?n=`), if it is one we know.
 *
 * @example
 * ```ts
 * noticeOf(c, deps); // { text: "Deleted 3 jobs." }
 * ```
 */
export function noticeOf(c: Ctx, deps: RouteDeps): { text: string; error?: boolean } | undefined {
  const name = c.req.query("notice");
  if (!name) return undefined;
  const notice = Object.hasOwn(NOTICES, name)
    ? NOTICES[name]
    : Object.hasOwn(deps.notices, name)
    ? deps.notices[name]
    : undefined;
  if (!notice) return undefined;
  const n = Number(c.req.query("n") ?? "0");
  return { text: notice.text(Number.isInteger(n) && n >= 0 && n < 1e9 ? n : 0), error: notice.error };
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
