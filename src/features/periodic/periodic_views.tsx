/**
 * The Periodic page: every cron schedule the running apps declare, with its
 * timing, time zone, next and last run, last jid and state (a schedule that
 * cannot be enqueued is shown as broken, with the reason), and Pause,
 * Resume and Enqueue now as plain POST forms; and one schedule's page with
 * its job, arguments, missed-tick policy and owners.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { PeriodicEntry } from "./periodic_set.ts";
import type { StatsSnapshot } from "../../api/stats.ts";
import { formatArgs, formatCount, formatDuration, prettyJson } from "../../web/dashboard/format.ts";
import { Layout } from "../../web/dashboard/layout.tsx";
import { findHref } from "../../web/dashboard/pages/find.tsx";
import { newToken } from "../../web/dashboard/token.ts";
import type { View } from "../../web/dashboard/view.ts";
import { Empty, Time } from "../../web/dashboard/widgets.tsx";

/**
 * The link to one schedule.
 *
 * @example
 * ```ts
 * periodicHref("/jobs", "hourly-report"); // "/jobs/periodic/hourly-report"
 * ```
 */
export function periodicHref(base: string, name: string): string {
  return `${base}/periodic/${encodeURIComponent(name)}`;
}

function timing(e: PeriodicEntry): string {
  if (e.cron !== null) return e.cron;
  const every = e.every ?? 0;
  const units: Array<[size: number, name: string]> = [[86_400, "d"], [3_600, "h"], [60, "m"]];
  const unit = units.find(([size]) => every % size === 0);
  return `every ${unit ? `${every / unit[0]}${unit[1]}` : formatDuration(every)}`; // "every 15m", "every 90s" as "1m 30s"
}

function zone(e: PeriodicEntry): string {
  return e.cron === null ? "–" : e.tz ?? "UTC";
}

function State(props: { entry: PeriodicEntry }): Child {
  const { entry } = props;
  if (entry.broken !== null) return <span class="status error" title={entry.broken}>broken</span>;
  return entry.enabled ? <span class="status ok">enabled</span> : <span class="status quiet">paused</span>;
}

/**
 * Pause or Resume, and Enqueue now, for one schedule. Enqueue now carries a
 * one-time token: a replayed form or a double click enqueues once.
 */
function Actions(props: { view: View; entry: PeriodicEntry; from?: "detail" }): Child {
  const { entry } = props;
  return (
    <form method="post" action={periodicHref(props.view.base, entry.name)} class="inline actions tight">
      <input type="hidden" name="token" value={newToken()} />
      {props.from ? <input type="hidden" name="from" value={props.from} /> : null}
      {entry.enabled
        ? <button type="submit" name="action" value="pause">Pause</button>
        : <button type="submit" name="action" value="resume">Resume</button>}
      <button type="submit" name="action" value="enqueue">Enqueue now</button>
    </form>
  );
}

/** Props of {@link PeriodicPage}. */
export interface PeriodicProps {
  view: View;
  stats: StatsSnapshot;
  entries: readonly PeriodicEntry[];
  notice?: { text: string; error?: boolean };
}

/**
 * The list.
 *
 * @example
 * ```tsx
 * <PeriodicPage view={view} stats={stats} entries={await new PeriodicSet(client).list()} />
 * ```
 */
