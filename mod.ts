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
export type { BulkPushOptions, ClientOptions } from "./src/client.ts";
export type { ClientMiddleware, ClientMiddlewareContext, PushContextOptions } from "./src/client_middleware.ts";
export type { ServerMiddleware, ServerMiddlewareTools } from "./src/server_middleware.ts";
export type { JobsInput } from "./src/registry.ts";
export type { PushResult, PushStatus } from "./src/push_result.ts";
export { UNIQUE_FIELD, uniqueJobs } from "./src/middleware/unique/mod.ts";
export type {
  UniqueConflict,
  UniqueJobs,
  UniqueMark,
  UniqueOptions,
  UniqueUntil,
} from "./src/middleware/unique/mod.ts";
export type { JobPayload, TimeFormat } from "./src/payload.ts";
export {
  ConfigError,
  Discard,
  EdgekiqError,
  Interrupt,
  IterationError,
  JobArgsError,
  PayloadError,
  TransportError,
} from "./src/errors.ts";
export type { TransportErrorKind } from "./src/errors.ts";
export { PushError } from "./src/push_error.ts";
export type { PushOutcome } from "./src/push_error.ts";
export { globalId, keywords, performLater, rubySymbol } from "./src/activejob.ts";
export type { PerformLaterOptions } from "./src/activejob.ts";
export { createLogger, silentLogger } from "./src/logger.ts";
export type { LogFields, Logger, LoggerOptions, LogLevel } from "./src/logger.ts";
export { memoryTransport } from "./src/transport/memory.ts";
export type { Transport } from "./src/transport/transport.ts";
export { createWorker } from "./src/server/launcher.ts";
export type { CapsuleConfig, RunningJob, Worker, WorkerEvent, WorkerOptions } from "./src/server/launcher.ts";
export { pollOnce } from "./src/server/poller.ts";
export type { PollerOptions, PollResult } from "./src/server/poller.ts";
export { drain } from "./src/server/drain.ts";
export type { DrainOptions, DrainResult } from "./src/server/drain.ts";
export type { MissedPolicy, PeriodicSchedule } from "./src/periodic/mod.ts";
export type { DeathHandler } from "./src/dead_set_rules.ts";
export type { MetricsTrackerOptions } from "./src/metrics/tracker.ts";
export type { StandardSchemaV1 } from "./src/standard_schema.ts";
export { VERSION } from "./src/version.ts";
export { defineIterableJob } from "./src/iterable/define_iterable_job.ts";
export { cancelJob } from "./src/iterable/cancel.ts";
export type {
  IterableJobSpec,
  IterableJobSpecWithSchema,
  IterationHook,
  IterationHooks,
  IterationOptions,
  IterationSource,
} from "./src/iterable/define_iterable_job.ts";
export type { IterationContext } from "./src/iterable/iteration_run.ts";
export { iterateArray, iterateKeyset, iterateRange } from "./src/iterable/enumerators.ts";
export type { IterationStep, KeysetOptions, RangeOptions } from "./src/iterable/enumerators.ts";
