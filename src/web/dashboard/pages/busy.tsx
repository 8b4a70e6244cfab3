/**
 * The Busy page: every live process (edgekiq's and Ruby Sidekiq's) with
 * Quiet and Stop, and every running job.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { StatsSnapshot } from "../../../api/stats.ts";
import type { Process } from "../../../api/sidekiq_process.ts";
import type { Work } from "../../../api/workers.ts";
import { formatArgs, formatCount, formatKib } from "../format.ts";
import { Layout } from "../layout.tsx";
import type { View } from "../view.ts";
import { ConfirmForm, Empty, Time } from "../widgets.tsx";
import type { WorkAction } from "../dashboard_feature.ts";

/** Props of {@link BusyPage}. */
export interface BusyProps {
  view: View;
  stats: StatsSnapshot;
  processes: Process[];
  work: Work[];
  token: string;
  notice?: { text: string; error?: boolean };
  /** Features' buttons on each running job's row (Cancel). */
  actions?: readonly WorkAction[];
  /**
   * A Quiet or Stop this browser just sent (to `target`, or to every process
   * listed): shown as requested until a heartbeat confirms it.
   */
  pending?: { action: "quiet" | "stop"; target?: string };
}

/** A process's capsules (Sidekiq 7+, edgekiq) as "name: concurrency", else its queues. */
function capsules(p: Process): string[] {
  const caps = p.info.capsules;
  if (caps && typeof caps === "object" && !Array.isArray(caps)) {
    return Object.entries(caps as Record<string, unknown>).map(([name, c]) => {
      const n = (c as { concurrency?: unknown } | null)?.concurrency;
      return typeof n === "number" ? `${name}: ${n}` : name;
    });
  }
  return [];
}

/** One running job's buttons (features' work actions), one form each: every form names its own route. */
function jobActions(base: string, token: string, actions: readonly WorkAction[], w: Work): Child {
  const jid = w.payload.jid;
  if (!jid) return null;
  const job = { jid, className: w.payload.klass ?? "(unknown)" };
  return actions.map((a) => (
    <ConfirmForm
      action={base + a.path}
      token={token}
      fields={{ jid }}
      buttons={[{ value: a.value, label: a.label, confirm: a.confirm(job), danger: a.danger }]}
    />
  ));
}

/**
 * A job's latest `ctx.progress()` value as one short line (JSX escapes it):
 * a number or text as it is, anything else as JSON, cut to 100 characters;
 * "–" when it reported none.
 */
