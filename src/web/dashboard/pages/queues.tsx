/**
 * The Queues page (every queue with its size, latency and oldest job's
 * enqueue time, whether it is paused, and Pause/Resume and Clear) and a
 * queue's own page (its jobs, newest or oldest first with their position in
 * line, paged by LRANGE of one page, each deletable after a confirmation
 * and with its JSON one click away: a
 * `<details>`, no script needed).
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { JobRecord } from "../../../api/job_record.ts";
import type { StatsSnapshot } from "../../../api/stats.ts";
import { absoluteTime, formatArgs, formatCount, formatLatency, prettyJson } from "../format.ts";
import { Layout } from "../layout.tsx";
import type { QueueRow } from "../../../api/snapshot.ts";
import type { View } from "../view.ts";
import { type ConfirmButton, ConfirmForm, Empty, Pager, pastTheEnd, Time } from "../widgets.tsx";

/** A queue's page URL. */
export function queueHref(base: string, name: string): string {
  return `${base}/queues/${encodeURIComponent(name)}`;
}

/** What a queue's button does. */
export type QueueAction = "pause" | "resume" | "clear";

/**
 * The question a queue's button asks first (the browser's dialog, or the
 * confirmation page without JavaScript).
 *
 * @example
 * ```ts
 * queueQuestion("pause", "mailers", 3); // 'Pause queue "mailers"? No edgekiq process takes its 3 jobs ...'
 * ```
 */
export function queueQuestion(action: QueueAction, name: string, size: number): string {
  const jobs = `${formatCount(size)} job${size === 1 ? "" : "s"}`;
  // Sidekiq's wording, with the count.
  if (action === "clear") {
    return `Are you sure you want to delete the "${name}" queue and its ${jobs}? It reappears when a job is pushed to it.`;
  }
  if (action === "resume") {
    return `Resume queue "${name}"? Every edgekiq process takes its ${jobs} again at its next fetch.`;
  }
  return `Pause queue "${name}"? No edgekiq process takes its ${jobs} (or any pushed later) until it is resumed; ` +
    "jobs already running finish. Ruby Sidekiq processes do not know of it.";
}

/**
 * The buttons of one queue: Pause or Resume (whichever applies), then
 * Clear, each asking first and carrying a one-time token.
 */
function queueButtons(name: string, size: number, paused: boolean, clearLabel: string): ConfirmButton[] {
  const toggle: QueueAction = paused ? "resume" : "pause";
  return [
    { value: toggle, label: paused ? "Resume" : "Pause", confirm: queueQuestion(toggle, name, size) },
    { value: "clear", label: clearLabel, confirm: queueQuestion("clear", name, size), danger: true },
  ];
}

/** The badge of a paused queue. */
function PausedBadge(props: { paused: boolean }): Child {
  if (!props.paused) return null;
  return (
    <>
      {" "}
      <span class="status quiet" title="No edgekiq process takes its jobs">paused</span>
    </>
  );
}

/**
 * What a queued job's Delete asks first.
 *
 * @example
 * ```ts
 * deleteJobQuestion(job); // "Are you sure you want to delete this ChargeCard job?"
 * ```
 */
export function deleteJobQuestion(job: JobRecord): string {
  return `Are you sure you want to delete this ${job.klass ? `${job.klass} ` : ""}job?`;
}

/** When the oldest job was enqueued, from the latency measured at `now`; `null` for an empty queue. */
function oldestEnqueued(latency: number, now: number): Date | null {
  return latency > 0 ? new Date(now - latency * 1000) : null;
}

/** The latency with the oldest job's enqueue time beside it. */
function Latency(props: { latency: number; now: number }): Child {
  const oldest = oldestEnqueued(props.latency, props.now);
  return (
    <>
      {formatLatency(props.latency)}
      {oldest ? <small class="abs">oldest enqueued {absoluteTime(oldest)}</small> : null}
    </>
  );
}

/** An empty queue page: an empty queue, or a page past the end of the list. */
function NoJobs(props: { page: number; pages: number; size: number; count: number }): Child {
  if (props.page <= props.pages) {
    return <Empty title={props.page > 1 ? "No jobs on this page" : "This queue is empty"} />;
  }
  return (
    <Empty
      title={`Page ${formatCount(props.page)} is past the end`}
      detail={pastTheEnd(props.size, props.count, "job", "jobs")}
    />
  );
}

/**
 * The Queues page.
 *
 * @example
 * ```tsx
 * <QueuesPage view={view} stats={stats} queues={rows} token={newToken()} />
 * ```
 */
