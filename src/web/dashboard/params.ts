/**
 * The dashboard's query and form parameters, parsed with bounds: every
 * number is checked or clamped and no text is echoed unescaped, so a link
 * can neither make a page do unbounded work (Sidekiq's CVE-2023-26141 was
 * an unbounded refresh) nor inject markup (CVE-2024-32887 and the metrics
 * `period` XSS echoed parameters).
 *
 * @module
 */
import { EdgekiqError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";

/** A request parameter out of bounds: the dashboard answers 400 with this message. */
export class ParamError extends EdgekiqError {}

/** The history chart's ranges, in days; 180 is the most the dashboard reads. */
export const HISTORY_DAYS: readonly number[] = [7, 30, 90, 180];
/** The most rows a page lists. */
export const MAX_PAGE_SIZE = 100;
/** Rows per page unless `count` says otherwise. */
export const DEFAULT_PAGE_SIZE = 25;
/** The live poll's bounds and default, seconds. */
export const LIVE_INTERVAL = { min: 2, max: 20, default: 5 } as const;
/** The longest `substr` filter accepted. */
export const MAX_FILTER_LENGTH = 200;
/** The longest job class or schedule name a URL may name (the `Metrics` API's own bound). */
export const MAX_NAME_LENGTH = 1000;

export function rule(name: string, text: string, value: unknown): ParamError {
  return new ParamError(`Cannot show this page as '${name}' must be ${text}: current value is ${describeValue(value)}`);
}

function wholeNumber(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  return /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
}

/**
 * `days` for the history chart: a whole number from 1 to 180 (default 30).
 *
 * @example
 * ```ts
 * historyDays("90"); // 90
 * historyDays("1000"); // throws ParamError
 * ```
 */
export function historyDays(raw: string | undefined): number {
  const days = wholeNumber(raw) ?? 30;
  if (!(days >= 1 && days <= 180)) throw rule("days", "a whole number from 1 to 180", raw);
  return days;
}

/**
 * `page` (1-based) and `count` (rows, capped at {@link MAX_PAGE_SIZE}).
 *
 * @example
 * ```ts
 * paging("2", "500"); // { page: 2, count: 100, start: 100 }
 * ```
 */
export function paging(rawPage: string | undefined, rawCount: string | undefined): {
  page: number;
  count: number;
  start: number;
} {
  const page = wholeNumber(rawPage) ?? 1;
  if (!(page >= 1 && page <= 1_000_000)) throw rule("page", "a whole number from 1 to 1,000,000", rawPage);
  const asked = wholeNumber(rawCount) ?? DEFAULT_PAGE_SIZE;
  if (!(asked >= 1)) throw rule("count", `a whole number from 1 to ${MAX_PAGE_SIZE}`, rawCount);
  const count = Math.min(asked, MAX_PAGE_SIZE);
  return { page, count, start: (page - 1) * count };
}

/**
 * The live poll interval in seconds, clamped to 2–20 (default 5).
 *
 * @example
 * ```ts
 * liveInterval("0.01"); // 2
 * ```
 */
export function liveInterval(raw: string | undefined): number {
  const n = raw === undefined || raw === "" ? NaN : Number(raw);
  if (!Number.isFinite(n)) return LIVE_INTERVAL.default;
  return Math.min(LIVE_INTERVAL.max, Math.max(LIVE_INTERVAL.min, Math.round(n)));
}

/**
 * The `substr` filter: trimmed, at most {@link MAX_FILTER_LENGTH} characters; `""` when absent.
 *
 * @example
 * ```ts
 * filterText(" HardJob "); // "HardJob"
 * ```
 */
export function filterText(raw: string | undefined): string {
  const text = (raw ?? "").trim();
  if (text.length > MAX_FILTER_LENGTH) throw rule("substr", `at most ${MAX_FILTER_LENGTH} characters`, text);
  return text;
}

/**
 * `scan`: where a filtered search that stopped goes on (a ZSCAN cursor,
 * digits); `"0"` (from the start) when absent.
 *
 * @example
 * ```ts
 * scanCursor("18432"); // "18432"
 * ```
 */
export function scanCursor(raw: string | undefined): string {
  if (raw === undefined || raw === "") return "0";
  if (!/^\d{1,20}$/.test(raw)) throw rule("scan", "a search position (digits)", raw);
  return raw;
}

/**
 * A list's sort order: `asc` or `desc`, else `fallback`.
 *
 * @example
 * ```ts
 * sortOrder("desc", "asc"); // "desc"
 * ```
 */
export function sortOrder(raw: string | undefined, fallback: "asc" | "desc"): "asc" | "desc" {
  return raw === "asc" || raw === "desc" ? raw : fallback;
}

/**
 * How long after a Quiet or Stop the Busy page shows it as requested while
 * no heartbeat confirms it: the signal waits in Redis for 60 s, and the
 * process reports quiet one beat after it reads it.
 */
export const PENDING_MS = 70_000;

/**
 * The Quiet or Stop the Busy page was redirected with (`?pending=quiet&target=<identity>&at=<ms>`;
 * no target: every process), while it is recent; otherwise (or malformed) `undefined`.
 *
 * @example
 * ```ts
 * pendingSignal("quiet", "host:1:abc", String(Date.now())); // { action: "quiet", target: "host:1:abc" }
 * ```
 */
export function pendingSignal(
  action: string | undefined,
  target: string | undefined,
  at: string | undefined,
  now: number = Date.now(),
): { action: "quiet" | "stop"; target?: string } | undefined {
  if (action !== "quiet" && action !== "stop") return undefined;
  const sent = Number(at);
  if (!/^\d{1,15}$/.test(at ?? "") || !(now - sent >= -5_000 && now - sent <= PENDING_MS)) return undefined;
  return target ? { action, target } : { action };
}

/**
 * A job class or schedule name from the URL: 1 to {@link MAX_NAME_LENGTH} characters.
 *
 * @example
 * ```ts
 * nameParam("name", "HardJob"); // "HardJob"
 * ```
 */
export function nameParam(param: string, raw: string | undefined): string {
  if (!raw || raw.length > MAX_NAME_LENGTH) throw rule(param, `1 to ${MAX_NAME_LENGTH} characters`, raw);
  return raw;
}
