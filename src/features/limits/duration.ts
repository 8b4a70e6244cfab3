/**
 * Durations as limits are written: a number of seconds, or a string with a
 * unit (`"250ms"`, `"1s"`, `"5m"`, `"1h"`, `"1d"`).
 *
 * @module
 */

/** A duration: seconds, or a number with a unit (`ms`, `s`, `m`, `h`, `d`). */
export type Duration = number | `${number}${"ms" | "s" | "m" | "h" | "d"}`;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The longest interval a limiter takes: a year (a finite PEXPIRE, far beyond any sane limit). */
const MAX_MS = 366 * 86_400_000;

/**
 * A duration in whole milliseconds (at least 1), or undefined when it cannot be read.
 *
 * @example
 * ```ts
 * durationMs("1s"); // 1000
 * durationMs(0.25); // 250
 * durationMs("soon"); // undefined
 * ```
 */
export function durationMs(value: unknown): number | undefined {
  let ms: number | undefined;
  if (typeof value === "number") ms = value * 1000;
  else if (typeof value === "string") {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
    if (match) ms = Number(match[1]) * UNIT_MS[match[2]];
  }
  if (ms === undefined || !Number.isFinite(ms) || ms < 1 || ms > MAX_MS) return undefined;
  return Math.round(ms);
}