export function PeriodicPage(props: PeriodicProps): Child {
  const { view, entries } = props;
  const paused = entries.filter((e) => !e.enabled).length;
  const broken = entries.filter((e) => e.broken !== null).length;
  return (
    <Layout view={view} section="periodic" heading="Periodic" stats={props.stats} notice={props.notice} live>
      <div class="head">
        <h1>
          Periodic
          <span class="badge">{formatCount(entries.length)}</span>
          {paused > 0 ? <span class="status quiet">{`${formatCount(paused)} paused`}</span> : null}
          {broken > 0 ? <span class="status error">{`${formatCount(broken)} broken`}</span> : null}
        </h1>
      </div>
      <div class="panel flush">
        {entries.length === 0
          ? (
            <Empty
              title="No periodic schedules"
              detail={"No running app declares a cron schedule. Declare them in code (`periodic: [...]` on " +
                "createWorker, pollOnce or the cron routes); they appear here once a process or a cron call has " +
                "registered them, and leave when no app declaring them has run for a while."}
            />
          )
          : (
            <table>
              <thead>
                <tr>
                  <th>Schedule</th>
                  <th>Timing</th>
                  <th>Time zone</th>
                  <th>Next run</th>
                  <th>Last run</th>
                  <th>Last jid</th>
                  <th>State</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr>
                    <td>
                      <a href={periodicHref(view.base, e.name)}>{e.name}</a>
                      <div class="muted small">
                        <span class="mono">{e.job}</span> on <span class="mono">{e.queue}</span>
                        {e.args.length > 0 ? ` · ${formatArgs(e.args, 80)}` : ""}
                      </div>
                    </td>
                    <td class="mono nowrap">{timing(e)}</td>
                    <td class="nowrap">{zone(e)}</td>
                    <td>{e.enabled ? <Time at={e.next} now={view.now} /> : <span class="muted">paused</span>}</td>
                    <td>
                      <Time at={e.lastEnqueuedAt} now={view.now} />
                    </td>
                    <td class="mono small">
                      {e.lastJid ? <a href={findHref(view.base, e.lastJid, e.queue)}>{e.lastJid}</a> : "–"}
                    </td>
                    <td>
                      <State entry={e} />
                    </td>
                    <td>
                      <Actions view={view} entry={e} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </div>
      <p class="legend-note">
        Each tick is enqueued once by whichever process or cron call claims it first. Pause survives deploys; Resume
        runs again from the next tick (ticks passed while paused are not run); Enqueue now adds one run and leaves the
        timing alone.
      </p>
    </Layout>
  );
}

function Row(props: { label: string; children?: Child }): Child {
  return (
    <tr>
      <th>{props.label}</th>
      <td>{props.children}</td>
    </tr>
  );
}

/** Props of {@link PeriodicEntryPage}. */
export interface PeriodicEntryProps {
  view: View;
  stats: StatsSnapshot;
  entry: PeriodicEntry;
  notice?: { text: string; error?: boolean };
}

/**
 * One schedule.
 *
 * @example
 * ```tsx
 * <PeriodicEntryPage view={view} stats={stats} entry={entry} />
 * ```
 */
export function PeriodicEntryPage(props: PeriodicEntryProps): Child {
  const { view, entry: e } = props;
  return (
    <Layout view={view} section="periodic" heading={`${e.name} · Periodic`} stats={props.stats} notice={props.notice}>
      <div class="head">
        <h1>
          <a href={`${view.base}/periodic`}>Periodic</a> / <span>{e.name}</span>
        </h1>
        <Actions view={view} entry={e} from="detail" />
      </div>
      <div class="panel flush">
        <table class="kv">
          <tbody>
            <Row label="Job class">
              <span class="mono">{e.job}</span>
            </Row>
            <Row label="Queue">
              <a href={`${view.base}/queues/${encodeURIComponent(e.queue)}`}>{e.queue}</a>
            </Row>
            <Row label="Timing">
              <span class="mono">{timing(e)}</span>
            </Row>
            <Row label="Time zone">{zone(e)}</Row>
            <Row label="Missed ticks">
              {e.missed === "skip" ? "skip (run once, now)" : `catch up (at most ${e.missed.catchUp})`}
            </Row>
            <Row label="State">
              <State entry={e} />
            </Row>
            {e.broken !== null
              ? (
                <Row label="Problem">
                  <span class="error">{e.broken}</span>
                </Row>
              )
              : null}
            <Row label="Next run">{e.enabled ? <Time at={e.next} now={view.now} /> : "paused"}</Row>
            <Row label="Last tick">
              <Time at={e.lastRun} now={view.now} />
            </Row>
            <Row label="Last enqueued">
              <Time at={e.lastEnqueuedAt} now={view.now} />
            </Row>
            <Row label="Last jid">
              {e.lastJid ? <a class="mono" href={findHref(view.base, e.lastJid, e.queue)}>{e.lastJid}</a> : "–"}
            </Row>
            <Row label="Declared by">
              {e.owners.length > 0 ? e.owners.join(", ") : "no live owner (it will be dropped)"}
            </Row>
          </tbody>
        </table>
      </div>
      <div class="panel">
        <h2>Arguments</h2>
        <pre>{prettyJson(e.args)}</pre>
      </div>
    </Layout>
  );
}
