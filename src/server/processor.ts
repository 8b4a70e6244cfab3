/**
 * Runs one unit of work: read the payload, find the job, check its
 * arguments, run the middleware and `perform`, then settle the outcome
 * (success, retry, dead) durably before it may be acknowledged.
 *
 * A bad payload never stops the worker: it goes to the dead set with its
 * reason, and the processor carries on.
 *
 * @module
 */
import { buryPayloads } from "../dead_set_rules.ts";
import { Discard, JobArgsError, PayloadError } from "../errors.ts";
import { runInJob } from "../current_job.ts";
import type { JobContext } from "../job.ts";
import { validateArgs } from "../job.ts";
import type { Logger } from "../logger.ts";
import { type JobPayload, newJids, parsePayload, serializePayload, type TimeFormat, wireTime } from "../payload.ts";
import { createRegistry, type JobsInput, type Registry } from "../registry.ts";
import type { Transport } from "../transport/transport.ts";
import type { Keys } from "../keys.ts";
import type { UnitOfWork } from "./fetch.ts";
import { runServerMiddleware, type ServerMiddleware } from "./middleware.ts";
import { type DeathHandler, errorClass, errorMessage, JobRetry } from "./retry.ts";
import type { Stats } from "./stats.ts";

/**
 * What to do with a unit once it has been processed: acknowledge it, put it
 * back on its queue (cut off by hard shutdown), or leave it where it is for
 * recovery (its outcome could not be written).
 */
export type UnitOutcome = "ack" | "requeue" | "abandon";

/** Everything a processor needs; shared by every slot of a capsule. */
export interface ProcessorDeps {
  transport: Transport;
  keys: Keys;
  registry: Registry;
  retry: JobRetry;
  middleware: readonly ServerMiddleware[];
  stats: Stats;
  logger: Logger;
  timeFormat: TimeFormat;
  /** Log a start and a done line per job. */
  jobLogging: boolean;
  /** What to do with a job whose class is not registered. */
  unknownJobs: "dead" | "requeue";
  /** Make `currentJob()` work inside `perform`. */
  currentJob: boolean;
  /** Route ActiveJob wrappers to the job named by `wrapped`. */
  activeJob: boolean;
  /** Fires at hard shutdown; every job's `ctx.signal`. */
  signal: AbortSignal;
  /** Reports errors outside a job's own failure path. */
  onError: (error: unknown, context: Record<string, unknown>) => void;
}

/** What {@link processorDeps} builds the shared dependencies from. */
export interface ProcessorConfig {
  jobs: JobsInput;
  middleware?: readonly ServerMiddleware[];
  deathHandlers?: readonly DeathHandler[];
  jobLogging?: boolean;
  unknownJobs?: "dead" | "requeue";
  activeJob?: boolean;
  currentJob?: boolean;
}

/**
 * The dependencies every processor of a worker (or a drain) shares, with
 * their defaults, built once.
 *
 * @example
 * ```ts
 * const deps = processorDeps({ transport, keys: keys(), timeFormat: "seconds", logger, stats, onError }, { jobs });
 * ```
 */
export function processorDeps(
  base: Pick<ProcessorDeps, "transport" | "keys" | "timeFormat" | "logger" | "stats" | "onError">,
  config: ProcessorConfig,
): Omit<ProcessorDeps, "signal"> {
  const { transport, keys, timeFormat, logger, onError } = base;
  return {
    ...base,
    registry: createRegistry(config.jobs ?? []),
    retry: new JobRetry({ transport, keys, timeFormat, logger, deathHandlers: config.deathHandlers ?? [], onError }),
    middleware: config.middleware ?? [],
    jobLogging: config.jobLogging ?? true,
    unknownJobs: config.unknownJobs ?? "dead",
    activeJob: config.activeJob ?? false,
    currentJob: config.currentJob ?? true,
  };
}

/**
 * Processes one unit. Resolves to `"ack"` when its outcome is durable, or
 * `"abandon"` when it must stay where it is (a failed write, or a job cut off
 * by hard shutdown, which has already requeued it).
 *
 * @example
 * ```ts
 * const outcome = await processUnit(deps, { queue: "default", raw });
 * if (outcome === "ack") fetcher.ack(unit);
 * ```
 */
