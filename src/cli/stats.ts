/**
 * `edgekiq stats`: Sidekiq's dashboard numbers, read with the API's
 * {@link Stats} (two round trips), printed as aligned text or JSON.
 *
 * @module
 */
import { Stats, type StatsSnapshot } from "../api/stats.ts";
import type { Client } from "../client.ts";
import { sanitize } from "../sanitize.ts";

/**
 * Reads processed/failed counters, queue lengths, set sizes and processes.
 *
 * @example
 * ```ts
 * const stats = await collectStats(createClient({ transport }));
 * console.log(stats.processed, stats.queues.default);
 * ```
 */
export function collectStats(client: Client): Promise<StatsSnapshot> {
  return new Stats(client).fetch();
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
 * // ...
 * ```
 */
export function formatStats(stats: StatsSnapshot): string {
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
  const lines = rows.map(([k, v]) => `${k.padEnd(10)} ${v}`);
  const names = Object.keys(stats.queues);
  lines.push(names.length ? "queues:" : "queues:    (none)");
  const shown = names.map((name) => sanitize(name, 100));
  const width = Math.max(0, ...shown.map((n) => n.length));
  names.forEach((name, i) => lines.push(`  ${shown[i].padEnd(width)}  ${sanitize(String(stats.queues[name]), 40)}`));
  return lines.join("\n");
}
