/**
 * The core's series on the Prometheus endpoint: Sidekiq's counters, each
 * queue's size and latency, the sets, the processes and their busy slots,
 * read as the dashboard reads its header: three commands in two round
 * trips, whatever the number of processes and queues.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import { loadSnapshot } from "../../api/snapshot.ts";
import type { MetricFamily } from "./exposition.ts";

/**
 * Reads the core's series.
 *
 * @example
 * ```ts
 * const text = renderExposition(await coreSeries(client));
 * ```
 */
export async function coreSeries(client: Client<object>): Promise<MetricFamily[]> {
  const { stats, queues } = await loadSnapshot(client as Client, { latencies: true });
  const gauge = (name: string, help: string, value: number): MetricFamily => ({
    name,
    help,
    type: "gauge",
    samples: [{ value }],
  });
  return [
    {
      name: "edgekiq_processed_total",
      help: "Jobs processed, failed or not (Sidekiq's stat:processed).",
      type: "counter",
      samples: [{ value: stats.processed }],
    },
    {
      name: "edgekiq_failed_total",
      help: "Jobs that failed (Sidekiq's stat:failed).",
      type: "counter",
      samples: [{ value: stats.failed }],
    },
    {
      name: "edgekiq_queue_size",
      help: "Jobs waiting in each queue.",
      type: "gauge",
      samples: queues.map((q) => ({ labels: { queue: q.name }, value: q.size })),
    },
    {
      name: "edgekiq_queue_latency_seconds",
      help: "Seconds the oldest job of each queue has waited (0 when empty).",
      type: "gauge",
      samples: queues.map((q) => ({ labels: { queue: q.name }, value: Math.max(0, q.latency) })),
    },
    gauge("edgekiq_scheduled_size", "Jobs in the schedule set.", stats.scheduledSize),
    gauge("edgekiq_retry_size", "Jobs waiting to retry.", stats.retrySize),
    gauge("edgekiq_dead_size", "Jobs in the dead set.", stats.deadSize),
    gauge("edgekiq_processes", "Worker processes registered (edgekiq and Ruby Sidekiq).", stats.processesSize),
    gauge("edgekiq_busy", "Jobs running now, over all processes.", stats.workersSize),
  ];
}
