/**
 * `edgekiq stats`: Sidekiq's dashboard numbers, read in the two round trips
 * `Stats.fetch()` takes, printed as aligned text or JSON.
 *
 * @module
 */
import { loadSnapshot } from "../api/snapshot.ts";
import type { StatsSnapshot } from "../api/stats.ts";
import type { Client } from "../client.ts";
import { sanitize } from "../sanitize.ts";

/**
 * Reads processed/failed counters, queue lengths, set sizes and processes.
 * Processes are counted as `ProcessSet` lists them: a member of `processes`
 * whose heartbeat hash has expired (a process killed without unregistering)
 * is gone, and neither it nor its last busy count is shown.
 *
 * @example
 * ```ts
 * const stats = await collectStats(createClient({ transport }));
 * console.log(stats.processed, stats.queues.default);
 * ```
 */
export async function collectStats(client: Client): Promise<CliStats> {
  const snapshot = await loadSnapshot(client);
  return { ...snapshot.stats, paused: snapshot.paused };
}

/** What `edgekiq stats` prints: Sidekiq's counters, and the queues paused (`edgekiq queue pause`). */
export interface CliStats extends StatsSnapshot {
  /** Paused queues, by name. */
  paused: string[];
}

/**
 * Formats stats as aligned text lines. Queue names come from Redis, where
 * any process (or anyone who can reach it) may have written them: they are
 * escaped and cut to 100 characters, so a name cannot drive the terminal or
 * flood it.
 *
 * @example
 * ```ts
 * console.log(formatStats(await collectStats(client)));
 * // processed  12
 * // failed     1
 * // paused     mailers
 * // ...
 * ```
 */
export function formatStats(stats: CliStats): string {
  const rows: Array<[string, string | number]> = [
    ["processed", stats.processed],
    ["failed", stats.failed],
    ["enqueued", stats.enqueued],
    ["scheduled", stats.scheduledSize],
    ["retries", stats.retrySize],
    ["dead", stats.deadSize],
    ["processes", `${stats.processesSize} (busy ${stats.workersSize})`],
    ["latency", `${stats.defaultQueueLatency.toFixed(1)} s (default queue)`],
  ];
  if (stats.paused.length) rows.push(["paused", stats.paused.map((name) => sanitize(name, 100)).join(", ")]);
  const lines = rows.map(([k, v]) => `${k.padEnd(10)} ${v}`);
  const paused = new Set(stats.paused);
  const names = Object.keys(stats.queues);
  lines.push(names.length ? "queues:" : "queues:    (none)");
  const shown = names.map((name) => sanitize(name, 100));
  const width = Math.max(0, ...shown.map((n) => n.length));
  names.forEach((name, i) =>
    lines.push(
      `  ${shown[i].padEnd(width)}  ${sanitize(String(stats.queues[name]), 40)}${paused.has(name) ? "  (paused)" : ""}`,
    )
  );
  return lines.join("\n");
}
