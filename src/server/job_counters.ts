/**
 * Processed and failed counters, kept in memory and flushed as a few INCRBYs
 * in the heartbeat's MULTI, never one round trip per job.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import type { Command } from "../transport/transport.ts";

/** Daily counters live five years, as Sidekiq's STATS_TTL. */
export const STATS_TTL = 5 * 365 * 24 * 60 * 60;

/**
 * The four counter keys a flush adds to, in the order the heartbeat script
 * takes them: `stat:processed`, `stat:failed`, and the day's two.
 *
 * @example
 * ```ts
 * statKeys(keys(), new Date()); // ["stat:processed", "stat:failed", "stat:processed:2026-11-23", ...]
 * ```
 */
export function statKeys(k: Keys, now: Date): [string, string, string, string] {
  const day = now.toISOString().slice(0, 10);
  return [k.stat("processed"), k.stat("failed"), k.statDay("processed", day), k.statDay("failed", day)];
}

/**
 * In-memory job counters (the admin API's `Stats` reads what they add up to).
 *
 * @example
 * ```ts
 * const stats = new JobCounters();
 * stats.processed++;
 * const commands = stats.drain(keys()); // INCRBY stat:processed 1, ...
 * ```
 */
export class JobCounters {
  /** Jobs finished (successfully or not) since the last drain. */
  processed = 0;
  /** Jobs failed since the last drain. */
  failed = 0;

  /**
   * Returns the commands that add the counts to Redis and resets them. If
   * the write fails, call {@link Stats.restore} with what was drained.
   */
  drain(k: Keys, now: Date = new Date()): { commands: Command[]; processed: number; failed: number } {
    const { processed, failed } = this.take();
    const [processedKey, failedKey, processedDay, failedDay] = statKeys(k, now);
    const commands: Command[] = [];
    for (
      const [total, daily, n] of [[processedKey, processedDay, processed], [failedKey, failedDay, failed]] as const
    ) {
      if (n === 0) continue;
      commands.push(["INCRBY", total, n], ["INCRBY", daily, n], ["EXPIRE", daily, STATS_TTL]);
    }
    return { commands, processed, failed };
  }

  /** Takes the counts and resets them (for the heartbeat script). */
  take(): { processed: number; failed: number } {
    const taken = { processed: this.processed, failed: this.failed };
    this.processed = 0;
    this.failed = 0;
    return taken;
  }

  /** Puts drained counts back after a failed write, so none are lost. */
  restore(drained: { processed: number; failed: number }): void {
    this.processed += drained.processed;
    this.failed += drained.failed;
  }
}
