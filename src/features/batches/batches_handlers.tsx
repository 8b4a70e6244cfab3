/**
 * The Batches pages' handlers (loaded on a dashboard's first request for
 * them, see `batches_dashboard.ts`): `/batches` (a page of batches),
 * `/batches/:bid` (one, with its children), `POST /batches/:bid`
 * (`action=cancel`: idempotent, a replay cancels nothing more), and the
 * job page's section for a job of a batch or a flow.
 * A list page costs the header's three commands plus two; a batch's page
 * plus three (its status, its children's ids, their statuses); a job's
 * section one per batch it counts in, plus two for a flow's job.
 *
 * @module
 */
import { loadSnapshot } from "../../api/snapshot.ts";
import { field } from "../../web/dashboard/form.ts";
import { MessagePage } from "../../web/dashboard/pages/message.tsx";
import { paging, ParamError } from "../../web/dashboard/params.ts";
import { noticeOf, page, type PageHandler, redirectWith, viewOf } from "../../web/dashboard/render.ts";
import { newToken } from "../../web/dashboard/token.ts";
import type { DashboardNode, JobSection } from "../../web/dashboard/dashboard_feature.ts";
import { Batch } from "./batch.ts";
import { BatchSet } from "./batch_set.ts";
import type { BatchStatus } from "./batch_status.ts";
import { bidChain, isBid } from "./bid.ts";
import { callbackMark } from "./callbacks.ts";
import { type FlowChild, readChildren } from "./flow.ts";
import { BatchesPage, BatchPage } from "./batches_views.tsx";
import { BatchSection } from "./batch_section.tsx";
import { batchHref } from "./batch_widgets.tsx";

function bidParam(raw: string | undefined): string {
  if (!isBid(raw)) throw new ParamError("Cannot show the batch as its id is not one a batch was given");
  return raw;
}

/** `GET /batches`: a page of batches, newest first. */
export const batchList: PageHandler = async (c, deps) => {
  const view = viewOf(c, deps);
  const client = c.get("client");
  const { page: pageNo, count } = paging(c.req.query("page"), c.req.query("count"));
  const set = new BatchSet(client);
  const [{ stats }, total, batches] = await Promise.all([
    loadSnapshot(client),
    set.size(),
    set.page({ page: pageNo, count }),
  ]);
  return await page(
    c,
    <BatchesPage
      view={view}
      stats={stats}
      batches={batches}
      total={total}
      page={pageNo}
      count={count}
      notice={noticeOf(c, deps)}
    />,
  );
};

/** `GET /batches/:bid`: one batch and its children. */
export const batchEntry: PageHandler = async (c, deps) => {
  const view = viewOf(c, deps);
  const bid = bidParam(c.req.param("bid"));
  const client = c.get("client");
  const set = new BatchSet(client);
  const [{ stats }, status, kids] = await Promise.all([loadSnapshot(client), set.get(bid), set.children(bid)]);
  if (!status) {
    const message = "That batch is not in Redis: it expired (30 days after its last registration by default), " +
      "or was never made.";
    return await page(c, <MessagePage view={view} stats={stats} heading="Batch not found" message={message} />, 404);
  }
  const children = (await Promise.all(kids.slice(0, 100).map((kid) => set.get(kid))))
    .filter((s): s is BatchStatus => s !== undefined);
  return await page(
    c,
    <BatchPage
      view={view}
      stats={stats}
      status={status}
      kids={children}
      token={newToken()}
      notice={noticeOf(c, deps)}
    />,
  );
};

/** `POST /batches/:bid`: cancel (`action=cancel`). */
export const batchAction: PageHandler = async (c) => {
  const form = await c.req.parseBody({ all: true });
  const bid = bidParam(c.req.param("bid"));
  if (field(form, "action") !== "cancel") throw new ParamError("Cannot change the batch as 'action' must be cancel");
  const found = await new Batch(c.get("client"), bid).cancel();
  return redirectWith(c, batchHref("", bid), found ? "batch-cancelled" : "batch-gone");
};

/**
 * The job page's section: the batches a job counts in, and for a flow's job
 * with children, its children and their state (sub-flows linked to their
 * batch: the tree one level at a time).
 */
export const batchJobSection: JobSection = async ({ payload, client, base, now }) => {
  const mark = callbackMark(payload);
  const own = isBid(payload.bid) ? payload.bid : undefined;
  if (own === undefined && mark === undefined) return null;
  const set = new BatchSet(client);
  const chain = own === undefined ? [] : (await Promise.all(bidChain(own).map((b) => set.get(b))))
    .filter((s): s is BatchStatus => s !== undefined);
  let flow: { status: BatchStatus | undefined; children: readonly FlowChild[] } | undefined;
  if (mark?.event === "success") {
    const status = await set.get(mark.bid);
    if (status?.flow) {
      const children = await readChildren({ payload, jid: payload.jid, transport: client.transport, keys: client.keys })
        .catch(() => []);
      flow = { status, children };
    }
  }
  if (chain.length === 0 && !flow) return null;
  return (
    <BatchSection
      base={base}
      now={now}
      chain={chain}
      flow={flow}
    />
  ) as unknown as DashboardNode;
};
