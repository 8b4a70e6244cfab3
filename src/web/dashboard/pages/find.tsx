/**
 * Finding one job by jid (the Periodic page's "last jid" links here): the
 * dashboard looks, within bounds, where a job can be (running, its queue,
 * Retries, Scheduled, Dead) and goes to its page; when it is in none, this
 * page says where it looked and offers the searches to go on with.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { StatsSnapshot } from "../../../api/stats.ts";
import { formatCount } from "../format.ts";
import { JOB_SETS } from "../job_sets.ts";
import { Layout } from "../layout.tsx";
import type { View } from "../view.ts";
import { queueHref } from "./queues.tsx";

/** How many of a queue's newest jobs the search reads (one LRANGE). */
export const FIND_QUEUE_DEPTH = 1_000;

/**
 * The link that finds a job by jid; `queue` (where it was pushed) lets the
 * search read that queue too.
 *
 * @example
 * ```ts
 * findHref("/jobs", "2f8b0c4e9a1d3b5c7e9f0a1b", "reports"); // "/jobs/find?jid=2f8b...&queue=reports"
 * ```
 */
export function findHref(base: string, jid: string, queue?: string): string {
  const q = new URLSearchParams({ jid });
  if (queue) q.set("queue", queue);
  return `${base}/find?${q}`;
}

/** Props of {@link NotFoundJobPage}. */
export interface NotFoundJobProps {
  view: View;
  stats: StatsSnapshot;
  jid: string;
  queue?: string;
  /** The sets whose search stopped at its bound before the end (more may be there). */
  cutShort: ReadonlyArray<keyof typeof JOB_SETS>;
}

/**
 * The page for a jid found nowhere the search looked.
 *
 * @example
 * ```tsx
 * <NotFoundJobPage view={view} stats={stats} jid={jid} queue="reports" cutShort={[]} />
 * ```
 */
export function NotFoundJobPage(props: NotFoundJobProps): Child {
  const { view, jid, queue } = props;
  const search = (section: string) => `${view.base}/${section}?substr=${encodeURIComponent(jid)}`;
  return (
    <Layout view={view} section="none" heading="Job not found" stats={props.stats}>
      <div class="panel confirm">
        <h1>Job not found</h1>
        <p>
          <span class="mono">{jid}</span> is not running
          {queue
            ? (
              <>
                , not among the newest {formatCount(FIND_QUEUE_DEPTH)} jobs of queue{" "}
                <a class="mono" href={queueHref(view.base, queue)}>{queue}</a>
              </>
            )
            : null}, and not in Retries, Scheduled or Dead.
        </p>
        <p class="muted">
          {props.cutShort.length > 0
            ? `The search of ${
              props.cutShort.map((s) => JOB_SETS[s].title).join(", ")
            } stopped at its bound; search on from the links below.`
            : "Most likely it ran and succeeded: like Sidekiq, edgekiq keeps no record of finished jobs."}
        </p>
        <p class="actions">
          {Object.values(JOB_SETS).map((kind) => (
            <a key={kind.section} class="btn" href={search(kind.section)}>Search {kind.title}</a>
          ))}
        </p>
      </div>
    </Layout>
  );
}