function formatProgress(progress: unknown): string {
  if (progress === undefined || progress === null) return "–";
  const text = typeof progress === "string" ? progress : JSON.stringify(progress);
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

/** The Quiet or Stop sent to `p` and not yet confirmed by its heartbeat, if any. */
function pendingFor(p: Process, pending: BusyProps["pending"]): "quiet" | "stop" | undefined {
  if (!pending || (pending.target ?? p.identity) !== p.identity) return undefined;
  // The process reads its signal at its next beat and reports quiet at the one after; a stopped one leaves the list.
  return pending.action === "stop" || !p.isQuiet ? pending.action : undefined;
}

/** A "quiet requested" or "stop requested" mark. */
function Pending(props: { process: Process; pending: BusyProps["pending"] }): Child {
  const pending = pendingFor(props.process, props.pending);
  if (!pending) return null;
  return (
    <span class="status pending" title="Sent; waiting for the process's next heartbeat to confirm it">
      {pending === "quiet" ? "quiet requested" : "stop requested"}
    </span>
  );
}

/**
 * The page.
 *
 * @example
 * ```tsx
 * <BusyPage view={view} stats={stats} processes={processes} work={work} token={newToken()} />
 * ```
 */
export function BusyPage(props: BusyProps): Child {
  const { view, processes, work } = props;
  const actions = props.actions ?? [];
  const threads = processes.reduce((n, p) => n + p.concurrency, 0);
  const busy = processes.reduce((n, p) => n + p.busy, 0);
  const rss = processes.reduce((n, p) => n + p.rss, 0);
  const action = `${view.base}/busy`;
  const controllable = processes.filter((p) => !p.embedded);
  return (
    <Layout view={view} section="busy" heading="Busy" stats={props.stats} notice={props.notice} live>
      <div class="cards">
        <div class="card">
          <span>Processes</span>
          <b>{formatCount(processes.length)}</b>
        </div>
        <div class="card">
          <span>Concurrency</span>
          <b>{formatCount(threads)}</b>
        </div>
        <div class="card">
          <span>Busy</span>
          <b>{formatCount(busy)}</b>
        </div>
        <div class="card">
          <span>Utilization</span>
          <b>{threads > 0 ? `${Math.round((busy / threads) * 100)}%` : "0%"}</b>
        </div>
        <div class="card">
          <span>Memory (RSS)</span>
          <b>{formatKib(rss)}</b>
        </div>
      </div>
      <div class="panel flush">
        <div class="bar">
          <h2>Processes</h2>
          {controllable.length > 0
            ? (
              <ConfirmForm
                action={action}
                token={props.token}
                fields={{ scope: "all", asof: String(view.now) }}
                buttons={[
                  {
                    value: "quiet",
                    label: "Quiet all",
                    confirm: `Quiet all ${controllable.length} processes? They finish their jobs and take no more.`,
                  },
                  {
                    value: "stop",
                    label: "Stop all",
                    confirm: `Stop all ${controllable.length} processes?`,
                    danger: true,
                  },
                ]}
              />
            )
            : null}
        </div>
        {processes.length === 0
          ? <Empty title="No processes" detail="No worker has sent a heartbeat in the last minute." />
          : (
            <table>
              <thead>
                <tr>
                  <th>Process</th>
                  <th>Started</th>
                  <th class="num">Concurrency</th>
                  <th class="num">Busy</th>
                  <th class="num">RSS</th>
                  <th>Last beat</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                {processes.map((p) => (
                  <tr>
                    <td>
                      <b>{`${p.hostname ?? "?"}:${p.pid ?? "?"}`}</b> {p.tag ? <span class="tag">{p.tag}</span> : null}
                      {p.labels.map((l, i) => <span key={i} class="tag">{l}</span>)}
                      {p.isQuiet ? <span class="status quiet">quiet</span> : null}
                      <Pending process={p} pending={props.pending} />
                      <div class="muted small mono">{p.identity}</div>
                      <div class="muted small">
                        {[...capsules(p), `queues: ${p.queues.join(", ") || "–"}`].join(" · ")}
                        {p.version ? ` · v${p.version}` : ""}
                      </div>
                    </td>
                    <td data-label="Started">
                      <Time at={p.startedAt} now={view.now} />
                    </td>
                    <td class="num" data-label="Concurrency">{formatCount(p.concurrency)}</td>
                    <td class="num" data-label="Busy">{formatCount(p.busy)}</td>
                    <td class="num nowrap" data-label="RSS">{formatKib(p.rss)}</td>
                    <td data-label="Last beat">
                      <Time at={p.beat} now={view.now} />
                    </td>
                    <td>
                      {p.embedded
                        ? <span class="muted small">embedded</span>
                        : (
                          <form method="post" action={action} class="inline actions">
                            <input type="hidden" name="identity" value={p.identity} />
                            {p.isQuiet || pendingFor(p, props.pending)
                              ? null
                              : <button type="submit" name="action" value="quiet">Quiet</button>}
                            <button type="submit" name="action" value="stop" class="danger">Stop</button>
                          </form>
                        )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </div>
      <div class="panel flush">
        <div class="bar">
          <h2>Jobs running</h2>
          <span class="muted">{formatCount(work.length)}</span>
        </div>
        {work.length === 0 ? <Empty title="Nothing running" detail="Every process is idle." /> : (
          <table>
            <thead>
              <tr>
                <th>Process</th>
                <th>Queue</th>
                <th>Job</th>
                <th>Arguments</th>
                <th>Progress</th>
                <th>Started</th>
                {actions.length ? <th></th> : null}
              </tr>
            </thead>
            <tbody>
              {work.map((w) => (
                <tr>
                  <td>
                    <span class="mono small">{w.process}</span>
                    <div class="muted small">{w.slot}</div>
                  </td>
                  <td>
                    <a href={`${view.base}/queues/${encodeURIComponent(w.queue)}`}>{w.queue}</a>
                  </td>
                  <td>
                    <b>{w.payload.klass ?? "(unknown)"}</b>{" "}
                    {w.stopping !== undefined ? <span class="status quiet" title={w.stopping}>stopping</span> : null}
                    <div class="muted small mono">{w.payload.jid ?? ""}</div>
                  </td>
                  <td class="args mono">{formatArgs(w.payload.args)}</td>
                  <td class="mono small">{formatProgress(w.progress)}</td>
                  <td>
                    <Time at={w.runAt} now={view.now} />
                  </td>
                  {actions.length ? <td class="num">{jobActions(view.base, props.token, actions, w)}</td> : null}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </Layout>
  );
}
