/**
 * The options a worker takes: its jobs, capsules, timings and hooks.
 *
 * @module
 */
import type { Keyspace } from "../keys.ts";
import type { ClientMiddleware } from "../client_middleware.ts";
import { ConfigError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { type TimeFormat } from "../payload.ts";
import { describeValue } from "../describe_value.ts";
import type { JobsInput } from "../registry.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { Transport } from "../transport/transport.ts";
import type { ServerMiddleware } from "../server_middleware.ts";
import type { DeathHandler } from "../dead_set_rules.ts";
import type { UnknownJobPolicy } from "./processor.ts";
import type { WorkerFeature } from "./worker_feature.ts";

/** One capsule's configuration. */
export interface CapsuleConfig {
  /** Queue specs: `"name"` or `"name,weight"`. */
  queues: string[];
  /** Jobs run at once; default 10. */
  concurrency?: number;
  /**
   * Jobs held ready beyond the running ones (given back at quiet). A number
   * fixes it. By default it adapts: 2 × concurrency while jobs are slower
   * than a fetch round trip, growing up to max(2 × concurrency, 100) for jobs
   * that finish faster, so short jobs travel in batches worth a round trip.
   */
  prefetch?: number;
}

/** Options for {@link createWorker}. */
export interface WorkerOptions {
  /** The Redis transport. */
  transport: Transport;
  /** The jobs this worker runs: a list, or a module namespace. */
  jobs: JobsInput;
  /** Queues of the default capsule; default `["default"]`. */
  queues?: string[];
  /** Concurrency of the default capsule; default 10. */
  concurrency?: number;
  /** Several capsules instead of `queues` + `concurrency`. */
  capsules?: Record<string, CapsuleConfig>;
  /** Seconds `stop()` waits for running jobs before hard shutdown; default 25. */
  timeout?: number;
  /** `"reliable"` (default) or `"basic"` (Sidekiq OSS's BRPOP). */
  fetch?: "reliable" | "basic";
  /** Key namespace; none by default. */
  prefix?: string;
  /** Key layout, `"sidekiq"` or `"cluster"`: see `ClientOptions.keyspace` and docs/cluster.md. */
  keyspace?: Keyspace;
  /**
   * Serves a sharded namespace (cluster layout; see `ClientOptions.shards`):
   * every shard gets an equal share of each capsule's concurrency (so each
   * capsule needs at least one slot per shard), its own process entry,
   * poller and held hashes. Default 1.
   */
  shards?: number;
  timeFormat?: TimeFormat;
  logger?: Logger;
  /** Log a start and a done line per job; default true. */
  jobLogging?: boolean;
  middleware?: ServerMiddleware[];
  clientMiddleware?: ClientMiddleware[];
  deathHandlers?: DeathHandler[];
  /** Receives every error the worker survives. */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
  /** What to do with a job of a class this worker does not define (see {@link UnknownJobPolicy}); default `"retry"`. */
  unknownJobs?: UnknownJobPolicy;
  /**
   * Features (`uniqueJobs()`, ...): their options, middleware, outcome
   * hooks, poll work and lifecycle hooks. The worker's own client (which
   * moves scheduled jobs) gets their client half.
   */
  features?: readonly WorkerFeature[];
  /**
   * Make `currentJob()` work inside `perform` (AsyncLocalStorage); default
   * true. It costs about 7% of throughput on no-op jobs; set false to skip.
   */
  currentJob?: boolean;
  /** Run ActiveJob wrappers by their `wrapped` class name. */
  activeJob?: boolean;
  tag?: string;
  labels?: string[];
  /** Seconds between heartbeats; default 10 (20 over HTTP, where each beat is billed). */
  heartbeatInterval?: number;
  /** Seconds a process entry outlives its last beat; default 60. */
  heartbeatTtl?: number;
  /** Seconds a blocking fetch waits when idle; default 2. */
  blockSeconds?: number;
  /** Longest idle back-off for HTTP transports, ms; default 10,000. */
  pollMaxMs?: number;
  /** Run the scheduled poller; default true. */
  poller?: boolean;
  /**
   * Average seconds between scheduled-job polls across the cluster (Sidekiq's
   * 5 s over TCP). Over HTTP the poll check runs inside each heartbeat
   * instead (every `heartbeatInterval`, 20 s by default), so it bills no
   * command of its own, unless `pollIntervalAverage` is set. Either way each
   * check says when the next job comes due, and the poller also polls then
   * when that is sooner (at most every 50 ms over TCP, every second over
   * HTTP), so a scheduled job runs on time rather than up to an interval late.
   */
  averageScheduledPollInterval?: number;
  pollIntervalAverage?: number;
  /** Seconds before the first poll; default rand(1) (Sidekiq waits 10 + rand(5): see `Poller`). */
  pollInitialWait?: number;
  /** Processes that died while running one job before it is buried as a poison pill; default 3. */
  maxRecoveries?: number;
  onPoison?: (raw: string) => void;
  /** Listen for INT/TERM/TSTP/TTIN; default true. */
  handleSignals?: boolean;
  /**
   * Close the transport when the worker stops, so nothing keeps the process
   * alive after it (a Redis client's socket otherwise would). Default: true
   * when the worker handles signals (it is then the process's main loop),
   * false otherwise; pass `false` to keep using the transport after `stop()`.
   */
  closeTransport?: boolean;
  /** The host runtime; detected by default. */
  runtime?: Runtime;
}

/** The longest timer a runtime keeps (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
const MAX_TIMER_SECONDS = 2_147_483;

/** A worker's timings, checked and with their defaults. */
export interface WorkerTimings {
  readonly timeoutMs: number;
  readonly beatMs: number;
  /** Seconds, whole. */
  readonly ttl: number;
  readonly blockSeconds: number;
}

/**
 * Checks a worker's timings and fills in defaults. Over HTTP every command
 * is billed: an idle always-on worker beats every 20 s (polling the schedule
 * with its beat) and backs its fetch off to 10 s. Over TCP, Sidekiq's timings.
 *
 * @example
 * ```ts
 * workerTimings({ transport, jobs: [] }, false); // { timeoutMs: 25000, beatMs: 10000, ttl: 60, blockSeconds: 2 }
 * ```
 */
export function workerTimings(options: WorkerOptions, http: boolean): WorkerTimings {
  const timeoutMs = seconds("timeout", options.timeout ?? 25) * 1000;
  const beatMs = seconds("heartbeatInterval", options.heartbeatInterval ?? (http ? 20 : 10)) * 1000;
  const ttl = Math.ceil(seconds("heartbeatTtl", options.heartbeatTtl ?? 60));
  const blockSeconds = seconds("blockSeconds", options.blockSeconds ?? 2);
  // A fetch renews the process entry for `ttl`; a blocking fetch must end
  // well inside it, or a job could land after the entry expired.
  if (blockSeconds * 2 > ttl) {
    throw new ConfigError(
      `Cannot create worker as 'blockSeconds' must be at most half of 'heartbeatTtl' (${ttl}): current value is ${blockSeconds}`,
    );
  }
  if (beatMs / 1000 >= ttl) {
    throw new ConfigError(
      `Cannot create worker as 'heartbeatInterval' must be shorter than 'heartbeatTtl' (${ttl}): current value is ${
        beatMs / 1000
      }`,
    );
  }
  return { timeoutMs, beatMs, ttl, blockSeconds };
}

/**
 * Checks the `fetch` option.
 *
 * @example
 * ```ts
 * fetchMode(undefined); // "reliable"
 * ```
 */
export function fetchMode(fetch: unknown): "reliable" | "basic" {
  if (fetch !== undefined && fetch !== "reliable" && fetch !== "basic") {
    throw new ConfigError(
      `Cannot create worker as 'fetch' must be "reliable" or "basic": current value is ${describeValue(fetch)}`,
    );
  }
  return fetch ?? "reliable";
}

function seconds(name: string, value: number): number {
  if (typeof value !== "number" || !(value > 0) || !(value <= MAX_TIMER_SECONDS)) {
    throw new ConfigError(
      `Cannot create worker as '${name}' must be a number of seconds > 0 and <= ${MAX_TIMER_SECONDS}: current value is ${
        describeValue(value)
      }`,
    );
  }
  return value;
}
