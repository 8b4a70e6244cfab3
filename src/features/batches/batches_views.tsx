/**
 * The Batches pages: every batch with its progress (a bar of jobs done out
 * of total), failures and callbacks' state; and one batch with its counts,
 * its callbacks, its failed jobs, its children, and Cancel.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { StatsSnapshot } from "../../api/stats.ts";
import { formatCount, truncate } from "../../web/dashboard/format.ts";
import { Layout } from "../../web/dashboard/layout.tsx";
import type { View } from "../../web/dashboard/view.ts";
import { ConfirmForm, Empty, Pager, Time } from "../../web/dashboard/widgets.tsx";
import type { BatchStatus } from "./batch_status.ts";
import { BATCH_EVENTS } from "./callbacks.ts";
import { batchHref, BatchState, CALLBACK_TONES, CallbackStates, Progress } from "./batch_widgets.tsx";

/** Props of {@link BatchesPage}. */
export interface BatchesProps {
  view: View;
  stats: StatsSnapshot;
  batches: readonly BatchStatus[];
  total: number;
  page: number;
  count: number;
  notice?: { text: string; error?: boolean };
}

/**
 * The list.
 *
 * @example
 * ```tsx
 * <BatchesPage view={view} stats={stats} batches={await new BatchSet(client).page()} total={n} page={1} count={25} />
 * ```
 */
