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
export { Client, createClient, resolveRunAt } from "./src/client.ts";
export type { BulkPushOptions, ClientOptions } from "./src/client.ts";
export type { ClientMiddleware, ClientMiddlewareContext } from "./src/client_middleware.ts";
export { createRegistry } from "./src/registry.ts";
export type { JobsInput, Registry } from "./src/registry.ts";
export { parsePayload, serializePayload, toEpochMs } from "./src/payload.ts";
export type { JobPayload, TimeFormat } from "./src/payload.ts";
export { ConfigError, Discard, EdgekiqError, JobArgsError, PayloadError, TransportError } from "./src/errors.ts";
export type { TransportErrorKind } from "./src/errors.ts";
export { createLogger, silentLogger } from "./src/logger.ts";
export type { LogFields, Logger, LoggerOptions, LogLevel } from "./src/logger.ts";
export { keys } from "./src/keys.ts";
export type { Keys } from "./src/keys.ts";
export { memoryTransport } from "./src/transport/memory.ts";
export { defineScript } from "./src/transport/script.ts";
export type { Script, ScriptRedis, ScriptTwin } from "./src/transport/script.ts";
export type {
  BlockOptions,
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
export type { DeathHandler } from "./src/server/retry.ts";
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
