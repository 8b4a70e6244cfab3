/**
 * `edgekiq/extend`: the extension interface, for those who write a Redis
 * transport, middleware that reads or writes Redis itself, or their own
 * serverless glue. Applications need only `edgekiq`.
 *
 * - **Transports**: implement {@link Transport} (`call`, `pipeline`,
 *   `script`, `block`, `close`, `blocking`, `counters`), map errors with
 *   {@link toTransportError}, count with {@link newCounters}/{@link countTrip},
 *   and pass the conformance suite in the repository's `test/transport/`.
 * - **Scripts**: {@link defineScript} declares a Lua script with its KEYS and
 *   ARGV header and a JavaScript twin the memory transport runs; every key it
 *   touches goes in KEYS.
 * - **Keys**: {@link keys} names every Redis key edgekiq and Sidekiq use.
 * - **Payloads**: {@link parsePayload} and {@link serializePayload} read and
 *   write Sidekiq's job JSON (Sidekiq 7 float seconds, Sidekiq 8 integer
 *   milliseconds).
 * - **Serverless glue**: {@link registerPeriodic} and
 *   {@link enqueueDuePeriodic} are what `pollOnce()` does for cron schedules;
 *   {@link recoverOrphans} what it does for dead processes.
 * - **Metrics**: {@link MetricsTracker} records and flushes execution metrics
 *   in Sidekiq's format, for engines of your own.
 * - **Write guards**: a client middleware can route a job's write through a
 *   script of its own (`ctx.guard`), as unique jobs do to lock and push in one
 *   step; {@link decodeGuarded} reads what such a script returns.
 *
 * @example
 * ```ts
 * import { defineScript, keys } from "edgekiq/extend";
 * const k = keys("myapp");
 * const touch = defineScript({
 *   name: "touch", keys: ["key"], argv: ["ttl"],
 *   lua: `return redis.call("EXPIRE", KEYS[1], ARGV[1])`,
 *   twin: (redis, keys, argv) => redis.call("EXPIRE", keys[0], argv[0]),
 * });
 * ```
 *
 * @module
 */
export { defineScript, runScript } from "./transport/script.ts";
export type { Script, ScriptRedis, ScriptTwin } from "./transport/script.ts";
export { BLOCKING_COMMANDS, countTrip, IDEMPOTENT_COMMANDS, isIdempotent, newCounters } from "./transport/transport.ts";
export type {
  BlockOptions,
  Command,
  PipelineOptions,
  RedisArg,
  RedisReply,
  Transport,
  TransportCounters,
} from "./transport/transport.ts";
export { toTransportError, TransportError } from "./errors.ts";
export type { TransportErrorKind } from "./errors.ts";
export { keys } from "./keys.ts";
export type { Keys } from "./keys.ts";
export { parsePayload, serializePayload, toEpochMs } from "./payload.ts";
export type { JobPayload, TimeFormat } from "./payload.ts";
export { enqueueDuePeriodic, registerPeriodic } from "./periodic/mod.ts";
export type {
  EnqueueDuePeriodicOptions,
  EnqueueDuePeriodicResult,
  RegisterPeriodicOptions,
  RegisterPeriodicResult,
} from "./periodic/mod.ts";
export { recoverOrphans } from "./server/recovery.ts";
export type { RecoveryOptions, RecoveryResult } from "./server/recovery.ts";
export { metricsClassName, MetricsTracker } from "./metrics/tracker.ts";
export type { MetricsFlushResult, MetricsTrackerOptions } from "./metrics/tracker.ts";
export { metricsMiddleware } from "./metrics/middleware.ts";
export { decodeGuarded, GUARD_STATUS } from "./write_guard.ts";
export type { GuardedStatus, GuardedWrite, WriteGuard } from "./write_guard.ts";
