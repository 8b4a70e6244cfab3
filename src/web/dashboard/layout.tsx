/**
 * The frame around every dashboard page: head (assets with the CSP nonce),
 * nav, the counters bar, a notice, the page, the footer. Everything from
 * Redis is rendered through hono/jsx, which escapes it.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { StatsSnapshot } from "../../api/stats.ts";
import { VERSION } from "../../version.ts";
import { ASSETS } from "./assets/assets.ts";
import { absoluteTime, formatCount } from "./format.ts";
import type { Section, View } from "./view.ts";

/** One nav entry. */
interface NavEntry {
  section: string;
  path: string;
  label: string;
  /** The count beside it, its tone, and the `/stats` field that refreshes it (as the counters'). */
  badge?: (stats: StatsSnapshot) => [count: number, tone: string, stat: string];
}

const NAV: readonly NavEntry[] = [
  { section: "dashboard", path: "/", label: "Dashboard" },
  { section: "busy", path: "/busy", label: "Busy", badge: (s) => [s.workersSize, "ok", "busy"] },
  { section: "queues", path: "/queues", label: "Queues", badge: (s) => [s.enqueued, "", "enqueued"] },
  { section: "retries", path: "/retries", label: "Retries", badge: (s) => [s.retrySize, "warn", "retries"] },
  { section: "scheduled", path: "/scheduled", label: "Scheduled", badge: (s) => [s.scheduledSize, "", "scheduled"] },
  { section: "dead", path: "/dead", label: "Dead", badge: (s) => [s.deadSize, "danger", "dead"] },
];

/** The counters bar, in Sidekiq's order; `data-stat` names the `/stats` field that refreshes it. */
const SUMMARY: ReadonlyArray<[stat: string, label: string, path: string, read: (s: StatsSnapshot) => number]> = [
  ["processed", "Processed", "/", (s) => s.processed],
  ["failed", "Failed", "/", (s) => s.failed],
  ["busy", "Busy", "/busy", (s) => s.workersSize],
  ["enqueued", "Enqueued", "/queues", (s) => s.enqueued],
  ["retries", "Retries", "/retries", (s) => s.retrySize],
  ["scheduled", "Scheduled", "/scheduled", (s) => s.scheduledSize],
  ["dead", "Dead", "/dead", (s) => s.deadSize],
];

/** Props of {@link Layout}. */
export interface LayoutProps {
  view: View;
  /** The nav entry to highlight: a core section, or a feature's. */
  section: Section | (string & Record<never, never>);
  /** The page title (the browser tab reads "<heading> · <title>"). */
  heading: string;
  /** The counters; absent on pages shown before Redis is read (401, 403). */
  stats?: StatsSnapshot;
  /** Load uPlot (the Dashboard's charts). */
  charts?: boolean;
  /** Offer the live poll toggle (list pages); `"paused"` shows it disabled (a filtered list: each poll would scan). */
  live?: boolean | "paused";
  /** A message above the page (an action's outcome). */
  notice?: { text: string; error?: boolean };
  children?: Child;
}

/**
 * The page frame.
 *
 * @example
 * ```tsx
 * <Layout view={view} section="busy" heading="Busy" stats={stats}>...</Layout>
 * ```
 */
export function Layout(props: LayoutProps): Child {
  const { view, stats } = props;
  const href = (path: string) => (path === "/" ? view.base || "/" : view.base + path);
  const entries: NavEntry[] = [...NAV, ...view.nav];
  // Narrow screens fold the nav behind a toggle (a checkbox and its label, so it needs no script) that names
  // the page shown.
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{`${props.heading} · ${view.title}`}</title>
        <link rel="icon" type="image/svg+xml" href={`${view.base}/assets/${ASSETS.icon.file}`} />
        <link rel="stylesheet" href={`${view.base}/assets/${ASSETS.css.file}`} nonce={view.nonce} />
        {props.charts ? <script src={`${view.base}/assets/${ASSETS.uplot.file}`} nonce={view.nonce} defer /> : null}
        <script src={`${view.base}/assets/${ASSETS.js.file}`} nonce={view.nonce} defer />
      </head>
      <body
        data-base={view.base}
        data-page={props.section}
        data-interval={String(view.interval)}
        data-interval-explicit={view.intervalExplicit ? "" : undefined}
      >
        <header class="top">
          <a class="brand" href={href("/")}>
            <i></i>
            {view.title}
          </a>
          <input type="checkbox" id="nav-toggle" class="nav-toggle" aria-label="Show the menu" />
          <label for="nav-toggle" class="nav-button" aria-hidden="true">
            {entries.find((e) => e.section === props.section)?.label ?? "Menu"}
          </label>
          <nav class="nav">
            {entries.map((entry) => {
              const [count, tone, stat] = stats && entry.badge ? entry.badge(stats) : [0, "", undefined];
              return (
                <a href={href(entry.path)} class={entry.section === props.section ? "active" : undefined}>
                  {entry.label}
                  {stat
                    ? (
                      <span
                        class={tone ? `badge ${tone}` : "badge"}
                        data-stat={stat}
                        hidden={count > 0 ? undefined : true}
                      >
                        {formatCount(count)}
                      </span>
                    )
                    : null}
                </a>
              );
            })}
          </nav>
          {props.live
            ? (
              <button
                type="button"
                id="live-toggle"
                class="live"
                aria-pressed="false"
                hidden
                disabled={props.live === "paused"}
                title={props.live === "paused" ? "Live poll pauses while a filter is set" : undefined}
              >
                Live poll
              </button>
            )
            : null}
        </header>
        {stats
          ? (
            <section class="summary" id="summary">
              {SUMMARY.map(([stat, label, path, read]) => (
                <a href={href(path)}>
                  <b data-stat={stat}>{formatCount(read(stats))}</b>
                  <span>{label}</span>
                </a>
              ))}
            </section>
          )
          : null}
        <main id="main">
          {props.notice ? <div class={props.notice.error ? "notice error" : "notice"}>{props.notice.text}</div> : null}
          {props.children}
        </main>
        <footer>
          <span>edgekiq {VERSION}</span>
          {view.redis
            ? (
              <span class="mono" id="redis-endpoint" title="The Redis this dashboard reads">
                {view.redis.endpoint}
                {view.redis.prefix ? ` · prefix ${view.redis.prefix}` : ""}
              </span>
            )
            : null}
          <span title="The dashboard's clock">{absoluteTime(new Date(view.now))}</span>
        </footer>
      </body>
    </html>
  );
}
