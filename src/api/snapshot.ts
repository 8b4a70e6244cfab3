/**
 * Sidekiq's `Stats` in two round trips and three billed commands whatever
 * the size of the fleet: SMEMBERS of `processes` and `queues` in one
 * pipeline, then one {@link readBatch} script over every key they name.
 * `Stats.fetch()` reads the counters this way; the dashboard also asks for
 * each live process with its running jobs and each queue's latency, in the
 * same two round trips.
 *
 * @module
 */
import type { Client } from "../client.ts";
import { readBatch } from "../scripts/read_batch.ts";
import { arr, num, str } from "../transport/reply_readers.ts";
import type { Command } from "../transport/transport.ts";
import { enqueuedLatency } from "./job_record.ts";
import { FIELDS, toData } from "./process_set.ts";
import { Process } from "./sidekiq_process.ts";
import { processWork, type Work } from "./workers.ts";

/** What `Stats.fetch()` reads. */
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
  /**
   * Live processes: members of `processes` whose heartbeat has not expired
   * (a process killed before it could unregister is not counted), as
   * `ProcessSet` lists them.
   */
  processesSize: number;
  /** Jobs running: the sum of every process's `busy`. */
  workersSize: number;
  /** Seconds the oldest job in `default` has waited. */
  defaultQueueLatency: number;
  /** Each known queue's length, longest first. */
  queues: Record<string, number>;
}

/** One queue's row (the dashboard's Queues page). */
export interface QueueRow {
  /** The queue name. */
  name: string;
  /** Jobs waiting. */
  size: number;
  /** Seconds the oldest job has waited (0 unless latencies were asked for). */
  latency: number;
  /** Whether it is paused (`Queue#pause`): no edgekiq process takes its jobs. */
  paused: boolean;
}

/** What {@link loadSnapshot} read. */
export interface Snapshot {
  /** The counters, as `Stats.fetch()` reports them. */
  stats: StatsSnapshot;
  /** Live processes by identity (only with `processes: true`). */
  processes: Process[];
  /** Running jobs, oldest first (only with `processes: true`). */
  work: Work[];
  /** Every known queue, by name. */
  queues: QueueRow[];
  /** Every paused queue, by name (one paused before anything was pushed to it too). */
  paused: string[];
}

/** The commands read before the per-process and per-queue ones. */
const FIXED = 7;

/** What to read beyond the counters. */
export interface SnapshotOptions {
  /** Each live process's heartbeat and running jobs. */
  processes?: boolean;
  /** Each queue's oldest job, for its latency. */
  latencies?: boolean;
}

/**
 * Reads the counters and, optionally, processes and queue latencies.
 *
 * @example
 * ```ts
 * const { stats, processes } = await loadSnapshot(client, { processes: true });
 * ```
 */
