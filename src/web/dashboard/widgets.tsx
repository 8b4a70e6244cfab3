/**
 * Small pieces the pages share: times, empty states, the pager, and the
 * form for actions on "all" that must be confirmed.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import { absoluteTime, formatCount, relativeTime } from "./format.ts";

/**
 * A time shown relative to `now`, with the absolute UTC time on hover.
 *
 * @example
 * ```tsx
 * <Time at={entry.at} now={view.now} />
 * ```
 */
export function Time(props: { at: Date | null; now: number }): Child {
  if (!props.at || Number.isNaN(props.at.getTime())) return <span class="muted">–</span>;
  return (
    <time class="nowrap" datetime={props.at.toISOString()} title={absoluteTime(props.at)}>
      {relativeTime(props.at, props.now)}
    </time>
  );
}

/**
 * An empty list, saying what it means.
 *
 * @example
 * ```tsx
 * <Empty title="No retries" detail="Jobs that fail and have retries left wait here." />
 * ```
 */
export function Empty(props: { title: string; detail?: string }): Child {
  return (
    <div class="empty">
      <b>{props.title}</b>
      {props.detail ? <span>{props.detail}</span> : null}
    </div>
  );
}

/**
 * Previous/next links for a paged list. `href(page)` builds a page's URL.
 *
 * @example
 * ```tsx
 * <Pager page={2} count={25} total={120} href={(p) => `${base}/dead?page=${p}`} />
 * ```
 */
export function Pager(props: { page: number; count: number; total: number; href: (page: number) => string }): Child {
  const { page, count, total } = props;
  const pages = Math.max(1, Math.ceil(total / count));
  if (pages <= 1 && page === 1) return null;
  const first = total === 0 ? 0 : Math.min(total, (page - 1) * count + 1);
  const last = Math.min(total, page * count);
  return (
    <div class="pager">
      <span>
        {first > last ? "Nothing on this page" : `${formatCount(first)}–${formatCount(last)} of ${formatCount(total)}`}
      </span>
      {page > 1 ? <a class="btn" href={props.href(1)}>First</a> : null}
      {page > 1 ? <a class="btn" href={props.href(Math.min(page - 1, pages))} rel="prev">Previous</a> : null}
      {page < pages ? <a class="btn" href={props.href(page + 1)} rel="next">Next</a> : null}
      {page < pages ? <a class="btn" href={props.href(pages)}>Last</a> : null}
    </div>
  );
}

/** One button of a {@link ConfirmForm}. */
export interface ConfirmButton {
  /** The `action` field it submits. */
  value: string;
  /** Its label. */
  label: string;
  /** The question the browser asks first (and the no-JavaScript confirmation page repeats). */
  confirm: string;
  /** Styles it as destructive. */
  danger?: boolean;
}

/**
 * A form for an action on everything (retry all, clear a queue, stop all):
 * it carries a one-time token, so replaying it does nothing, and an empty
 * `confirm` field that the script fills after the browser's dialog. Without
 * JavaScript the server answers with a confirmation page instead.
 *
 * @example
 * ```tsx
 * <ConfirmForm action={`${base}/retries/all`} token={token} buttons={[{ value: "delete", label: "Delete all", confirm: "Delete all 3 retries?" }]} />
 * ```
 */
export function ConfirmForm(
  props: { action: string; token: string; buttons: readonly ConfirmButton[]; fields?: Record<string, string> },
): Child {
  return (
    <form method="post" action={props.action} class="inline actions">
      <input type="hidden" name="token" value={props.token} />
      <input type="hidden" name="confirm" value="" />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      {props.buttons.map((b) => (
        <button
          type="submit"
          name="action"
          value={b.value}
          class={b.danger ? "danger" : undefined}
          data-confirm={b.confirm}
        >
          {b.label}
        </button>
      ))}
    </form>
  );
}
