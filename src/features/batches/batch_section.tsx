/**
 * The job page's section for a job of a batch or a flow: the batches it
 * counts in (its own, and each ancestor, with progress), and for a flow's
 * job its children with their state, each with children of its own linked
 * to its batch (the flow's tree one level at a time).
 *
 * @module
 */
import type { Child } from "hono/jsx";
import { truncate } from "../../web/dashboard/format.ts";
import type { BatchStatus } from "./batch_status.ts";
import type { FlowChild } from "./flow.ts";
import { batchHref, BatchState, Progress } from "./batch_widgets.tsx";

const CHILD_TONES: Readonly<Record<FlowChild["state"], string>> = {
  succeeded: "status ok",
  failed: "status error",
  ignored: "status quiet",
  waiting: "muted",
  skipped: "muted",
};

/**
 * The job page's section for a job of a batch or a flow: the batches it
 * belongs to (its own, and each ancestor, with progress), and for a flow's
 * job its children with their state.
 *
 * @example
 * ```tsx
 * <BatchSection base="" now={Date.now()} chain={[status]} />
 * ```
 */
export function BatchSection(props: {
  base: string;
  now: number;
  /** The batches the job counts in, its own first. */
  chain: readonly BatchStatus[];
  /** For a flow's job with children: the flow batch and its children. */
  flow?: { status: BatchStatus | undefined; children: readonly FlowChild[] };
}): Child {
  const { base, chain, flow } = props;
  return (
    <div class="panel flush">
      <div class="bar">
        <h2>{flow ? "Flow" : "Batch"}</h2>
      </div>
      <table>
        <tbody>
          {chain.map((s, i) => (
            <tr>
              <th>{i === 0 ? "In batch" : "inside"}</th>
              <td>
                <a href={batchHref(base, s.bid)}>{truncate(s.description ?? s.bid, 80)}</a>
                {s.flow ? <span class="muted small">flow</span> : null}
              </td>
              <td>
                <Progress status={s} />
              </td>
              <td>
                <BatchState status={s} />
              </td>
            </tr>
          ))}
          {flow
            ? (
              <tr>
                <th>Waits for</th>
                <td colspan={3}>
                  {flow.status ? <a href={batchHref(base, flow.status.bid)}>{flow.status.bid}</a> : null}
                  <ul class="tree">
                    {flow.children.map((c) => {
                      const sub = c.bid;
                      return (
                        <li>
                          <span class="mono">{c.className}</span> <span class="mono small">{c.jid ?? "–"}</span>{" "}
                          <span class={`${CHILD_TONES[c.state]} small`}>{c.state}</span>
                          {sub
                            ? (
                              <>
                                · <a href={batchHref(base, sub)}>its own children</a>
                              </>
                            )
                            : null}
                          {c.error
                            ? (
                              <span class="small error">
                                {` ${c.error.errorClass}: ${truncate(c.error.errorMessage, 120)}`}
                              </span>
                            )
                            : null}
                        </li>
                      );
                    })}
                  </ul>
                </td>
              </tr>
            )
            : null}
        </tbody>
      </table>
    </div>
  );
}