export async function loadSnapshot(client: Client, options: SnapshotOptions = {}): Promise<Snapshot> {
  const shards = client.shards;
  // A sharded namespace: each shard read side by side (two round trips each), then summed.
  if (shards.length > 1) return mergeSnapshots(await Promise.all(shards.map((shard) => loadSnapshot(shard, options))));
  const k = client.keys;
  const [idsReply, namesReply] = await client.transport.pipeline([["SMEMBERS", k.processes], [
    "SMEMBERS",
    k.queues,
  ]]);
  const ids = members(idsReply);
  const names = members(namesReply);
  const perProcess = options.processes ? 3 : 1;
  const perQueue = options.latencies ? 2 : 1;
  const commands: Command[] = [
    ["GET", k.stat("processed")],
    ["GET", k.stat("failed")],
    ["ZCARD", k.schedule],
    ["ZCARD", k.retry],
    ["ZCARD", k.dead],
    ["LINDEX", k.queue("default"), -1],
    // Read in the same script: the paused queues cost no command of their own.
    ["SMEMBERS", k.paused],
  ];
  for (const id of ids) {
    if (options.processes) {
      commands.push(["HMGET", k.process(id), ...FIELDS], ["HGETALL", k.work(id)], ["HGETALL", k.legacyWork(id)]);
    } else commands.push(["HGET", k.process(id), "busy"]); // nil once the heartbeat expired
  }
  for (const name of names) {
    commands.push(["LLEN", k.queue(name)]);
    if (options.latencies) commands.push(["LINDEX", k.queue(name), -1]);
  }
  const replies = await readBatch(client.transport, commands);
  const [processed, failed, scheduled, retries, dead, oldest, pausedReply] = replies;
  const paused = members(pausedReply);
  const pausedSet = new Set(paused);

  const processes: Process[] = [];
  const work: Work[] = [];
  let busy = 0;
  let live = 0;
  ids.forEach((id, i) => {
    const at = FIXED + i * perProcess;
    // A member whose hash expired is a process that died without
    // unregistering: neither it nor its last busy count is counted.
    if (!options.processes) {
      if (replies[at] === null) return;
      live++;
      return void (busy += num(replies[at]));
    }
    const data = toData(replies[at]);
    if (!data) return;
    live++;
    busy += data.busy;
    processes.push(new Process(client, id, data));
    work.push(...processWork(id, replies[at + 1], replies[at + 2]));
  });
  const queueStart = FIXED + ids.length * perProcess;
  const queues = names.map((name, i): QueueRow => {
    const at = queueStart + i * perQueue;
    return {
      name,
      size: num(replies[at]),
      latency: options.latencies ? enqueuedLatency(str(replies[at + 1])) : 0,
      paused: pausedSet.has(name),
    };
  });
  const bySize = [...queues].sort((a, b) => b.size - a.size || (a.name < b.name ? -1 : 1));
  return {
    stats: {
      processed: num(processed),
      failed: num(failed),
      enqueued: queues.reduce((sum, q) => sum + q.size, 0),
      scheduledSize: num(scheduled),
      retrySize: num(retries),
      deadSize: num(dead),
      processesSize: live,
      workersSize: busy,
      defaultQueueLatency: enqueuedLatency(str(oldest)),
      queues: Object.fromEntries(bySize.map((q) => [q.name, q.size])),
    },
    processes,
    work: work.sort((a, b) => a.runAt.getTime() - b.runAt.getTime()),
    queues,
    paused,
  };
}

/**
 * The shards' snapshots as one namespace's: counters and sizes summed, each
 * queue's size summed and its latency the longest (its oldest job is in one
 * of them), a queue paused if it is paused in any shard, every process.
 */
function mergeSnapshots(parts: Snapshot[]): Snapshot {
  const sum = (pick: (s: StatsSnapshot) => number) => parts.reduce((n, p) => n + pick(p.stats), 0);
  const byName = new Map<string, QueueRow>();
  for (const row of parts.flatMap((p) => p.queues)) {
    const seen = byName.get(row.name);
    byName.set(
      row.name,
      seen
        ? {
          name: row.name,
          size: seen.size + row.size,
          latency: Math.max(seen.latency, row.latency),
          paused: seen.paused || row.paused,
        }
        : { ...row },
    );
  }
  const queues = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const bySize = [...queues].sort((a, b) => b.size - a.size || (a.name < b.name ? -1 : 1));
  return {
    stats: {
      processed: sum((s) => s.processed),
      failed: sum((s) => s.failed),
      enqueued: sum((s) => s.enqueued),
      scheduledSize: sum((s) => s.scheduledSize),
      retrySize: sum((s) => s.retrySize),
      deadSize: sum((s) => s.deadSize),
      processesSize: sum((s) => s.processesSize),
      workersSize: sum((s) => s.workersSize),
      defaultQueueLatency: Math.max(...parts.map((p) => p.stats.defaultQueueLatency)),
      queues: Object.fromEntries(bySize.map((q) => [q.name, q.size])),
    },
    processes: parts.flatMap((p) => p.processes).sort((a, b) => (a.identity < b.identity ? -1 : 1)),
    work: parts.flatMap((p) => p.work).sort((a, b) => a.runAt.getTime() - b.runAt.getTime()),
    queues,
    paused: [...new Set(parts.flatMap((p) => p.paused))].sort(),
  };
}

function members(reply: Parameters<typeof arr>[0]): string[] {
  return arr(reply).map((m) => str(m) ?? "").filter((m) => m !== "").sort();
}
