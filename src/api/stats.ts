/**
 * Cluster-wide numbers (Sidekiq's `Stats` and `Stats::History`): lifetime
 * and daily processed/failed counters, queue and set sizes, busy workers.
 *
 * @module
 */
import type { Client } from "../client.ts";
import type { Command } from "../transport/transport.ts";
import { enqueuedLatency } from "./job_record.ts";
import { invalid } from "./util.ts";
import { arr, num, str } from "../transport/reply_readers.ts";

/** The two counters Sidekiq keeps. */
export type StatName = "processed" | "failed";

/** What {@link Stats.fetch} reads. */
export interface StatsSnapshot {
  /** Jobs finished, ever (`stat:processed`). */
  processed: number;
  /** Jobs failed, ever (`stat:failed`). */
  failed: number;
  /** Jobs waiting in all known queues. */
  enqueued: number;
  /** Entries in `schedule`. */
  scheduledSize: number;
  /** Entries in `retry`. */
  retrySize: number;
  /** Entries in `dead`. */
  deadSize: number;
  /** Members of `processes`. */
  processesSize: number;
  /** Jobs running: the sum of every process's `busy`. */
  workersSize: number;
  /** Seconds the oldest job in `default` has waited. */
  defaultQueueLatency: number;
  /** Each known queue's length, longest first. */
  queues: Record<string, number>;
}

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
   * Everything at once, in two round trips (Sidekiq's `fetch_stats_fast!`
   * and `fetch_stats_slow!`): counters, set sizes, the default queue's
   * oldest job and the member lists; then every process's `busy` and every
   * queue's length.
   *
   * @example
   * ```ts
   * const { enqueued, workersSize } = await new Stats(client).fetch();
   * ```
   */
  async fetch(): Promise<StatsSnapshot> {
    const k = this.#client.keys;
    const t = this.#client.transport;
    const [processed, failed, scheduled, retries, dead, processCount, oldest, processes, queues] = await t.pipeline([
      ["GET", k.stat("processed")],
      ["GET", k.stat("failed")],
      ["ZCARD", k.schedule],
      ["ZCARD", k.retry],
      ["ZCARD", k.dead],
      ["SCARD", k.processes],
      ["LRANGE", k.queue("default"), -1, -1],
      ["SMEMBERS", k.processes],
      ["SMEMBERS", k.queues],
    ]);
    const ids = arr(processes).map((m) => str(m) ?? "");
    const names = arr(queues).map((m) => str(m) ?? "");
    const second: Command[] = [
      ...ids.map((id): Command => ["HGET", k.process(id), "busy"]),
      ...names.map((q): Command => ["LLEN", k.queue(q)]),
    ];
    const replies = second.length ? await t.pipeline(second) : [];
    const lengths = names.map((q, i) => [q, num(replies[ids.length + i])] as const);
    lengths.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    return {
      processed: num(processed),
      failed: num(failed),
      enqueued: lengths.reduce((sum, [, n]) => sum + n, 0),
      scheduledSize: num(scheduled),
      retrySize: num(retries),
      deadSize: num(dead),
      processesSize: num(processCount),
      workersSize: replies.slice(0, ids.length).reduce<number>((sum, busy) => sum + num(busy), 0),
      defaultQueueLatency: enqueuedLatency(str(arr(oldest)[0])),
      queues: Object.fromEntries(lengths),
    };
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
    const k = this.#client.keys;
    await this.#client.transport.call("MSET", ...which.flatMap((name) => [k.stat(name), 0]));
  }
}
