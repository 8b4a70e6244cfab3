/**
 * The Retries, Scheduled and Dead pages: a paged list sorted by time, a
 * `substr` filter, selectable rows with bulk actions, and actions on all.
 * A filter scans a bounded part of the set per request: the page says where
 * it stopped and offers to continue from there, and Live Poll pauses while a
 * filter is set (each poll would scan again).
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { SortedEntry } from "../../../api/sorted_entry.ts";
import type { StatsSnapshot } from "../../../api/stats.ts";
import { formatArgs, formatCount, truncate } from "../format.ts";
import { entryKey, entryQuestion, type JobSetKind } from "../job_sets.ts";
import { Layout } from "../layout.tsx";
import { MAX_FILTER_LENGTH } from "../params.ts";
import type { View } from "../view.ts";
import { ConfirmForm, Empty, Pager, pastTheEnd, Time } from "../widgets.tsx";

/** Props of {@link JobSetPage}. */
export interface JobSetProps {
  view: View;
  stats: StatsSnapshot;
  kind: JobSetKind;
  entries: SortedEntry[];
  /** Entries in the set, or matching the filter. */
  total: number;
  /** Whether a filter stopped at its cap before scanning everything. */
  capped: boolean;
  /**
   * Where a filtered search started (`"0"`: the beginning), where it stopped
   * (`"0"`: it scanned to the end) and about how many entries it looked at.
   */
  search?: { from: string; next: string; examined: number };
  substr: string;
  order: "asc" | "desc";
  page: number;
  count: number;
  token: string;
  notice?: { text: string; error?: boolean };
}

/**
 * The page.
 *
 * @example
 * ```tsx
 * <JobSetPage kind={JOB_SETS.retries} entries={entries} total={12} ... />
 * ```
 */
export function JobSetPage(props: JobSetProps): Child {
  const { view, kind, entries, substr } = props;
  const search = props.search ?? { from: "0", next: "0", examined: 0 };
  const path = `${view.base}/${kind.section}`;
  const query = (page: number, order = props.order, scan = search.from) => {
    const q = new URLSearchParams();
    if (substr) q.set("substr", substr);
    if (substr && scan !== "0") q.set("scan", scan);
    if (order !== kind.order) q.set("order", order);
    if (page > 1) q.set("page", String(page));
    if (props.count !== 25) q.set("count", String(props.count));
    const s = q.toString();
    return s ? `${path}?${s}` : path;
  };
  const size = kind.section === "retries"
    ? props.stats.retrySize
    : kind.section === "scheduled"
    ? props.stats.scheduledSize
    : props.stats.deadSize;
  return (
    <Layout
      view={view}
      section={kind.section}
      heading={kind.title}
      stats={props.stats}
      notice={props.notice}
      live={substr ? "paused" : true}
    >
      <div class="head">
        <h1>
          {kind.title}
          <span class="badge">{formatCount(size)}</span>
        </h1>
        <form method="get" action={path} class="actions">
          <input
            type="search"
            name="substr"
            value={substr}
            maxlength={MAX_FILTER_LENGTH}
            placeholder="Filter: class, jid, arguments, error"
            aria-label="Filter"
          />
          <button type="submit">Filter</button>
          {substr ? <a class="btn" href={path}>Clear</a> : null}
        </form>
      </div>
      <div class="panel flush">
        <form method="post" action={path}>
          <input type="hidden" name="confirm" value="" />
          <div class="bar">
            <div class="actions">
              {kind.entryActions.map((a) => (
                <button
                  type="submit"
                  name="action"
                  value={a.action}
                  class={a.danger ? "danger" : undefined}
                  data-confirm={entryQuestion(kind, a.action, 1)}
                  data-confirm-many={entryQuestion(kind, a.action, "{n}")}
                >
                  {a.label}
                </button>
              ))}
              <span class="muted small">selected</span>
            </div>
            <span class="muted small">
              {substr
                ? `${formatCount(props.total)}${props.capped ? "+" : ""} matching “${truncate(substr, 60)}”`
                : null}
            </span>
          </div>
          {entries.length === 0
            ? (
              <Empty
                title={substr
                  ? `No ${kind.nouns} match “${truncate(substr, 60)}”`
                  : props.page > 1
                  ? `Page ${formatCount(props.page)} is past the end`
                  : `No ${kind.nouns}`}
                detail={substr
                  ? "The filter matches any part of the job's JSON, ignoring case."
                  : props.page > 1
                  ? pastTheEnd(props.total, props.count, kind.noun, kind.nouns)
                  : kind.empty}
              />
            )
            : (
              <table>
                <thead>
                  <tr>
                    <th class="check">
                      <input type="checkbox" data-select-all aria-label="Select all on this page" />
                    </th>
                    <th>
                      <a href={query(1, props.order === "asc" ? "desc" : "asc")}>
                        {kind.timeLabel} {props.order === "asc" ? "↑" : "↓"}
                      </a>
                    </th>
                    <th>Queue</th>
                    <th>Job</th>
                    <th>Arguments</th>
                    {kind.errors ? <th>Error</th> : null}
                    {kind.section === "retries" ? <th class="num">Retries</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {entries.map((e) => {
                    const key = e.jid ? entryKey(e.score, e.jid) : undefined;
                    return (
                      <tr>
                        <td class="check">
                          {key ? <input type="checkbox" name="key" value={key} aria-label="Select" /> : null}
                        </td>
                        <td>
                          {key
                            ? (
                              <a href={`${path}/${encodeURIComponent(key)}`}>
                                <Time at={e.at} now={view.now} />
                              </a>
                            )
                            : <Time at={e.at} now={view.now} />}
                        </td>
                        <td>
                          {e.queue
                            ? <a href={`${view.base}/queues/${encodeURIComponent(e.queue)}`}>{e.queue}</a>
                            : null}
                        </td>
                        <td>
                          {key
                            ? <a href={`${path}/${encodeURIComponent(key)}`}>{e.klass ?? "(unknown)"}</a>
                            : <span class="error">unreadable payload</span>}
                        </td>
                        <td class="args mono">{formatArgs(e.args)}</td>
                        {kind.errors
                          ? (
                            <td class="args">
                              {e.errorClass ? <b>{e.errorClass}</b> : null}
                              {e.errorMessage ? <div class="small">{truncate(e.errorMessage, 200)}</div> : null}
                            </td>
                          )
                          : null}
                        {kind.section === "retries"
                          ? <td class="num" data-label="Retries">{formatCount(e.retryCount ?? 0)}</td>
                          : null}
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )}
        </form>
        <Pager page={props.page} count={props.count} total={props.total} href={(p) => query(p)} />
      </div>
      {substr && (search.next !== "0" || search.from !== "0")
        ? (
          <div class="actions">
            <span class="muted small">
              {search.from !== "0" ? "Continued from where the last search stopped. " : ""}
              {search.next !== "0"
                ? `The search stopped after about ${formatCount(search.examined)} of ${
                  formatCount(size)
                } entries; more may match.`
                : "The search reached the end of the set."}
            </span>
            {search.next !== "0" ? <a class="btn" href={query(1, props.order, search.next)}>Continue search</a> : null}
          </div>
        )
        : null}
      {size > 0
        ? (
          <div class="actions">
            <span class="muted small">Everything in {kind.title}:</span>
            <ConfirmForm action={`${path}/all`} token={props.token} buttons={kind.allActions(size)} />
          </div>
        )
        : null}
    </Layout>
  );
}