export function BatchesPage(props: BatchesProps): Child {
  const { view, batches } = props;
  return (
    <Layout view={view} section="batches" heading="Batches" stats={props.stats} notice={props.notice} live>
      <div class="head">
        <h1>
          Batches <span class="badge">{formatCount(props.total)}</span>
        </h1>
      </div>
      <div class="panel flush">
        {batches.length === 0
          ? (
            <Empty
              title="No batches"
              detail="Batches and flows appear here from their first add() until they expire (30 days by default)."
            />
          )
          : (
            <table>
              <thead>
                <tr>
                  <th>Batch</th>
                  <th>Created</th>
                  <th>Progress</th>
                  <th>State</th>
                  <th>Callbacks</th>
                </tr>
              </thead>
              <tbody>
                {batches.map((s) => (
                  <tr>
                    <td>
                      <a href={batchHref(view.base, s.bid)}>{truncate(s.description ?? s.bid, 80)}</a>
                      <div class="muted small mono">
                        {s.flow ? "flow · " : ""}
                        {s.parentBid
                          ? (
                            <>
                              child of <a href={batchHref(view.base, s.parentBid)}>{s.parentBid}</a>
                            </>
                          )
                          : s.bid}
                      </div>
                    </td>
                    <td>
                      <Time at={s.createdAt} now={view.now} />
                    </td>
                    <td>
                      <Progress status={s} />
                    </td>
                    <td>
                      <BatchState status={s} />
                    </td>
                    <td>
                      <CallbackStates status={s} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        <Pager
          page={props.page}
          count={props.count}
          total={props.total}
          href={(p) => `${view.base}/batches?page=${p}&count=${props.count}`}
        />
      </div>
    </Layout>
  );
}

/** Props of {@link BatchPage}. */
export interface BatchProps {
  view: View;
  stats: StatsSnapshot;
  status: BatchStatus;
  /** Its child batches' statuses. */
  kids: readonly BatchStatus[];
  token: string;
  notice?: { text: string; error?: boolean };
}

/**
 * One batch.
 *
 * @example
 * ```tsx
 * <BatchPage view={view} stats={stats} status={status} kids={[]} token={newToken()} />
 * ```
 */
export function BatchPage(props: BatchProps): Child {
  const { view, status: s } = props;
  const cancellable = !s.cancelledAt && !s.succeededAt;
  return (
    <Layout view={view} section="batches" heading={`Batch ${s.bid}`} stats={props.stats} notice={props.notice} live>
      <div class="head">
        <h1>
          <a href={`${view.base}/batches`}>Batches</a>
          <span class="muted">/</span>
          <span>{truncate(s.description ?? s.bid, 80)}</span>
        </h1>
        {cancellable
          ? (
            <ConfirmForm
              action={batchHref(view.base, s.bid)}
              token={props.token}
              buttons={[{
                value: "cancel",
                label: "Cancel batch",
                confirm: "Cancel this batch? Its queued jobs are skipped, its running jobs asked to stop, " +
                  "and no callback of it or its children runs.",
                danger: true,
              }]}
            />
          )
          : null}
      </div>
      <div class="panel flush">
        <table class="kv">
          <tbody>
            <tr>
              <th>Batch id</th>
              <td class="mono">{s.bid}</td>
            </tr>
            {s.parentBid
              ? (
                <tr>
                  <th>Parent</th>
                  <td class="mono">
                    <a href={batchHref(view.base, s.parentBid)}>{s.parentBid}</a>
                  </td>
                </tr>
              )
              : null}
            <tr>
              <th>Kind</th>
              <td>{s.flow ? "flow (its success callback is the parent job)" : "batch"}</td>
            </tr>
            <tr>
              <th>State</th>
              <td>
                <BatchState status={s} />
              </td>
            </tr>
            <tr>
              <th>Progress</th>
              <td>
                <Progress status={s} />
              </td>
            </tr>
            <tr>
              <th>Jobs</th>
              <td>
                {`${formatCount(s.total)} total, ${formatCount(s.pending)} pending, ${formatCount(s.failures)} failed`}
              </td>
            </tr>
            <tr>
              <th>Child batches</th>
              <td>{`${formatCount(s.children)} (${formatCount(s.childrenPending)} not yet successful)`}</td>
            </tr>
            {s.openRegistrations > 0
              ? (
                <tr>
                  <th>Open registrations</th>
                  <td>
                    {formatCount(s.openRegistrations)}
                    <span class="muted small">
                      {" "}
                      (an add() still running, or cut off by a crash: the batch cannot complete until it is sealed)
                    </span>
                  </td>
                </tr>
              )
              : null}
            <tr>
              <th>Created</th>
              <td>
                <Time at={s.createdAt} now={view.now} />
              </td>
            </tr>
            <tr>
              <th>Completed</th>
              <td>
                <Time at={s.completedAt ?? null} now={view.now} />
              </td>
            </tr>
            <tr>
              <th>Succeeded</th>
              <td>
                <Time at={s.succeededAt ?? null} now={view.now} />
              </td>
            </tr>
            {s.diedAt
              ? (
                <tr>
                  <th>First death</th>
                  <td>
                    <Time at={s.diedAt} now={view.now} />
                  </td>
                </tr>
              )
              : null}
            {s.cancelledAt
              ? (
                <tr>
                  <th>Cancelled</th>
                  <td>
                    <Time at={s.cancelledAt} now={view.now} />
                  </td>
                </tr>
              )
              : null}
            <tr>
              <th>Expires</th>
              <td>
                <Time at={s.expiresAt ?? null} now={view.now} />
              </td>
            </tr>
          </tbody>
        </table>
      </div>
      <div class="panel flush">
        <div class="bar">
          <h2>Callbacks</h2>
        </div>
        <table>
          <thead>
            <tr>
              <th>Event</th>
              <th>State</th>
              <th>Job</th>
              <th>Fired</th>
              <th>Last ran</th>
            </tr>
          </thead>
          <tbody>
            {BATCH_EVENTS.map((event) => {
              const cb = s.callbacks[event];
              return (
                <tr>
                  <td>{event}</td>
                  <td>
                    <span class={CALLBACK_TONES[cb.state]}>{cb.state}</span>
                  </td>
                  <td class="mono small">{cb.jid ?? "–"}</td>
                  <td>
                    <Time at={cb.firedAt ?? null} now={view.now} />
                  </td>
                  <td>
                    <Time at={cb.ranAt ?? null} now={view.now} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {s.failed.length > 0
        ? (
          <div class="panel flush">
            <div class="bar">
              <h2>
                Failed jobs <span class="badge">{formatCount(s.failures)}</span>
              </h2>
            </div>
            <table>
              <thead>
                <tr>
                  <th>JID</th>
                  <th>Job</th>
                  <th>Error</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                {s.failed.map((f) => (
                  <tr>
                    <td class="mono small">{f.jid}</td>
                    <td class="mono">{f.job ?? "–"}</td>
                    <td>
                      <span class="error">{f.errorClass}</span> {truncate(f.errorMessage, 300)}
                    </td>
                    <td>
                      {f.dead ? <span class="status error">dead</span> : <span class="status quiet">retrying</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
        : null}
      {props.kids.length > 0
        ? (
          <div class="panel flush">
            <div class="bar">
              <h2>
                Child batches <span class="badge">{formatCount(s.children)}</span>
              </h2>
            </div>
            <table>
              <tbody>
                {props.kids.map((c) => (
                  <tr>
                    <td>
                      <a href={batchHref(view.base, c.bid)}>{truncate(c.description ?? c.bid, 80)}</a>
                    </td>
                    <td>
                      <Progress status={c} />
                    </td>
                    <td>
                      <BatchState status={c} />
                    </td>
                    <td>
                      <CallbackStates status={c} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
        : null}
    </Layout>
  );
}
