/**
 * The Queues page (every queue with its size and latency, and Clear) and a
 * queue's own page (its jobs, newest first, each deletable and with its
 * JSON one click away: a `<details>`, no script needed).
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { JobRecord } from "../../../api/job_record.ts";
import type { StatsSnapshot } from "../../../api/stats.ts";
import { formatArgs, formatCount, formatLatency, prettyJson } from "../format.ts";
import { Layout } from "../layout.tsx";
import type { QueueRow } from "../../../api/snapshot.ts";
import type { View } from "../view.ts";
import { ConfirmForm, Empty, Pager, Time } from "../widgets.tsx";

/** A queue's page URL. */
export function queueHref(base: string, name: string): string {
  return `${base}/queues/${encodeURIComponent(name)}`;
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
                    </td>
                    <td class="num">{formatCount(q.size)}</td>
                    <td class="num">{formatLatency(q.latency)}</td>
                    <td class="num">
                      <ConfirmForm
                        action={queueHref(view.base, q.name)}
                        token={props.token}
                        buttons={[{
                          value: "clear",
                          label: "Clear",
                          confirm: `Delete queue "${q.name}" and its ${formatCount(q.size)} jobs?`,
                          danger: true,
                        }]}
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
  jobs: JobRecord[];
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
 * <QueuePage view={view} stats={stats} name="default" size={3} jobs={jobs} page={1} count={25} token={t} />
 * ```
 */
export function QueuePage(props: QueueProps): Child {
  const { view, name, jobs } = props;
  const href = queueHref(view.base, name);
  return (
    <Layout view={view} section="queues" heading={`Queue ${name}`} stats={props.stats} notice={props.notice} live>
      <div class="head">
        <h1>
          Queue <span class="mono">{name}</span>
          <span class="badge">{formatCount(props.size)}</span>
        </h1>
        <ConfirmForm
          action={href}
          token={props.token}
          buttons={[{
            value: "clear",
            label: "Clear queue",
            confirm: `Delete queue "${name}" and its ${formatCount(props.size)} jobs?`,
            danger: true,
          }]}
        />
      </div>
      <div class="panel flush">
        {jobs.length === 0 ? <Empty title={props.page > 1 ? "No jobs on this page" : "This queue is empty"} /> : (
          <table>
            <thead>
              <tr>
                <th>Job</th>
                <th>Arguments</th>
                <th>Enqueued</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {jobs.map((job) => (
                <tr>
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
                      <button type="submit" class="danger">Delete</button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager
          page={props.page}
          count={props.count}
          total={props.size}
          href={(p) => `${href}?page=${p}&count=${props.count}`}
        />
      </div>
    </Layout>
  );
}
