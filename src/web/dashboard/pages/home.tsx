/**
 * The Dashboard page: the counters, a live chart of jobs processed and
 * failed per second (the script polls `/stats` and averages over 20 s, so
 * the heartbeats' steps do not show as spikes), the daily history for 7 to
 * 180 days, and facts about Redis.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { StatsHistory, StatsSnapshot } from "../../../api/stats.ts";
import { formatCount, formatDuration, formatLatency } from "../format.ts";
import { Layout } from "../layout.tsx";
import { HISTORY_DAYS, LIVE_INTERVAL } from "../params.ts";
import type { PrimaryFacts, RedisFacts } from "../redis_info.ts";
import type { View } from "../view.ts";

/** Props of {@link HomePage}. */
export interface HomeProps {
  view: View;
  stats: StatsSnapshot;
  history: StatsHistory;
  days: number;
  redis: RedisFacts | null;
}

const RANGES: Record<number, string> = { 7: "1 week", 30: "1 month", 90: "3 months", 180: "6 months" };

/** The counters as cards; `data-stat` names the `/stats` field that refreshes each. */
function cards(s: StatsSnapshot): Array<[stat: string, label: string, value: string, path: string, danger?: boolean]> {
  return [
    ["processed", "Processed", formatCount(s.processed), "/"],
    ["failed", "Failed", formatCount(s.failed), "/", s.failed > 0],
    ["busy", "Busy", formatCount(s.workersSize), "/busy"],
    ["enqueued", "Enqueued", formatCount(s.enqueued), "/queues"],
    ["retries", "Retries", formatCount(s.retrySize), "/retries"],
    ["scheduled", "Scheduled", formatCount(s.scheduledSize), "/scheduled"],
    ["dead", "Dead", formatCount(s.deadSize), "/dead", s.deadSize > 0],
    ["processes", "Processes", formatCount(s.processesSize), "/busy"],
    ["default_latency", "Latency (s)", formatLatency(s.defaultQueueLatency), "/queues"],
  ];
}

/**
 * The page.
 *
 * @example
 * ```tsx
 * <HomePage view={view} stats={stats} history={history} days={30} redis={facts} />
 * ```
 */
export function HomePage(props: HomeProps): Child {
  const { view, stats, history, days } = props;
  const dates = Object.keys(history.processed).sort(); // oldest first
  const series = {
    days: dates,
    processed: dates.map((d) => history.processed[d]),
    failed: dates.map((d) => history.failed[d]),
  };
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const r = props.redis;
  const href = (path: string) => (path === "/" ? view.base || "/" : view.base + path);
  return (
    <Layout view={view} section="dashboard" heading="Dashboard" stats={stats} charts>
      <div class="cards">
        {cards(stats).map(([stat, label, value, path, danger]) => (
          <a class={danger ? "card danger" : "card"} href={href(path)}>
            <span>{label}</span>
            <b data-stat={stat}>{value}</b>
          </a>
        ))}
      </div>
      <div class="panel">
        <div class="head">
          <h2>Live</h2>
          <div class="actions">
            <button type="button" id="live-zone" class="small" hidden>Show local time</button>
            <label class="actions small muted" hidden>
              Poll every
              <select id="interval" name="interval">
                {[2, 5, 10, 20].map((s) => (
                  <option key={s} value={String(s)} selected={s === view.interval}>{`${s} s`}</option>
                ))}
              </select>
            </label>
          </div>
        </div>
        <div class="chart" id="live-chart" data-points="0" data-processed="0">
          <noscript>
            <div class="nojs">
              The live chart needs JavaScript. The counters above are current as of this page load.
            </div>
          </noscript>
        </div>
        <p class="legend-note" id="live-status" aria-live="polite"></p>
        <p class="legend-note">
          Jobs processed and failed per second, each point averaged over the 20 s before it, polled every{" "}
          {LIVE_INTERVAL.min}–{LIVE_INTERVAL.max}{" "}
          s while this tab is visible. Workers add their counts with each heartbeat (every 10 s by default), so a
          shorter average would swing between nothing and double. Times are UTC unless you pick local time.
        </p>
      </div>
      <div class="grid2">
        <div class="panel">
          <div class="head">
            <h2>History</h2>
            <nav class="ranges">
              {HISTORY_DAYS.map((d) => (
                <a href={`${view.base}/?days=${d}`} class={d === days ? "active" : undefined}>{RANGES[d]}</a>
              ))}
            </nav>
          </div>
          <div class="chart" id="history-chart" data-history={JSON.stringify(series)}>
            <noscript>
              <div class="nojs">The history chart needs JavaScript.</div>
            </noscript>
          </div>
          <p class="legend-note">
            Last {formatCount(days)} days (UTC): {formatCount(sum(series.processed))} processed,{" "}
            {formatCount(sum(series.failed))} failed.
          </p>
        </div>
        <div class="panel flush">
          <table class="kv">
            <tbody>
              <tr>
                <th>Redis version</th>
                <td>{r?.version ?? "unknown"}</td>
              </tr>
              <tr>
                <th>Uptime</th>
                <td>{r?.uptimeSeconds !== undefined ? formatDuration(r.uptimeSeconds) : "unknown"}</td>
              </tr>
              <tr>
                <th>Connections</th>
                <td>{r?.clients !== undefined ? formatCount(r.clients) : "unknown"}</td>
              </tr>
              <tr>
                <th>Memory used</th>
                <td>{r?.memory ?? "unknown"}</td>
              </tr>
              <tr>
                <th>Peak memory</th>
                <td>{r?.peakMemory ?? "unknown"}</td>
              </tr>
              <tr>
                <th>Eviction policy</th>
                <td>
                  {r?.maxmemoryPolicy ?? "unknown"}
                  {r?.maxmemoryPolicy && r.maxmemoryPolicy !== "noeviction"
                    ? <div class="error small">Jobs can be evicted: set maxmemory-policy to noeviction.</div>
                    : null}
                </td>
              </tr>
            </tbody>
          </table>
        </div>
      </div>
      {r?.primaries ? <Primaries primaries={r.primaries} /> : null}
    </Layout>
  );
}

/** A Redis Cluster's primaries, one row each: where one fills up or is down shows here, not in the sums above. */
function Primaries(props: { primaries: readonly PrimaryFacts[] }) {
  return (
    <div class="panel flush" id="primaries">
      <div class="bar">
        <h2>Redis primaries</h2>
      </div>
      <table>
        <thead>
          <tr>
            <th>Primary</th>
            <th class="num">Memory used</th>
            <th class="num">Connections</th>
            <th class="num">Ops/s</th>
            <th>Eviction policy</th>
          </tr>
        </thead>
        <tbody>
          {props.primaries.map((p) => (
            <tr>
              <td>
                <code>{p.node}</code>
                {p.up ? null : <div class="error small">not answering</div>}
              </td>
              <td class="num" data-label="Memory used">{p.memory ?? "unknown"}</td>
              <td class="num" data-label="Connections">
                {p.clients !== undefined ? formatCount(p.clients) : "unknown"}
              </td>
              <td class="num" data-label="Ops/s">{p.opsPerSec !== undefined ? formatCount(p.opsPerSec) : "unknown"}</td>
              <td data-label="Eviction policy">{p.maxmemoryPolicy ?? "unknown"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
