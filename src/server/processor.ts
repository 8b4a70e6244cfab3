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
import { activeJobArguments, isActiveJob } from "../activejob.ts";
import { buryPayloads } from "../dead_set_rules.ts";
import { metricsClassName, type MetricsTracker } from "../metrics/tracker.ts";
import { Discard, Interrupt, JobArgsError, PayloadError, TransportError } from "../errors.ts";
import { runInJob } from "../current_job.ts";
import type { JobContext } from "../job.ts";
import { validateArgs } from "../job.ts";
import type { Logger } from "../logger.ts";
import { type JobPayload, newJids, parsePayload, serializePayload, type TimeFormat, wireTime } from "../payload.ts";
import { createRegistry, type JobsInput, type Registry } from "../registry.ts";
import type { Transport } from "../transport/transport.ts";
import type { Keys } from "../keys.ts";
import type { UnitOfWork } from "./unit_of_work.ts";
import { runServerMiddleware, type ServerMiddleware, type ServerMiddlewareTools } from "../server_middleware.ts";
import { type DeathHandler, errorClass, errorMessage, JobRetry } from "./retry.ts";
import type { JobCounters } from "./stats.ts";

/**
 * What to do with a unit once it has been processed: acknowledge it, put it
 * back on its queue (cut off by hard shutdown), or leave it held (its
 * outcome could not be written before hard shutdown; the release at stop or
 * recovery gives it back).
 */
export type UnitOutcome = "ack" | "requeue" | "abandon";

