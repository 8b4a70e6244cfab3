/**
 * Cluster-wide numbers (Sidekiq's `Stats` and `Stats::History`): lifetime
 * and daily processed/failed counters, queue and set sizes, busy workers.
 *
 * @module
 */
import type { Client } from "../client.ts";
import { num } from "../transport/reply_readers.ts";
import { loadSnapshot, type StatsSnapshot } from "./snapshot.ts";
import { invalid } from "./arguments.ts";

export type { StatsSnapshot };

/** The two counters Sidekiq keeps. */
export type StatName = "processed" | "failed";

/** Daily counters, newest day first, keyed `YYYY-MM-DD` (UTC). */
export interface StatsHistory {
  /** Jobs finished each day. */
  processed: Record<string, number>;
  /** Jobs failed each day. */
  failed: Record<string, number>;
}

/**
 * Reads and resets the counters.
 *
 * @example
 * ```ts
 * const stats = new Stats(client);
 * const { processed, failed, enqueued, retrySize } = await stats.fetch();
 * const { processed: perDay } = await stats.history(7); // { "2024-01-31": 120, ... }
 * ```
 */
export class Stats {
  #client: Client;

  /**
   * Reads stats through `client`.
   *
   * @param client The client whose transport and key prefix to use.
   */
  constructor(client: Client) {
    this.#client = client;
  }

  /**
   * Everything at once, in two round trips and three commands however many
   * processes and queues there are: the `processes` and `queues` members in
   * one pipeline, then one read-only script over the counters, the set
   * sizes, the default queue's oldest job, every process's `busy` and every
   * queue's length (Sidekiq's `fetch_stats_fast!` and `fetch_stats_slow!`
   * pipeline those as 9 + processes + queues commands, each billed on
   * Upstash).
   *
   * @example
   * ```ts
   * const { enqueued, workersSize } = await new Stats(client).fetch();
   * ```
   */
  async fetch(): Promise<StatsSnapshot> {
    return (await loadSnapshot(this.#client)).stats;
  }

  /**
   * The daily counters for `days` days back from `startDate` (default
   * today, UTC), one MGET per counter in one round trip. Missing days
   * read 0.
   *
   * @example
   * ```ts
   * const { processed, failed } = await stats.history(30);
   * ```
   */
  async history(days: number, startDate: Date = new Date()): Promise<StatsHistory> {
    if (!Number.isInteger(days) || days <= 0) throw invalid("read stats history", "days", "a whole number > 0", days);
    if (!(startDate instanceof Date) || Number.isNaN(startDate.getTime())) {
      throw invalid("read stats history", "startDate", "a valid Date", startDate);
    }
    const shards = this.#client.shards;
    if (shards.length > 1) {
      // A sharded namespace counts in every shard: the days summed.
      const each = await Promise.all(shards.map((shard) => new Stats(shard).history(days, startDate)));
      const add = (pick: (h: StatsHistory) => Record<string, number>) => {
        const total: Record<string, number> = {};
        for (const h of each) for (const [day, n] of Object.entries(pick(h))) total[day] = (total[day] ?? 0) + n;
        return total;
      };
      return { processed: add((h) => h.processed), failed: add((h) => h.failed) };
    }
    const k = this.#client.keys;
    const dates: string[] = [];
    const start = Date.UTC(startDate.getUTCFullYear(), startDate.getUTCMonth(), startDate.getUTCDate());
    for (let i = 0; i < days; i++) dates.push(new Date(start - i * 86_400_000).toISOString().slice(0, 10));
    const [processed, failed] = await this.#client.transport.pipeline([
      ["MGET", ...dates.map((d) => k.statDay("processed", d))],
      ["MGET", ...dates.map((d) => k.statDay("failed", d))],
    ]);
    const byDay = (reply: unknown): Record<string, number> => {
      const values = Array.isArray(reply) ? reply : [];
      return Object.fromEntries(dates.map((d, i) => [d, num(values[i] ?? null)]));
    };
    return { processed: byDay(processed), failed: byDay(failed) };
  }

  /**
   * Sets lifetime counters to 0: both, or only those named. Daily counters
   * are kept, as Sidekiq.
   *
   * @example
   * ```ts
   * await stats.reset("failed");
   * ```
   */
  async reset(...names: StatName[]): Promise<void> {
    for (const name of names) {
      if (name !== "processed" && name !== "failed") {
        throw invalid("reset stats", "name", `"processed" or "failed"`, name);
      }
    }
    const which: StatName[] = names.length ? [...new Set(names)] : ["processed", "failed"];
    // Every shard's counters (one MSET each: their keys are in different slots).
    await Promise.all(
      this.#client.shards.map(({ keys: k, transport }) =>
        transport.call("MSET", ...which.flatMap((name) => [k.stat(name), 0]))
      ),
    );
  }
}
