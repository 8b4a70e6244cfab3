/**
 * One retry, scheduled or dead job: its fields, the error with the decoded
 * backtrace, the full payload, and the actions on it.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { SortedEntry } from "../../../api/sorted_entry.ts";
import type { StatsSnapshot } from "../../../api/stats.ts";
import { formatCount, prettyJson } from "../format.ts";
import { entryKey, entryQuestion, type JobSetKind } from "../job_sets.ts";
import { Layout } from "../layout.tsx";
import type { View } from "../view.ts";
import { Time } from "../widgets.tsx";

/** Props of {@link JobPage}. */
export interface JobProps {
  view: View;
  stats: StatsSnapshot;
  kind: JobSetKind;
  entry: SortedEntry;
  /** The decoded backtrace, or why it could not be shown. */
  backtrace: { lines: string[] } | { error: string } | null;
  /** Features' sections for this job (a batch's, a flow's), shown below its fields. */
  sections?: Child[];
}

/**
 * The page.
 *
 * @example
 * ```tsx
 * <JobPage view={view} stats={stats} kind={JOB_SETS.dead} entry={entry} backtrace={{ lines }} />
 * ```
 */
export function JobPage(props: JobProps): Child {
  const { view, kind, entry } = props;
  const klass = entry.klass ?? "(unknown)";
  const action = `${view.base}/${kind.section}/${encodeURIComponent(entryKey(entry.score, entry.jid ?? ""))}`;
  const tags = entry.tags;
  return (
    <Layout view={view} section={kind.section} heading={`${klass} · ${kind.title}`} stats={props.stats}>
      <div class="head">
        <h1>
          <a href={`${view.base}/${kind.section}`}>{kind.title}</a>
          <span class="muted">/</span>
          <span>{klass}</span>
        </h1>
        <form method="post" action={action} class="actions">
          <input type="hidden" name="confirm" value="" />
          {kind.entryActions.map((a) => (
            <button
              type="submit"
              name="action"
              value={a.action}
              class={a.danger ? "danger" : "primary"}
              data-confirm={entryQuestion(kind, a.action, 1)}
            >
              {a.label}
            </button>
          ))}
        </form>
      </div>
      {entry.errorClass || entry.errorMessage
        ? (
          <div class="panel">
            <h2 class="error">{entry.errorClass ?? "Error"}</h2>
            <pre>{entry.errorMessage ?? ""}</pre>
          </div>
        )
        : null}
      <div class="panel flush">
        <table class="kv">
          <tbody>
            <tr>
              <th>Queue</th>
              <td>
                {entry.queue
                  ? <a href={`${view.base}/queues/${encodeURIComponent(entry.queue)}`}>{entry.queue}</a>
                  : "–"}
              </td>
            </tr>
            <tr>
              <th>Job</th>
              <td class="mono">{klass}</td>
            </tr>
            <tr>
              <th>Arguments</th>
              <td>
                <pre>{prettyJson(entry.args)}</pre>
              </td>
            </tr>
            <tr>
              <th>JID</th>
              <td class="mono">{entry.jid ?? "–"}</td>
            </tr>
            {tags.length > 0
              ? (
                <tr>
                  <th>Tags</th>
                  <td>{tags.map((t, i) => <span key={i} class="tag">{t}</span>)}</td>
                </tr>
              )
              : null}
            <tr>
              <th>{kind.timeLabel}</th>
              <td>
                <Time at={entry.at} now={view.now} />
              </td>
            </tr>
            <tr>
              <th>Created</th>
              <td>
                <Time at={entry.createdAt} now={view.now} />
              </td>
            </tr>
            <tr>
              <th>Enqueued</th>
              <td>
                <Time at={entry.enqueuedAt} now={view.now} />
              </td>
            </tr>
            {kind.errors
              ? (
                <>
                  <tr>
                    <th>Retry count</th>
                    <td>{formatCount(entry.retryCount ?? 0)}</td>
                  </tr>
                  <tr>
                    <th>First failed</th>
                    <td>
                      <Time at={entry.failedAt} now={view.now} />
                    </td>
                  </tr>
                  <tr>
                    <th>Last retried</th>
                    <td>
                      <Time at={entry.retriedAt} now={view.now} />
                    </td>
                  </tr>
                </>
              )
              : null}
          </tbody>
        </table>
      </div>
      {props.sections ?? null}
      {props.backtrace
        ? (
          <div class="panel">
            <h2>Backtrace</h2>
            {"lines" in props.backtrace
              ? <pre>{props.backtrace.lines.join("\n")}</pre>
              : <p class="muted">{props.backtrace.error}</p>}
          </div>
        )
        : null}
      <div class="panel">
        <h2>Payload</h2>
        {entry.item && entry.item.error_backtrace !== undefined && props.backtrace && "lines" in props.backtrace
          ? (
            <>
              <pre>{prettyJson({ ...entry.item, error_backtrace: undefined })}</pre>
              <p class="legend-note">
                Its <span class="mono">error_backtrace</span>
                {typeof entry.item.error_backtrace === "string"
                  ? ` (${formatCount(entry.item.error_backtrace.length)} characters, compressed)`
                  : ""} is shown above, decoded.
              </p>
              <details>
                <summary>The raw payload, as stored</summary>
                <pre>{entry.value}</pre>
              </details>
            </>
          )
          : <pre>{entry.item ? prettyJson(entry.item) : entry.value}</pre>}
      </div>
    </Layout>
  );
}
