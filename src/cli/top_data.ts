/**
 * What `edgekiq top` reads on each refresh, through the admin API: the
 * counters, every queue with its latency, every live process with its
 * running jobs (one `loadSnapshot`: two round trips however large the
 * fleet), and one window of the retry and dead sets, as many entries as the
 * screen shows (one ZRANGE each, sent together). Nothing is scanned, so a
 * refresh costs the same with 10 retries or 10 million.
 *
 * @module
 */
import { DeadSet } from "../api/dead_set.ts";
import { RetrySet } from "../api/retry_set.ts";
import { loadSnapshot, type QueueRow } from "../api/snapshot.ts";
import type { SortedEntry } from "../api/sorted_entry.ts";
import type { StatsSnapshot } from "../api/stats.ts";
import type { Process } from "../api/sidekiq_process.ts";
import type { Work } from "../api/workers.ts";
import type { Client } from "../client.ts";

/** One window of a job set: `entries` from rank `start`, of `size` in all. */
export interface SetWindow {
  start: number;
  entries: SortedEntry[];
  size: number;
}

/** One refresh's worth of data. */
export interface TopData {
  stats: StatsSnapshot;
  /** Every known queue, longest first. */
  queues: QueueRow[];
  /** Live processes (expired heartbeats left out), by identity. */
  processes: Process[];
  /** Running jobs, oldest first. */
  work: Work[];
  /** Retries, soonest first. */
  retries: SetWindow;
  /** Dead jobs, most recent death first. */
  dead: SetWindow;
  /** When it was read (epoch ms). */
  at: number;
}

/** Which window of each set to read. */
export interface TopWindows {
  retries: { start: number; count: number };
  dead: { start: number; count: number };
}

/**
 * Reads everything `top` shows: three round trips, the set windows bounded
 * by `windows` (the rows on screen).
 *
 * @example
 * ```ts
 * const data = await loadTop(client, { retries: { start: 0, count: 10 }, dead: { start: 0, count: 10 } });
 * data.stats.retrySize; // 42
 * ```
 */
export async function loadTop(client: Client, windows: TopWindows): Promise<TopData> {
  const retrySet = new RetrySet(client);
  const deadSet = new DeadSet(client);
  const [snapshot, retries, dead] = await Promise.all([
    loadSnapshot(client, { processes: true, latencies: true }),
    retrySet.page(windows.retries.start, Math.max(1, windows.retries.count)),
    deadSet.page(windows.dead.start, Math.max(1, windows.dead.count), { reverse: true }),
  ]);
  const stats = snapshot.stats;
  return {
    stats,
    queues: [...snapshot.queues].sort((a, b) => b.size - a.size || (a.name < b.name ? -1 : 1)),
    processes: snapshot.processes,
    work: snapshot.work,
    retries: { start: windows.retries.start, entries: retries, size: stats.retrySize },
    dead: { start: windows.dead.start, entries: dead, size: stats.deadSize },
    at: Date.now(),
  };
}
