/**
 * What the Batches pages and the job page's batch section share: a batch's
 * link, its state, its progress bar and its callbacks' state.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import { formatCount } from "../../web/dashboard/format.ts";
import type { BatchStatus, CallbackState } from "./batch_status.ts";
import { BATCH_EVENTS } from "./callbacks.ts";

/**
 * The link to one batch.
 *
 * @example
 * ```ts
 * batchHref("/jobs", "q0tJ3bS-w5bQZf"); // "/jobs/batches/q0tJ3bS-w5bQZf"
 * ```
 */
export function batchHref(base: string, bid: string): string {
  return `${base}/batches/${encodeURIComponent(bid)}`;
}

/** Where a batch stands, in one word. */
function stateOf(s: BatchStatus): { text: string; tone: "ok" | "quiet" | "error" | "" } {
  if (s.cancelledAt) return { text: "cancelled", tone: "quiet" };
  if (s.succeededAt) return { text: "succeeded", tone: "ok" };
  if (s.flow && s.callbacks.success.state === "failed" && s.callbacks.success.firedAt) {
    return { text: "failed", tone: "error" };
  }
  if (s.completedAt) return { text: s.failures ? "complete, with failures" : "complete", tone: "error" };
  if (s.openRegistrations > 0) return { text: "registering", tone: "quiet" };
  return { text: "running", tone: "" };
}

/**
 * A batch's state, in one word.
 *
 * @example
 * ```tsx
 * <BatchState status={status} />
 * ```
 */
export function BatchState(props: { status: BatchStatus }): Child {
  const { text, tone } = stateOf(props.status);
  return <span class={tone ? `status ${tone}` : "status"}>{text}</span>;
}

/**
 * A batch's progress bar (jobs done of total) and its failures.
 *
 * @example
 * ```tsx
 * <Progress status={status} />
 * ```
 */
export function Progress(props: { status: BatchStatus }): Child {
  const { total, pending, failures } = props.status;
  const done = Math.max(0, total - pending);
  return (
    <span class="nowrap">
      <progress value={done} max={Math.max(total, 1)} title={`${done} of ${total} done`}>
        {`${done}/${total}`}
      </progress>{" "}
      <span class="small">{`${formatCount(done)} / ${formatCount(total)}`}</span>
      {failures > 0 ? <span class="status error">{`${formatCount(failures)} failed`}</span> : null}
    </span>
  );
}

/** How each callback state is shown. */
export const CALLBACK_TONES: Readonly<Record<CallbackState, string>> = {
  none: "muted",
  waiting: "muted",
  cancelled: "status quiet",
  queued: "status quiet",
  succeeded: "status ok",
  failed: "status error",
  dead: "status error",
};

/**
 * The state of each callback a batch has.
 *
 * @example
 * ```tsx
 * <CallbackStates status={status} />
 * ```
 */
export function CallbackStates(props: { status: BatchStatus }): Child {
  const set = BATCH_EVENTS.filter((e) => props.status.callbacks[e].state !== "none");
  if (set.length === 0) return <span class="muted">–</span>;
  return (
    <span>
      {set.map((event) => {
        const { state } = props.status.callbacks[event];
        return <span key={event} class={`${CALLBACK_TONES[state]} small`}>{`${event}: ${state} `}</span>;
      })}
    </span>
  );
}