export async function processUnit(deps: ProcessorDeps, unit: UnitOfWork): Promise<UnitOutcome> {
  let payload: JobPayload;
  try {
    payload = parsePayload(unit.raw);
  } catch (error) {
    return bury(deps, unit, undefined, error as PayloadError);
  }
  const job = deps.registry.get(payload.class) ??
    (deps.activeJob && typeof payload.wrapped === "string" ? deps.registry.get(payload.wrapped) : undefined);
  if (!job) {
    if (deps.unknownJobs === "requeue") {
      // A mixed fleet: some other process knows this class. Back of the line.
      await deps.transport.call("LPUSH", deps.keys.queue(unit.queue), unit.raw);
      return "ack";
    }
    const error = new PayloadError(`Cannot run job as no job named '${payload.class}' is registered in this worker`);
    error.name = "UnknownJobError";
    return bury(deps, unit, payload, error);
  }
  let args: unknown[];
  try {
    // Schemas are usually synchronous: skip the await (and its microtask) then.
    const checked = validateArgs(job, payload.args);
    args = checked instanceof Promise ? await checked : checked;
  } catch (error) {
    if (error instanceof JobArgsError) return bury(deps, unit, payload, error);
    throw error;
  }

  const started = performance.now();
  const ctx = new Context(payload, unit.queue, deps.signal, deps.logger);
  if (deps.jobLogging) ctx.logger.info("start");
  try {
    const perform = () => job.perform(ctx, ...args);
    const run = deps.middleware.length
      ? () => runServerMiddleware(deps.middleware, { job, payload, queue: unit.queue }, perform)
      : perform;
    await (deps.currentJob ? runInJob(ctx, run) : run());
    deps.stats.processed++;
    if (deps.jobLogging) ctx.logger.info("done", { elapsed_ms: Math.round(performance.now() - started) });
    return "ack";
  } catch (error) {
    if (error instanceof Discard) {
      deps.stats.processed++;
      if (deps.jobLogging) ctx.logger.info("discarded", { reason: error.message });
      return "ack";
    }
    if (deps.signal.aborted) {
      // Hard shutdown interrupted it: it goes back on its queue, and a retry
      // entry now would run it twice.
      ctx.logger.warn("interrupted by shutdown; putting the job back");
      return "requeue";
    }
    // Not counted when interrupted: it will run again and be counted then.
    deps.stats.processed++;
    deps.stats.failed++;
    const elapsed = Math.round(performance.now() - started);
    ctx.logger.warn("fail", {
      elapsed_ms: elapsed,
      error_class: errorClass(error),
      error_message: errorMessage(error),
    });
    try {
      await deps.retry.handle(job, payload, unit.queue, error);
      return "ack";
    } catch (writeError) {
      // Not durable, so not acknowledged: reliable fetch recovers it later.
      deps.onError(writeError, { context: "writing retry", jid: payload.jid });
      return "abandon";
    }
  }
}

async function bury(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  payload: JobPayload | undefined,
  error: Error,
): Promise<UnitOutcome> {
  const now = wireTime(Date.now(), deps.timeFormat);
  const entry: JobPayload = payload ?? {
    // Unreadable: keep the original text whole, inside a readable envelope.
    class: "Edgekiq::InvalidPayload",
    args: [unit.raw],
    queue: unit.queue,
    jid: newJids(1)[0],
  };
  entry.error_class = error.name;
  entry.error_message = errorMessage(error);
  entry.failed_at ??= now;
  deps.stats.processed++;
  deps.stats.failed++;
  deps.logger.error("bad job sent to the dead set", {
    queue: unit.queue,
    jid: entry.jid,
    class: entry.class,
    error_class: entry.error_class,
    error_message: entry.error_message,
  });
  try {
    await buryPayloads(deps, [serializePayload(entry, deps.timeFormat)]);
    return "ack";
  } catch (writeError) {
    deps.onError(writeError, { context: "burying bad job", jid: entry.jid });
    return "abandon";
  }
}

/** The per-job context; the logger is made only if used. */
class Context implements JobContext {
  readonly payload: JobPayload;
  readonly queue: string;
  readonly signal: AbortSignal;
  #base: Logger;
  #logger?: Logger;

  constructor(payload: JobPayload, queue: string, signal: AbortSignal, logger: Logger) {
    this.payload = payload;
    this.queue = queue;
    this.signal = signal;
    this.#base = logger;
  }

  get jid(): string {
    return this.payload.jid;
  }

  get retryCount(): number {
    return typeof this.payload.retry_count === "number" ? this.payload.retry_count + 1 : 0;
  }

  get logger(): Logger {
    return this.#logger ??= this.#base.child({ class: this.payload.class, jid: this.payload.jid, queue: this.queue });
  }
}
