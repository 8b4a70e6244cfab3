/**
 * How the dashboard writes numbers, sizes, times and job data: plain
 * strings, escaped by hono/jsx wherever they are rendered.
 *
 * @module
 */

const NUMBER = new Intl.NumberFormat("en-US");

/**
 * A count with thousands separators: `1234567` → `"1,234,567"`.
 *
 * @example
 * ```ts
 * formatCount(1234567); // "1,234,567"
 * ```
 */
export function formatCount(n: number): string {
  return NUMBER.format(Number.isFinite(n) ? n : 0);
}

/**
 * A duration in seconds, in its two largest units: `"3m 12s"`, `"2d 4h"`.
 *
 * @example
 * ```ts
 * formatDuration(192); // "3m 12s"
 * ```
 */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(Number.isFinite(seconds) ? seconds : 0));
  if (s < 60) return `${s}s`;
  const units: Array<[string, number]> = [["d", 86_400], ["h", 3_600], ["m", 60], ["s", 1]];
  const parts: string[] = [];
  let rest = s;
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

/**
 * Milliseconds of run time as people read them: `"0.42 ms"`, `"12 ms"`,
 * `"3.25 s"`, `"4m 10s"`.
 *
 * @example
 * ```ts
 * formatMillis(3250); // "3.25 s"
 * ```
 */
export function formatMillis(ms: number): string {
  if (!(ms > 0) || !Number.isFinite(ms)) return "0 ms";
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return formatDuration(ms / 1000);
}

/**
 * Seconds of latency with a sensible precision: `"0"`, `"0.42"`, `"12.3"`, `"1,204"`.
 *
 * @example
 * ```ts
 * formatLatency(0.4213); // "0.42"
 * ```
 */
export function formatLatency(seconds: number): string {
  if (!(seconds > 0)) return "0";
  if (seconds < 10) return seconds.toFixed(2);
  if (seconds < 100) return seconds.toFixed(1);
  return formatCount(Math.round(seconds));
}

/**
 * A size in KiB as people read it: `"512 KB"`, `"98.3 MB"`, `"1.2 GB"`.
 *
 * @example
 * ```ts
 * formatKib(100_000); // "97.7 MB"
 * ```
 */
export function formatKib(kib: number): string {
  if (!(kib > 0)) return "0";
  if (kib < 1024) return `${Math.round(kib)} KB`;
  if (kib < 1024 * 1024) return `${(kib / 1024).toFixed(1)} MB`;
  return `${(kib / 1024 / 1024).toFixed(1)} GB`;
}

/**
 * A time relative to `now`: `"just now"`, `"3 minutes ago"`, `"in 2 hours"`.
 *
 * @example
 * ```ts
 * relativeTime(new Date(Date.now() - 180_000)); // "3 minutes ago"
 * ```
 */
export function relativeTime(at: Date, now: number = Date.now()): string {
  const delta = (at.getTime() - now) / 1000;
  const abs = Math.abs(delta);
  if (abs < 5) return "just now";
  const units: Array<[string, number]> = [["year", 31_536_000], ["day", 86_400], ["hour", 3_600], [
    "minute",
    60,
  ], ["second", 1]];
  const [unit, size] = units.find(([, size]) => abs >= size) ?? ["second", 1];
  const n = Math.floor(abs / size);
  const text = `${n} ${unit}${n === 1 ? "" : "s"}`;
  return delta < 0 ? `${text} ago` : `in ${text}`;
}

/**
 * A UTC timestamp for tooltips: `"2024-05-01 12:00:00 UTC"`.
 *
 * @example
 * ```ts
 * absoluteTime(new Date(0)); // "1970-01-01 00:00:00 UTC"
 * ```
 */
export function absoluteTime(at: Date): string {
  return Number.isNaN(at.getTime()) ? "unknown" : `${at.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/**
 * A value as compact JSON for a table cell, cut at `max` characters.
 *
 * @example
 * ```ts
 * formatArgs([1, "two"]); // '1, "two"'
 * ```
 */
export function formatArgs(args: readonly unknown[], max: number = 200): string {
  return truncate(args.map((a) => safeJson(a)).join(", "), max);
}

/**
 * A value as indented JSON (for a job's payload); never throws.
 *
 * @example
 * ```ts
 * prettyJson({ a: 1 }); // '{\n  "a": 1\n}'
 * ```
 */
export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * `text` cut to `max` characters with an ellipsis.
 *
 * @example
 * ```ts
 * truncate("abcdef", 4); // "abc…"
 * ```
 */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