/** Everything a processor needs; shared by every slot of a capsule. */
export interface ProcessorDeps {
  transport: Transport;
  keys: Keys;
  registry: Registry;
  retry: JobRetry;
  middleware: readonly ServerMiddleware[];
  stats: JobCounters;
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
  /** Fires at quiet, stop or the end of a drain's budget; every job's `ctx.stopping`. */
  stopping: AbortSignal;
  /** What middleware may ask of the engine (bound to the capsule's fetcher). */
  tools: ServerMiddlewareTools;
  /** Reports errors outside a job's own failure path. */
  onError: (error: unknown, context: Record<string, unknown>) => void;
  /** Execution metrics per job class (Sidekiq's format), flushed with the heartbeat; absent when off. */
  metrics?: MetricsTracker;
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
  base: Pick<ProcessorDeps, "transport" | "keys" | "timeFormat" | "logger" | "stats" | "onError" | "metrics">,
  config: ProcessorConfig,
): Omit<ProcessorDeps, "signal" | "stopping" | "tools"> {
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
 * Processes one unit. Resolves to `"ack"` when its outcome is durable,
 * `"requeue"` when hard shutdown cut it off, or `"abandon"` when its outcome
 * could not be written before hard shutdown.
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
  let job = deps.registry.get(payload.class);
  let input = payload.args;
  if (!job && deps.activeJob && isActiveJob(payload)) {
    // An ActiveJob wrapper: the job is `wrapped`, its arguments ActiveJob's own serialisation.
    job = deps.registry.get(payload.wrapped!);
    if (job) {
      try {
        input = activeJobArguments(payload.args[0]);
      } catch (error) {
        return bury(deps, unit, payload, error as PayloadError);
      }
    }
  }
  if (!job) {
    if (deps.unknownJobs === "requeue") return postpone(deps, unit, payload);
    const error = new PayloadError(`Cannot run job as no job named '${payload.class}' is registered in this worker`);
    error.name = "UnknownJobError";
    return bury(deps, unit, payload, error);
  }
  let args: unknown[];
  try {
    // Schemas are usually synchronous: skip the await (and its microtask) then.
    const checked = validateArgs(job, input);
    args = checked instanceof Promise ? await checked : checked;
  } catch (error) {
    if (error instanceof JobArgsError) return bury(deps, unit, payload, error);
    throw error;
  }

  const started = performance.now();
  const ctx = new Context(payload, unit.queue, deps, deps.logger);
  if (deps.jobLogging) ctx.logger.info("start");
  try {
    const perform = () => job.perform(ctx, ...args);
    const run = deps.middleware.length
      ? () => runServerMiddleware(deps.middleware, { job, payload, queue: unit.queue, tools: deps.tools }, perform)
      : perform;
    await (deps.currentJob ? runInJob(ctx, run) : run());
    deps.stats.processed++;
    deps.metrics?.record(metricsClassName(payload), performance.now() - started, false);
    if (deps.jobLogging) ctx.logger.info("done", { elapsed_ms: Math.round(performance.now() - started) });
    return "ack";
  } catch (error) {
    if (error instanceof Discard) {
      deps.stats.processed++;
      deps.metrics?.record(metricsClassName(payload), performance.now() - started, false);
      if (deps.jobLogging) ctx.logger.info("discarded", { reason: error.message });
      return "ack";
    }
    if (error instanceof Interrupt) {
      // Asked to stop here and resume later: back on its queue as it is.
      if (deps.jobLogging) ctx.logger.info("interrupted", { reason: error.message });
      return "requeue";
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
    deps.metrics?.record(metricsClassName(payload), performance.now() - started, true);
    const elapsed = Math.round(performance.now() - started);
    ctx.logger.warn("fail", {
      elapsed_ms: elapsed,
      error_class: errorClass(error),
      error_message: errorMessage(error),
    });
    return settle(deps, unit, "writing retry", () => deps.retry.handle(job, payload, unit.queue, error));
  }
}

/** Longest pause between attempts to write an outcome, ms. */
const MAX_WRITE_BACKOFF_MS = 5000;

/**
 * Writes a job's outcome durably before it may be acknowledged. A transient
 * failure (connection, failover, OOM) is retried with backoff for as long as
 * the process runs: the job stays held and owned. A failure that can never
 * succeed (a payload that cannot be serialised, a key of the wrong type)
 * buries the original text with the reason instead, so it is neither lost nor
 * replayed at every stop. Only hard shutdown gives up ("abandon": it stays
 * held and goes back to its queue at release).
 */
async function settle(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  what: string,
  write: () => Promise<unknown>,
): Promise<UnitOutcome> {
  let delay = 100;
  for (;;) {
    try {
      await write();
      return "ack";
    } catch (error) {
      if (!transient(error)) return buryUnwritable(deps, unit, what, error);
      deps.onError(error, { context: what, queue: unit.queue });
      if (deps.signal.aborted) return "abandon";
      await pause(delay, deps.signal);
      delay = Math.min(delay * 2, MAX_WRITE_BACKOFF_MS);
    }
  }
}

/** Whether a write may succeed if tried again. */
function transient(error: unknown): boolean {
  return error instanceof TransportError && error.kind !== "command" && error.kind !== "wrongtype";
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Buries the job's original text, with why its outcome could not be written appended. */
async function buryUnwritable(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  what: string,
  error: unknown,
): Promise<UnitOutcome> {
  deps.onError(error, { context: what, queue: unit.queue, outcome: "buried: the outcome can never be written" });
  const reason = `Cannot record the job's outcome (${what}): ${errorMessage(error)}`;
  const entry = appendFields(unit.raw, {
    error_class: errorClass(error),
    error_message: reason.slice(0, 10_000),
    failed_at: wireTime(Date.now(), deps.timeFormat),
  });
  return settle(deps, unit, "burying an unwritable job", () => buryPayloads(deps, [entry]))
    .catch(() => "abandon" as const);
}

/**
 * Appends fields to a raw JSON object as text, without parsing it (it may be
 * too deep to parse or serialise); a later duplicate key wins in every JSON
 * reader, Ruby's included. Text that is not an object is wrapped.
 */
function appendFields(raw: string, fields: Record<string, unknown>): string {
  const tail = Object.entries(fields).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",");
  const end = raw.lastIndexOf("}");
  if (/^\s*\{/.test(raw) && end > 0 && raw.slice(end + 1).trim() === "") {
    const body = raw.slice(0, end);
    return /^\s*\{\s*$/.test(body) ? `${body}${tail}}` : `${body},${tail}}`;
  }
  return `{"class":"Edgekiq::InvalidPayload","args":[${JSON.stringify(raw)}],${tail}}`;
}

/** Longest an unknown job is put off, seconds. */
const MAX_POSTPONE_SECONDS = 300;

/**
 * A job no class here knows, in a mixed fleet: another process may know it.
 * It goes to the scheduled set with a growing delay (2, 4, 8 ... 300 s),
 * counted in the payload, instead of straight back to its queue, where a
 * fleet that does not know it would pass it around in a hot loop.
 */
function postpone(deps: ProcessorDeps, unit: UnitOfWork, payload: JobPayload): Promise<UnitOutcome> {
  const tries = typeof payload.edgekiq_postponed === "number" ? payload.edgekiq_postponed + 1 : 1;
  payload.edgekiq_postponed = tries;
  const delay = Math.min(MAX_POSTPONE_SECONDS, 2 ** Math.min(tries, 20));
  deps.logger.warn("no job of this class here: postponed for another process", {
    class: payload.class,
    jid: payload.jid,
    delay_s: delay,
  });
  return settle(deps, unit, "postponing an unknown job", () =>
    deps.transport.call(
      "ZADD",
      deps.keys.schedule,
      Date.now() / 1000 + delay,
      serializePayload(payload, deps.timeFormat),
    ));
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
  return settle(deps, unit, "burying a bad job", () => buryPayloads(deps, [serializePayload(entry, deps.timeFormat)]));
}

/** The per-job context; the logger is made only if used. */
class Context implements JobContext {
  readonly payload: JobPayload;
  readonly queue: string;
  readonly signal: AbortSignal;
  readonly stopping: AbortSignal;
  readonly transport: Transport;
  readonly keys: Keys;
  #base: Logger;
  #logger?: Logger;

  constructor(
    payload: JobPayload,
    queue: string,
    deps: Pick<ProcessorDeps, "signal" | "stopping" | "transport" | "keys">,
    logger: Logger,
  ) {
    this.payload = payload;
    this.queue = queue;
    this.signal = deps.signal;
    this.stopping = deps.stopping;
    this.transport = deps.transport;
    this.keys = deps.keys;
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
