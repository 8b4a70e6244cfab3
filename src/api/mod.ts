/**
 * Sidekiq's API (`lib/sidekiq/api.rb`) for edgekiq: inspect and manage
 * queues, the scheduled, retry and dead sets, live processes, running jobs
 * and the stats, over any transport (Upstash included: no KEYS), and
 * `cancelJob` (Sidekiq 8's `cancel!`). A feature's own API comes with its
 * entry point: metrics, periodic schedules, iteration state, unique locks
 * and profiles from `edgekiq/features`, batches from `edgekiq/batches`.
 *
 * @example
 * ```ts
 * import { createClient, memoryTransport } from "edgekiq";
 * import { Queue, RetrySet, Stats } from "edgekiq/api";
 *
 * const client = createClient({ transport: memoryTransport() });
 * for (const queue of await Queue.all(client)) console.log(queue.name, await queue.size());
 * await new RetrySet(client).retryAll();
 * console.log(await new Stats(client).fetch());
 * ```
 *
 * @module
 */
export { JobRecord } from "./job_record.ts";
export { Queue } from "./queue.ts";
export { SortedEntry } from "./sorted_entry.ts";
export { JobSet } from "./job_set.ts";
export type { JobSetName, JobSetOptions, PageOptions } from "./job_set.ts";
export { ScheduledSet } from "./scheduled_set.ts";
export { RetrySet } from "./retry_set.ts";
export { DeadSet } from "./dead_set.ts";
export type { DeadSetKillOptions } from "./dead_set.ts";
export { Process } from "./sidekiq_process.ts";
export type { ProcessData, ProcessSignal } from "./sidekiq_process.ts";
export { ProcessSet } from "./process_set.ts";
export { Workers } from "./workers.ts";
export type { Work } from "./workers.ts";
export { Stats } from "./stats.ts";
export type { StatName, StatsHistory, StatsSnapshot } from "./stats.ts";
export { cancelJob } from "./cancel_job.ts";
