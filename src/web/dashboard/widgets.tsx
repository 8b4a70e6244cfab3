/**
 * Small pieces the pages share: times, empty states, the pager, and the
 * form for actions on "all" that must be confirmed.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import { absoluteTime, formatCount, relativeTime } from "./format.ts";

/**
 * A time shown relative to `now`, with the absolute UTC time beside it
 * (visible, not only on hover: a phone has no hover).
 *
 * @example
 * ```tsx
 * <Time at={entry.at} now={view.now} />
 * ```
 */
export function Time(props: { at: Date | null; now: number }): Child {
  if (!props.at || Number.isNaN(props.at.getTime())) return <span class="muted">–</span>;
  const absolute = absoluteTime(props.at);
  // Date and time wrap apart when a column is narrow, never inside either.
  const [day, time] = [absolute.slice(0, 10), absolute.slice(11)];
  return (
    <span class="when">
      <time class="nowrap" datetime={props.at.toISOString()} title={absolute}>
        {relativeTime(props.at, props.now)}
      </time>
      <small class="abs">
        <span>{day}</span> <span>{time}</span>
      </small>
    </span>
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

/** Page numbers shown around the current one (and the first and last, always). */
const PAGE_SPREAD = 2;

/**
 * The pager of a list: where this page sits ("26–50 of 5,001"), numbered
 * pages around the current one with the first and last, previous/next, and
 * a jump-to-page form (a GET that keeps the list's other parameters, so it
 * works without JavaScript). A page past the end says so and links back to
 * the last one. `href(page)` builds a page's URL.
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
  const past = page > pages;
  const first = (page - 1) * count + 1;
  const last = Math.min(total, page * count);
  const shown = new Set([1, pages]);
  for (let p = page - PAGE_SPREAD; p <= page + PAGE_SPREAD; p++) if (p >= 1 && p <= pages) shown.add(p);
  const numbers = [...shown].sort((a, b) => a - b);
  // The jump form keeps the list's other parameters (filter, order, count) as hidden fields.
  // (Split by hand: URL parsing would resolve a queue named ".." out of the path.)
  const [action, search = ""] = props.href(2).split(/\?(.*)/s);
  const keep: Array<[string, string]> = [];
  new URLSearchParams(search).forEach((value, name) => name !== "page" && keep.push([name, value]));
  return (
    <nav class="pager" aria-label="Pages">
      <span class="where">
        {past
          ? `Page ${formatCount(page)} of ${formatCount(pages)}: past the end`
          : `${formatCount(first)}–${formatCount(last)} of ${formatCount(total)}`}
      </span>
      {past ? <a class="btn" href={props.href(pages)}>Back to page {formatCount(pages)}</a> : (
        <span class="pages">
          {page > 1 ? <a class="btn" href={props.href(page - 1)} rel="prev" aria-label="Previous page">‹</a> : null}
          {numbers.map((p, i) => (
            <>
              {i > 0 && p - numbers[i - 1] > 1 ? <span class="gap">…</span> : null}
              {p === page
                ? <span class="btn current" aria-current="page">{formatCount(p)}</span>
                : <a class="btn" href={props.href(p)}>{formatCount(p)}</a>}
            </>
          ))}
          {page < pages ? <a class="btn" href={props.href(page + 1)} rel="next" aria-label="Next page">›</a> : null}
        </span>
      )}
      <form method="get" action={action} class="jump">
        {keep.map(([name, value]) => <input key={name} type="hidden" name={name} value={value} />)}
        <input
          type="number"
          name="page"
          min="1"
          max={String(pages)}
          value={String(Math.min(page, pages))}
          aria-label="Page number"
        />
        <button type="submit">Go</button>
      </form>
    </nav>
  );
}

/**
 * What a page past the end of a list says below its heading.
 *
 * @example
 * ```ts
 * pastTheEnd(5001, 25, "job", "jobs"); // "5,001 jobs on 201 pages: the last is page 201."
 * ```
 */
export function pastTheEnd(total: number, count: number, one: string, many: string): string {
  const pages = Math.max(1, Math.ceil(total / count));
  return `${formatCount(total)} ${total === 1 ? one : many} on ${formatCount(pages)} page${
    pages === 1 ? "" : "s"
  }: the last is page ${formatCount(pages)}.`;
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
