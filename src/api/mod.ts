/**
 * Sidekiq's API (`lib/sidekiq/api.rb`) for edgekiq: inspect and manage
 * queues, the scheduled, retry and dead sets, live processes, running jobs
 * and the stats, over any transport (Upstash included: no KEYS).
 *
 * @example
 * ```ts
 * import { createClient, memoryTransport, Queue, RetrySet, Stats } from "@edgekiq/edgekiq";
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
export { JobSet } from "./sorted_set.ts";
export type { JobSetName, JobSetOptions, PageOptions } from "./sorted_set.ts";
export { ScheduledSet } from "./scheduled_set.ts";
export { RetrySet } from "./retry_set.ts";
export { DeadSet } from "./dead_set.ts";
export type { DeadSetKillOptions } from "./dead_set.ts";
export { Process } from "./worker_process.ts";
export type { ProcessData, ProcessSignal } from "./worker_process.ts";
export { ProcessSet } from "./process_set.ts";
export { Workers } from "./workers.ts";
export type { Work } from "./workers.ts";
export { Stats } from "./stats.ts";
export type { StatName, StatsHistory, StatsSnapshot } from "./stats.ts";
export { markDeploy } from "./deploy_marks.ts";
export { Metrics, METRICS_PERIODS } from "./metrics.ts";
export type {
  DeployMark,
  JobMetrics,
  JobMetricsResult,
  MetricsCounts,
  MetricsFormat,
  MetricsOptions,
  MetricsPeriod,
  MetricsQueryOptions,
  MetricsResult,
  TopJobsResult,
} from "./metrics.ts";
export { type PeriodicEntry, PeriodicSet } from "./periodic_set.ts";
export { iterationStates } from "./iteration_states.ts";
export type { IterationState } from "./iteration_states.ts";
export { UniqueLocks } from "./unique_locks.ts";
export type { CleanOrphansOptions, UniqueLock } from "./unique_locks.ts";
