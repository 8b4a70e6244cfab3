/**
 * What an expiring-jobs feature counts and logs: every expired job is
 * counted per class, and logged at most once per class per interval (the
 * first of an interval at once, the rest in that line's next one, or at
 * stop), so a backlog of ten thousand expired jobs is a handful of lines,
 * not ten thousand.
 *
 * @module
 */
import type { Logger } from "../../logger.ts";

/**
 * Counts expired jobs and rate-limits their log lines.
 *
 * @example
 * ```ts
 * const log = new ExpiryLog(60_000);
 * log.expired("Digest", logger, Date.now()); // logs "expired jobs dropped" { class: "Digest", count: 1 }
 * log.counts(); // { Digest: 1 }
 * ```
 */
export class ExpiryLog {
  #intervalMs: number;
  #totals = new Map<string, number>();
  /** Per class: when its last line was written, and how many expired since. */
  #lines = new Map<string, { at: number; unlogged: number }>();

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** Counts one expired job of `className`; logs a line if its class has none this interval. */
  expired(className: string, logger: Logger, now: number): void {
    this.#totals.set(className, (this.#totals.get(className) ?? 0) + 1);
    const line = this.#lines.get(className);
    if (line && now - line.at < this.#intervalMs) {
      line.unlogged++;
      return;
    }
    this.#write(logger, className, (line?.unlogged ?? 0) + 1);
    this.#lines.set(className, { at: now, unlogged: 0 });
  }

  /** Logs what is counted but not yet logged (at stop). */
  flush(logger: Logger): void {
    for (const [className, line] of this.#lines) {
      if (line.unlogged > 0) this.#write(logger, className, line.unlogged);
      line.unlogged = 0;
    }
  }

  /** Expired jobs by class since this process started. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.#totals);
  }

  #write(logger: Logger, className: string, count: number): void {
    logger.info("expired jobs dropped before they started", {
      class: className,
      count,
      interval_s: this.#intervalMs / 1000,
    });
  }
}
