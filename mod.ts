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
// Jobs
export { defineIterableJob, defineJob } from "./src/features/preset/define.ts";
export type { AllJobOptions as JobOptions, AllPushOptions as PushOptions } from "./src/features/preset/built_in.ts";
export type { AnyJob, Job, JobContext, JobPusher, JobSpec, JobSpecWithSchema, RetryInResult } from "./src/job.ts";
export { currentJob } from "./src/current_job.ts";
export { Discard, Interrupt, RunLater } from "./src/control.ts";
// Pushing
export { Client } from "./src/client.ts";
export type { BulkPushOptions, ClientOptions } from "./src/client.ts";
export type { ReliablePushOptions } from "./src/push_buffer.ts";
export { createClient } from "./src/features/preset/create_client.ts";
export type { PushResult, PushStatus } from "./src/push_result.ts";
export { globalId, keywords, performLater, rubySymbol } from "./src/activejob.ts";
export type { PerformLaterOptions } from "./src/activejob.ts";
// Running
export { createWorker } from "./src/features/preset/create_worker.ts";
export type { WorkerPresetOptions as WorkerOptions } from "./src/features/preset/create_worker.ts";
export type { CapsuleConfig, RunningJob, Worker, WorkerEvent } from "./src/server/launcher.ts";
export type { UnknownJobPolicy } from "./src/server/processor.ts";
export { drain, pollAndDrain, pollOnce } from "./src/features/preset/serverless.ts";
export type {
  DrainPresetOptions as DrainOptions,
  PollOncePresetOptions as PollOnceOptions,
  TickOptions,
  TickResult,
} from "./src/features/preset/serverless.ts";
export type { DrainResult } from "./src/server/drain.ts";
export type { PollResult } from "./src/server/poller.ts";
// Middleware and features (the optional features are in `edgekiq/features`)
export type { ClientMiddleware, ClientMiddlewareContext, PushContextOptions } from "./src/client_middleware.ts";
export type { ServerMiddleware, ServerMiddlewareTools } from "./src/server_middleware.ts";
export type { DeathHandler } from "./src/dead_set_rules.ts";
export type { Feature } from "./src/features/feature.ts";
export { cancelJob } from "./src/api/cancel_job.ts";
// Iterable jobs (cancelled with `cancelJob`, above)
export type {
  IterableJobSpec,
  IterableJobSpecWithSchema,
  IterationHook,
  IterationHooks,
  IterationOptions,
  IterationSource,
} from "./src/features/iterable/define_iterable_job.ts";
export type { IterationContext } from "./src/features/iterable/iteration_run.ts";
export { iterateArray, iterateKeyset, iterateRange } from "./src/features/iterable/enumerators.ts";
export type { IterationStep, KeysetOptions, RangeOptions } from "./src/features/iterable/enumerators.ts";
// Payloads, errors, logging, transport
export type { JobPayload, TimeFormat } from "./src/payload.ts";
export {
  BatchError,
  ConfigError,
  EdgekiqError,
  EncryptionError,
  IterationError,
  JobArgsError,
  PayloadError,
} from "./src/errors.ts";
export { TransportError } from "./src/transport/transport_error.ts";
export type { TransportErrorKind } from "./src/transport/transport_error.ts";
export { PushBufferFullError, PushError } from "./src/push_error.ts";
export type { PushOutcome } from "./src/push_error.ts";
export { createLogger, silentLogger } from "./src/logger.ts";
export type { LogFields, Logger, LoggerOptions, LogLevel } from "./src/logger.ts";
export { memoryTransport } from "./src/transport/adapters/memory/memory_transport.ts";
export type { Transport } from "./src/transport/transport.ts";
export type { Keyspace } from "./src/keys.ts";
export { VERSION } from "./src/version.ts";
