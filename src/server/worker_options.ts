/**
 * The options a worker takes: its jobs, capsules, timings and hooks.
 *
 * @module
 */
import type { ClientMiddleware } from "../client_middleware.ts";
import { ConfigError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { MetricsTrackerOptions } from "../metrics/tracker.ts";
import { describe, type TimeFormat } from "../payload.ts";
import type { JobsInput } from "../registry.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { Transport } from "../transport/transport.ts";
import type { PeriodicSchedule } from "../periodic/mod.ts";
import type { ServerMiddleware } from "../server_middleware.ts";
import type { DeathHandler } from "./retry.ts";

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
  timeFormat?: TimeFormat;
  logger?: Logger;
  /** Log a start and a done line per job; default true. */
  jobLogging?: boolean;
  middleware?: ServerMiddleware[];
  clientMiddleware?: ClientMiddleware[];
  deathHandlers?: DeathHandler[];
  /** Receives every error the worker survives. */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
  /** What to do with a job of an unregistered class: bury it (default) or push it back for other workers */
  unknownJobs?: "dead" | "requeue";
  /**
   * Make `currentJob()` work inside `perform` (AsyncLocalStorage); default
   * true. It costs about 7% of throughput on no-op jobs; set false to skip.
   */
  currentJob?: boolean;
  /**
   * Execution metrics per job class in Sidekiq 7/8's Redis format (what
   * Sidekiq's Web UI Metrics page and `Metrics` in `edgekiq/api` read),
   * counted in memory and written with the heartbeat: one command per beat
   * when jobs ran, none when idle. Default on, as in Sidekiq 7+.
   */
  metrics?: boolean | MetricsTrackerOptions;
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
   * command of its own, unless `pollIntervalAverage` is set.
   */
  averageScheduledPollInterval?: number;
  pollIntervalAverage?: number;
  /** Seconds before the first poll; default Sidekiq's 10 + rand(5). */
  pollInitialWait?: number;
  /**
   * Cron schedules this app declares (`{ cron: "0 * * * *", job, args, tz }`
   * or `{ every: 60, job }`). Registered at start (a bad one fails `run()`),
   * enqueued exactly once per tick by whichever process polls first.
   */
  periodic?: readonly PeriodicSchedule[];
  /** The app owning `periodic`: a schedule removed from that app's code stops at its next deploy. */
  periodicOwner?: string;
  /** Processes that died while running one job before it is buried as a poison pill; default 3. */
  maxRecoveries?: number;
  onPoison?: (raw: string) => void;
  /** Listen for INT/TERM/TSTP/TTIN; default true. */
  handleSignals?: boolean;
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
      `Cannot create worker as 'fetch' must be "reliable" or "basic": current value is ${describe(fetch)}`,
    );
  }
  return fetch ?? "reliable";
}

function seconds(name: string, value: number): number {
  if (typeof value !== "number" || !(value > 0) || !(value <= MAX_TIMER_SECONDS)) {
    throw new ConfigError(
      `Cannot create worker as '${name}' must be a number of seconds > 0 and <= ${MAX_TIMER_SECONDS}: current value is ${
        describe(value)
      }`,
    );
  }
  return value;
}
