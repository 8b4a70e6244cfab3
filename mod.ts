/**
 * edgekiq: Sidekiq's background-job model for every JavaScript runtime.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { createClient, createWorker, defineJob, memoryTransport } from "@edgekiq/edgekiq";
 *
 * const HardJob = defineJob({
 *   name: "HardJob",
 *   args: v.tuple([v.string(), v.number()]),
 *   perform(ctx, name, count) { ctx.logger.info(`${name} x${count}`); },
 * });
 * const transport = memoryTransport();
 * await createClient({ transport }).push(HardJob, ["bob", 5]);
 * const worker = createWorker({ transport, jobs: [HardJob] });
 * await worker.run();
 * ```
 *
 * @module
 */
export { defineJob, validateArgs } from "./src/job.ts";
export { currentJob } from "./src/current_job.ts";
export type {
  AnyJob,
  Job,
  JobContext,
  JobOptions,
  JobPusher,
  JobSpec,
  JobSpecWithSchema,
  PushOptions,
  RetryInResult,
} from "./src/job.ts";
export { Client, createClient } from "./src/client.ts";
export { resolveRunAt } from "./src/push_options.ts";
export type { BulkPushOptions, ClientOptions } from "./src/client.ts";
export type { ClientMiddleware, ClientMiddlewareContext, PushContextOptions } from "./src/client_middleware.ts";
export type { PushResult, PushStatus } from "./src/push_result.ts";
export { decodeGuarded, GUARD_STATUS } from "./src/write_guard.ts";
export type { GuardedStatus, GuardedWrite, WriteGuard } from "./src/write_guard.ts";
export { UNIQUE_FIELD, uniqueJobs, UniqueLocks } from "./src/middleware/unique/mod.ts";
export type {
  CleanOrphansOptions,
  UniqueConflict,
  UniqueJobs,
  UniqueLock,
  UniqueMark,
  UniqueOptions,
  UniqueUntil,
} from "./src/middleware/unique/mod.ts";
export { createRegistry } from "./src/registry.ts";
export type { JobsInput, Registry } from "./src/registry.ts";
export { parsePayload, serializePayload, toEpochMs } from "./src/payload.ts";
export type { JobPayload, TimeFormat } from "./src/payload.ts";
export {
  ConfigError,
  Discard,
  EdgekiqError,
  Interrupt,
  JobArgsError,
  PayloadError,
  TransportError,
} from "./src/errors.ts";
export { PushError } from "./src/push_error.ts";
export type { PushOutcome } from "./src/push_error.ts";
export { globalId, keywords, performLater, rubySymbol } from "./src/activejob.ts";
export type { PerformLaterOptions } from "./src/activejob.ts";
export type { TransportErrorKind } from "./src/errors.ts";
export { createLogger, silentLogger } from "./src/logger.ts";
export type { LogFields, Logger, LoggerOptions, LogLevel } from "./src/logger.ts";
export { keys } from "./src/keys.ts";
export type { Keys } from "./src/keys.ts";
export { memoryTransport } from "./src/transport/memory.ts";
export { defineScript } from "./src/transport/script.ts";
export type { Script, ScriptRedis, ScriptTwin } from "./src/transport/script.ts";
export type {
  Command,
  PipelineOptions,
  RedisArg,
  RedisReply,
  Transport,
  TransportCounters,
} from "./src/transport/transport.ts";
export { createWorker } from "./src/server/launcher.ts";
export type { CapsuleConfig, Worker, WorkerEvent, WorkerOptions } from "./src/server/launcher.ts";
export { Poller, pollOnce } from "./src/server/poller.ts";
export { drain } from "./src/server/drain.ts";
export type { DrainOptions, DrainResult } from "./src/server/drain.ts";
export type { PollerOptions, PollResult } from "./src/server/poller.ts";
export type { ServerMiddleware } from "./src/server/middleware.ts";
export type { MissedPolicy, PeriodicSchedule } from "./src/periodic/mod.ts";
export type { DeathHandler } from "./src/dead_set_rules.ts";
export { recoverOrphans } from "./src/server/recovery.ts";
export type { RecoveryOptions, RecoveryResult } from "./src/server/recovery.ts";
export { currentRuntime, runtimeKey } from "./src/runtime/detect.ts";
export type { Runtime, RuntimeKey, SignalName } from "./src/runtime/runtime.ts";
export type { StandardSchemaV1 } from "./src/standard_schema.ts";
export {
  DeadSet,
  JobRecord,
  JobSet,
  Process,
  ProcessSet,
  Queue,
  RetrySet,
  ScheduledSet,
  SortedEntry,
  Stats,
  Workers,
} from "./src/api/mod.ts";
export type {
  DeadSetKillOptions,
  JobSetName,
  JobSetOptions,
  PageOptions,
  ProcessData,
  ProcessSignal,
  StatName,
  StatsHistory,
  StatsSnapshot,
  Work,
} from "./src/api/mod.ts";
export { VERSION } from "./src/version.ts";
export { markDeploy, Metrics, METRICS_PERIODS } from "./src/api/mod.ts";
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
} from "./src/api/mod.ts";
export { metricsClassName, MetricsTracker } from "./src/metrics/tracker.ts";
export type { MetricsFlushResult, MetricsTrackerOptions } from "./src/metrics/tracker.ts";
export { metricsMiddleware } from "./src/metrics/middleware.ts";
export { HISTOGRAM_BOUNDS, HISTOGRAM_LABELS } from "./src/metrics/histogram.ts";