export function QueuesPage(
  props: { view: View; stats: StatsSnapshot; queues: QueueRow[]; token: string; notice?: { text: string } },
): Child {
  const { view, queues } = props;
  return (
    <Layout view={view} section="queues" heading="Queues" stats={props.stats} notice={props.notice} live>
      <div class="panel flush">
        {queues.length === 0
          ? <Empty title="No queues" detail="A queue appears here once a job has been pushed to it." />
          : (
            <table>
              <thead>
                <tr>
                  <th>Queue</th>
                  <th class="num">Size</th>
                  <th class="num">Latency (s)</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                {queues.map((q) => (
                  <tr>
                    <td>
                      <a href={queueHref(view.base, q.name)}>{q.name}</a>
                      <PausedBadge paused={q.paused} />
                    </td>
                    <td class="num" data-label="Size">{formatCount(q.size)}</td>
                    <td class="num" data-label="Latency (s)">
                      <Latency latency={q.latency} now={view.now} />
                    </td>
                    <td class="num">
                      <ConfirmForm
                        action={queueHref(view.base, q.name)}
                        token={props.token}
                        buttons={queueButtons(q.name, q.size, q.paused, "Clear")}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </div>
    </Layout>
  );
}

/** Props of {@link QueuePage}. */
export interface QueueProps {
  view: View;
  stats: StatsSnapshot;
  name: string;
  size: number;
  /** Whether the queue is paused. */
  paused: boolean;
  /** Seconds the oldest job has waited (0 when empty). */
  latency: number;
  jobs: JobRecord[];
  /** `desc`: newest first (Sidekiq's default); `asc`: oldest, the next to run, first. */
  order: "asc" | "desc";
  page: number;
  count: number;
  token: string;
  notice?: { text: string };
}

/**
 * A queue's page.
 *
 * @example
 * ```tsx
 * <QueuePage view={view} stats={stats} name="default" size={3} latency={0.2} paused={false} jobs={jobs} order="desc" page={1} count={25} token={t} />
 * ```
 */
export function QueuePage(props: QueueProps): Child {
  const { view, name, jobs, order, size } = props;
  const href = queueHref(view.base, name);
  const query = (page: number, o = order) => {
    const q = new URLSearchParams();
    if (o !== "desc") q.set("order", o);
    if (page > 1) q.set("page", String(page));
    if (props.count !== 25) q.set("count", String(props.count));
    const text = q.toString();
    return text ? `${href}?${text}` : href;
  };
  const pages = Math.max(1, Math.ceil(size / props.count));
  const start = (props.page - 1) * props.count;
  // Position in line: 1 runs next (the oldest, at the list's tail), as Sidekiq's "#" column.
  const position = (i: number) => (order === "asc" ? start + i + 1 : size - start - i);
  return (
    <Layout view={view} section="queues" heading={`Queue ${name}`} stats={props.stats} notice={props.notice} live>
      <div class="head">
        <h1>
          Queue <span class="mono">{name}</span>
          <span class="badge">{formatCount(size)}</span>
          <PausedBadge paused={props.paused} />
        </h1>
        <div class="actions">
          <nav class="ranges" aria-label="Order">
            <a href={query(1, "desc")} class={order === "desc" ? "active" : undefined}>Newest first</a>
            <a href={query(1, "asc")} class={order === "asc" ? "active" : undefined}>Oldest first</a>
          </nav>
          <ConfirmForm
            action={href}
            token={props.token}
            fields={{ from: "queue" }}
            buttons={queueButtons(name, size, props.paused, "Clear queue")}
          />
        </div>
      </div>
      <p class="legend-note">
        {props.latency > 0
          ? `Latency ${formatLatency(props.latency)} s: the oldest job was enqueued ${
            absoluteTime(oldestEnqueued(props.latency, view.now)!)
          }.`
          : "Latency 0 s: nothing waits."}
      </p>
      <div class="panel flush">
        {jobs.length === 0 ? <NoJobs page={props.page} pages={pages} size={size} count={props.count} /> : (
          <table>
            <thead>
              <tr>
                <th class="num">
                  <a href={query(1, order === "asc" ? "desc" : "asc")} title="Position in line: 1 runs next">
                    # {order === "asc" ? "↑" : "↓"}
                  </a>
                </th>
                <th>Job</th>
                <th>Arguments</th>
                <th>Enqueued</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {jobs.map((job, i) => (
                <tr id={job.jid ? `job-${job.jid}` : undefined}>
                  <td class="num muted" data-label="#">{formatCount(position(i))}</td>
                  <td>
                    <b>{job.klass ?? "(unreadable)"}</b>
                    <div class="muted small mono">{job.jid ?? ""}</div>
                  </td>
                  <td class="args">
                    <span class="mono">{formatArgs(job.args)}</span>
                    <details>
                      <summary>JSON</summary>
                      <pre>{job.item ? prettyJson(job.item) : job.value}</pre>
                    </details>
                  </td>
                  <td>
                    <Time at={job.enqueuedAt} now={view.now} />
                  </td>
                  <td class="num">
                    <form method="post" action={`${href}/delete`} class="inline">
                      <input type="hidden" name="value" value={job.value} />
                      <input type="hidden" name="confirm" value="" />
                      <button type="submit" class="danger" data-confirm={deleteJobQuestion(job)}>Delete</button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={props.page} count={props.count} total={size} href={(p) => query(p)} />
      </div>
    </Layout>
  );
}
