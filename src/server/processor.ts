/**
 * Runs one unit of work: read the payload, find the job, check its
 * arguments, run the middleware and `perform`, decide the outcome once, and
 * hand it to the settler (`settler.ts`) to be made durable before the job may
 * be acknowledged.
 *
 * A bad payload never stops the worker: it goes to the dead set with its
 * reason, and the processor carries on.
 *
 * @module
 */
import { activeJobArguments, isActiveJob } from "../activejob.ts";
import { checkRunOptions } from "../client_feature.ts";
import { Discard, Interrupt, RunLater } from "../control.ts";
import { JobArgsError, PayloadError } from "../errors.ts";
import { runInJob } from "../current_job.ts";
import type { AnyJob, JobContext } from "../job.ts";
import { validateArgs } from "../job.ts";
import type { Logger } from "../logger.ts";
import { type JobPayload, newJids, parsePayload, serializePayload, type TimeFormat, wireTime } from "../payload.ts";
import { createRegistry, type JobsInput, type Registry } from "../registry.ts";
import type { Transport } from "../transport/transport.ts";
import type { Keys } from "../keys.ts";
import type { UnitOfWork } from "./unit_of_work.ts";
import { runServerMiddleware, type ServerMiddleware, type ServerMiddlewareTools } from "../server_middleware.ts";
import { errorClass, errorMessage, JobRetry, type RetryDecision } from "./retry.ts";
import { type SettleEntry, Settler, type UnitOutcome, type Unwritable } from "./settler.ts";
import type { JobCounters } from "./job_counters.ts";
import type { JobOutcome, OutcomeWrite, ProgressContext, WorkerFeature } from "./worker_feature.ts";
import type { JobControl } from "./job_control.ts";
import type { DeathHandler } from "../dead_set_rules.ts";

export type { UnitOutcome } from "./settler.ts";

/**
 * What a worker does with a job whose class no process here defines:
 * - `"retry"` (default, Sidekiq's): a failure (`UnknownJobError`), retried
 *   with backoff and dead only after its retries, so on a Redis shared with
 *   Rails a Ruby job is never buried by a TypeScript worker on its queue;
 * - `"postpone"`: back to the `schedule` set with a growing delay (2 s to
 *   5 min), neither a failure nor a retry: for a mixed fleet where another
 *   process certainly defines it;
 * - `"dead"`: straight to the dead set.
 */
export type UnknownJobPolicy = "retry" | "postpone" | "dead";

/** Everything a processor needs; shared by every slot of a capsule. */
export interface ProcessorDeps {
  transport: Transport;
  keys: Keys;
  registry: Registry;
  retry: JobRetry;
  settler: Settler;
  middleware: readonly ServerMiddleware[];
  /** Features told of outcomes, or writing with them. */
  observers: readonly WorkerFeature[];
  /** Features that see a job before its arguments are checked. */
  receivers: readonly WorkerFeature[];
  /** Features told of progress. */
  progressors: readonly WorkerFeature[];
  stats: JobCounters;
  logger: Logger;
  timeFormat: TimeFormat;
  /** Log a start and a done line per job. */
  jobLogging: boolean;
  unknownJobs: UnknownJobPolicy;
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
}

/** What {@link processorDeps} builds the shared dependencies from. */
export interface ProcessorConfig {
  jobs: JobsInput;
  middleware?: readonly ServerMiddleware[];
  deathHandlers?: readonly DeathHandler[];
  jobLogging?: boolean;
  unknownJobs?: UnknownJobPolicy;
  activeJob?: boolean;
  currentJob?: boolean;
  /** Features: their server middleware runs inside `middleware`; their observers, outcome writes and death handlers too. */
  features?: readonly WorkerFeature[];
}

/**
 * The dependencies every processor of a worker (or a drain) shares, with
 * their defaults, built once; the capsule adds its signals, tools and where
 * its jobs are held.
 *
 * @example
 * ```ts
 * const base = processorDeps({ transport, keys: keys(), timeFormat: "seconds", logger, stats, onError }, { jobs });
 * ```
 */
export function processorDeps(
  base: Pick<ProcessorDeps, "transport" | "keys" | "timeFormat" | "logger" | "stats" | "onError">,
  config: ProcessorConfig,
): SharedDeps {
  const features = config.features ?? [];
  const policy = config.unknownJobs ?? "retry";
  if (!["retry", "postpone", "dead"].includes(policy)) {
    throw new PayloadError(
      `Cannot create worker as 'unknownJobs' must be "retry", "postpone" or "dead": current value is ${
        JSON.stringify(policy)
      }`,
    );
  }
  const registry = createRegistry(config.jobs ?? []);
  checkRunOptions(features, registry.names().map((name) => registry.get(name)!));
  return {
    ...base,
    registry,
    retry: new JobRetry({ timeFormat: base.timeFormat, onError: base.onError }),
    middleware: [...(config.middleware ?? []), ...features.flatMap((f) => (f.server ? [f.server] : []))],
    observers: features.filter((f) => f.observe || f.outcome),
    receivers: features.filter((f) => f.receive),
    progressors: features.filter((f) => f.progress),
    deathHandlers: [...(config.deathHandlers ?? []), ...features.flatMap((f) => (f.onDeath ? [f.onDeath] : []))],
    jobLogging: config.jobLogging ?? true,
    unknownJobs: policy,
    activeJob: config.activeJob ?? false,
    currentJob: config.currentJob ?? true,
  };
}

/** What {@link processorDeps} builds: everything but what a capsule adds. */
export type SharedDeps = Omit<ProcessorDeps, "signal" | "stopping" | "tools" | "settler"> & {
  deathHandlers: readonly DeathHandler[];
};

/** How one unit is run: its control (per-job stop), and whether its writes may outlast the call. */
export interface UnitRun {
  readonly control?: JobControl;
  /**
   * Resolve as soon as `perform` has returned or thrown and only the
   * outcome's writes remain (a failure's retry entry, features' outcome
   * writes), to a {@link PendingOutcome}: the slot may start its next job
   * meanwhile, so a write's round trip is not a slot's idle time. A job that
   * never ran, or whose outcome needs no write, resolves as without it.
   */
  readonly defer?: boolean;
  /**
   * With `defer`: a job whose only write is a coalescing one that this
   * answers true for resolves to a {@link CarriedOutcome} (its fetcher
   * carries the write) instead of waiting for it.
   */
  readonly carry?: (write: OutcomeWrite) => boolean;
}

/**
 * A job whose `perform` is over and whose one outcome write, a coalescing
 * one, its fetcher carries (`Feeder.finishCarried`): nothing to wait for here.
 *
 * @example
 * ```ts
 * const outcome = ready.returned(await ready.perform()); // readyUnit(deps, unit, { defer: true, carry: () => true })
 * if (outcome instanceof CarriedOutcome) feeder.finishCarried(unit, outcome.write, ms);
 * ```
 */
export class CarriedOutcome {
  readonly write: OutcomeWrite;

  constructor(write: OutcomeWrite) {
    this.write = write;
  }
}

/**
 * Writes a carried write the usual way, for one job (its fetcher's call
 * failed for good: see `Carrying.uncarried`), burying the job if it can never
 * be written.
 *
 * @example
 * ```ts
 * const outcome = await writeUncarried(deps, unit, write); // "ack", or "abandon" at hard shutdown
 * ```
 */
export async function writeUncarried(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  write: OutcomeWrite,
): Promise<UnitOutcome> {
  // Through the settler's lane: writes that fell back together share a call, and if it cannot apply they are
  // tried one by one, so only the write that can never apply buries its job.
  return await orBury(deps, unit, FEATURES, await deps.settler.writeFeatures(unit, [write]));
}

/** A job whose `perform` is over and whose outcome is still being written (see `UnitRun.defer`). */
export interface PendingOutcome {
  /**
   * Calls `done` with the outcome once it is written, or `failed` if
   * writing it threw; once, never synchronously. A callback, not a promise:
   * a batch job's success, the common case, then costs no promise after
   * `perform` (each one also runs the async hooks while AsyncLocalStorage is on).
   */
  settle(done: (outcome: UnitOutcome) => void, failed: (error: unknown) => void): void;
}

/**
 * Reads a unit up to the point where its job can run: the payload parsed,
 * the job found, the features' receive hooks heard, the arguments checked.
 * Gives a {@link ReadyUnit}, or the unit's outcome when it ends here (a bad
 * payload buried, an unknown job, a hook that refused it); a promise only
 * when a hook or a schema answered with one. The caller then runs
 * `perform` itself, so a slot awaits `perform`'s own promise and nothing
 * else: on Node 20 each promise a job makes costs a second time while
 * AsyncLocalStorage is on (a hook runs per promise), and an `async` wrapper
 * around the run cost two more per job.
 *
 * @example
 * ```ts
 * let ready = readyUnit(deps, unit, {});
 * if (!(ready instanceof ReadyUnit)) ready = await ready;
 * if (ready instanceof ReadyUnit) {
 *   ready.start();
 *   let result: unknown, error: unknown, threw = false;
 *   try {
 *     result = await ready.perform();
 *   } catch (e) {
 *     [error, threw] = [e, true];
 *   }
 *   const outcome = threw ? await ready.threw(error) : ready.returned(result);
 * }
 * ```
 */
export function readyUnit(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  run: UnitRun,
): ReadyUnit | UnitOutcome | Promise<ReadyUnit | UnitOutcome> {
  let payload: JobPayload;
  try {
    payload = parsePayload(unit.raw);
  } catch (error) {
    return bury(deps, unit, undefined, error as PayloadError);
  }
  let job = deps.registry.get(payload.class);
  // An ActiveJob wrapper: the job is `wrapped`, its arguments ActiveJob's own serialisation.
  const wrapper = !job && deps.activeJob && isActiveJob(payload);
  if (wrapper) job = deps.registry.get(payload.wrapped!);
  if (!job) return unknownJob(deps, unit, payload);
  if (deps.receivers.length === 0) return checkArgs(deps, unit, run, { job, payload, wrapper, received: undefined });
  const before = payload.args;
  const answer = receive(deps, unit, payload, job);
  // The arguments as received: a receive hook's rewrite (decryption) is for
  // this run only, and is undone before the job is written anywhere.
  const go = () =>
    checkArgs(deps, unit, run, { job, payload, wrapper, received: payload.args !== before ? before : undefined });
  if (answer === undefined) return go();
  if (answer instanceof Promise) return answer.then((outcome) => outcome ?? go());
  return answer;
}

/** A readable job's arguments, unwrapped (ActiveJob) and checked against its schema. */
function checkArgs(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  run: UnitRun,
  read: { job: AnyJob; payload: JobPayload; wrapper: boolean; received: unknown[] | undefined },
): ReadyUnit | Promise<ReadyUnit | UnitOutcome> {
  const { job, payload, received } = read;
  let input = payload.args;
  if (read.wrapper) {
    try {
      input = activeJobArguments(payload.args[0]);
    } catch (error) {
      return bury(deps, unit, asReceived(payload, received), error as PayloadError);
    }
  }
  const invalid = (error: unknown): Promise<UnitOutcome> => {
    if (error instanceof JobArgsError) return bury(deps, unit, asReceived(payload, received), error);
    throw error;
  };
  let checked: unknown[] | Promise<unknown[]>;
  try {
    checked = validateArgs(job, input);
  } catch (error) {
    return invalid(error);
  }
  // Schemas are usually synchronous: no promise (and no microtask) then.
  if (!(checked instanceof Promise)) return new ReadyUnit(deps, unit, run, { job, payload, args: checked, received });
  return checked.then((args) => new ReadyUnit(deps, unit, run, { job, payload, args, received }), invalid);
}

/**
 * A unit whose job can run (see {@link readyUnit}): `start()`, `perform()`
 * once, then `returned` with what it resolved to or `threw` with what it
 * threw. Both give the unit's outcome: `"ack"` when it is durable, `"requeue"` when hard
 * shutdown (or the job itself) put it back, `"abandon"` when it could not be
 * written before hard shutdown; with `run.defer`, a {@link PendingOutcome}
 * or {@link CarriedOutcome} while its writes are on their way.
 *
 * @example
 * ```ts
 * const ready = readyUnit(deps, unit, {}) as ReadyUnit;
 * ready.start();
 * const outcome = ready.returned(await ready.perform());
 * ```
 */
export class ReadyUnit {
  readonly #deps: ProcessorDeps;
  readonly #unit: UnitOfWork;
  readonly #run: UnitRun;
  readonly #job: AnyJob;
  readonly #payload: JobPayload;
  readonly #args: unknown[];
  readonly #received: unknown[] | undefined;
  #ctx: Context | undefined;
  #started = 0;

  constructor(
    deps: ProcessorDeps,
    unit: UnitOfWork,
    run: UnitRun,
    job: { job: AnyJob; payload: JobPayload; args: unknown[]; received: unknown[] | undefined },
  ) {
    this.#deps = deps;
    this.#unit = unit;
    this.#run = run;
    this.#job = job.job;
    this.#payload = job.payload;
    this.#args = job.args;
    this.#received = job.received;
  }

  /**
   * Makes the job's context and logs its start: before `perform`, outside
   * what the job is held to (a logger that throws here is the engine's
   * error, not the job's failure).
   */
  start(): void {
    const ctx = this.#ctx = new Context(this.#payload, this.#unit.queue, this.#deps, this.#run.control);
    if (this.#deps.jobLogging) ctx.logger.info("start");
    // Its own clock: `perform` with its middleware, not what came before it (a receive hook's wait, a recovered
    // job's start written).
    this.#started = performance.now();
  }

  /**
   * Runs the server middleware and `perform` (with `currentJob()` set, if
   * on); gives what `perform` returned (a promise, for an async one) and
   * throws what it threw at once. After {@link ReadyUnit.start}.
   */
  perform(): unknown {
    const deps = this.#deps;
    const ctx = this.#ctx!;
    const job = this.#job;
    const args = this.#args;
    const perform = () => job.perform(ctx, ...args);
    const withMiddleware = deps.middleware.length
      ? () =>
        runServerMiddleware(
          deps.middleware,
          { job, payload: this.#payload, queue: this.#unit.queue, tools: deps.tools },
          perform,
        )
      : perform;
    return deps.currentJob ? runInJob(ctx, withMiddleware) : withMiddleware();
  }

  /** `perform` returned (or resolved to) `result`. */
  returned(result: unknown): UnitOutcome | PendingOutcome | CarriedOutcome | Promise<UnitOutcome> {
    const deps = this.#deps;
    const unit = this.#unit;
    deps.stats.processed++;
    // The clock is read only when something reads it: a no-op job is a few µs, and each read a measurable part.
    const ms = deps.jobLogging || deps.observers.length ? performance.now() - this.#started : 0;
    if (deps.jobLogging) this.#ctx!.logger.info("done", { elapsed_ms: Math.round(ms) });
    if (deps.observers.length === 0) return "ack";
    const outcome: JobOutcome = { kind: "succeeded", queue: unit.queue, payload: this.#payload, ms, result };
    const run = this.#run;
    if (!run.defer) return finish(deps, unit, outcome);
    const writes = observe(deps, outcome);
    if (!writes) return "ack";
    if (writes.length > 1 || !writes[0].coalesce) return pendingOf(writeFeatures(deps, unit, writes));
    if (run.carry?.(writes[0])) return new CarriedOutcome(writes[0]);
    return new CoalescedOutcome(deps, unit, writes[0]);
  }

  /** `perform` threw (or rejected with) `error`: a control-flow signal, hard shutdown, or a failure. */
  threw(error: unknown): Promise<UnitOutcome> | PendingOutcome {
    const ending = ended(this.#deps, this.#unit, {
      job: this.#job,
      payload: asReceived(this.#payload, this.#received),
      ctx: this.#ctx!,
      error,
      ms: performance.now() - this.#started,
    });
    return this.#run.defer ? pendingOf(ending) : ending;
  }
}

/**
 * A job whose one outcome write is coalesced with those of other jobs. The
 * write is queued at once, as `perform` ends, not when its slot asks
 * (`settle`): jobs finishing side by side then all reach the call a slot
 * with nothing left to run sends, not only the first.
 */
class CoalescedOutcome implements PendingOutcome {
  #answer: UnitOutcome | Unwritable | undefined;
  #done: ((outcome: UnitOutcome) => void) | undefined;
  #failed: ((error: unknown) => void) | undefined;
  #deps: ProcessorDeps;
  #unit: UnitOfWork;

  constructor(deps: ProcessorDeps, unit: UnitOfWork, write: OutcomeWrite) {
    this.#deps = deps;
    this.#unit = unit;
    deps.settler.writeCoalesced(write, (answer) => {
      if (this.#done) this.#tell(answer);
      else this.#answer = answer;
    });
  }

  settle(done: (outcome: UnitOutcome) => void, failed: (error: unknown) => void): void {
    this.#done = done;
    this.#failed = failed;
    // Answered already (the settler never answers synchronously, so not before this turn is over).
    if (this.#answer !== undefined) queueMicrotask(() => this.#tell(this.#answer!));
  }

  #tell(answer: UnitOutcome | Unwritable): void {
    const outcome = orBury(this.#deps, this.#unit, FEATURES, answer);
    if (typeof outcome === "string") this.#done!(outcome);
    else outcome.then(this.#done, this.#failed);
  }
}

/** A pending outcome on a promise (the rarer paths: failures, several writes). */
function pendingOf(written: Promise<UnitOutcome>): PendingOutcome {
  return { settle: (done, failed) => void written.then(done, failed) };
}

/** The payload with the arguments it was received with (when a receive hook replaced them). */
function asReceived(payload: JobPayload, received: unknown[] | undefined): JobPayload {
  if (received) payload.args = received;
  return payload;
}

/**
 * Shows a job to the features that see it before its arguments are checked
 * (decryption, expiry, cancellation). Returns a promise of an outcome if one
 * of them ended it; undefined when every hook answered at once and let it
 * run (no promise, no microtask: most jobs are looked at and let through).
 */
function receive(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  payload: JobPayload,
  job: AnyJob,
): UnitOutcome | Promise<UnitOutcome | undefined> | undefined {
  const before = payload.args;
  for (let i = 0; i < deps.receivers.length; i++) {
    let pending: void | Promise<void>;
    try {
      pending = deps.receivers[i].receive!(payload, job, deps);
    } catch (error) {
      return refused(deps, unit, payload, before, error);
    }
    if (pending) return receiveRest(deps, { unit, payload, job, before }, i, pending);
  }
  return undefined;
}

/** The hooks from the `i`th on, once one of them answered with a promise. */
async function receiveRest(
  deps: ProcessorDeps,
  { unit, payload, job, before }: { unit: UnitOfWork; payload: JobPayload; job: AnyJob; before: unknown[] },
  i: number,
  pending: Promise<void>,
): Promise<UnitOutcome | undefined> {
  try {
    await pending;
    for (let k = i + 1; k < deps.receivers.length; k++) await deps.receivers[k].receive!(payload, job, deps);
    return undefined;
  } catch (error) {
    return refused(deps, unit, payload, before, error);
  }
}

/** A receive hook refused the job: `Discard` ends it quietly, `RunLater` puts it back, anything else buries it. */
function refused(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  payload: JobPayload,
  before: unknown[],
  error: unknown,
): UnitOutcome | Promise<UnitOutcome> {
  // Whatever a hook rewrote before another refused the job stays out of what is written.
  payload.args = before;
  if (error instanceof Discard) {
    deps.stats.processed++;
    if (deps.jobLogging) deps.logger.info("discarded", { jid: payload.jid, reason: error.message });
    return finish(deps, unit, { kind: "discarded", queue: unit.queue, payload, ms: 0, code: error.code });
  }
  if (error instanceof RunLater) {
    const entry: SettleEntry = { target: "schedule", score: error.at / 1000, json: unit.raw };
    return finish(deps, unit, { kind: "later", queue: unit.queue, payload, ms: 0 }, entry);
  }
  return bury(deps, unit, payload, error instanceof Error ? error : new PayloadError(String(error)));
}

/** A run that threw: a control-flow signal, hard shutdown, or a failure. */
async function ended(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  run: { job: AnyJob; payload: JobPayload; ctx: Context; error: unknown; ms: number },
): Promise<UnitOutcome> {
  const { job, payload, ctx, error, ms } = run;
  if (error instanceof Discard) {
    deps.stats.processed++;
    if (deps.jobLogging) ctx.logger.info("discarded", { reason: error.message });
    return finish(deps, unit, { kind: "discarded", queue: unit.queue, payload, ms, code: error.code });
  }
  if (error instanceof Interrupt) {
    // Asked to stop here and resume later: back on its queue as it is.
    if (deps.jobLogging) ctx.logger.info("interrupted", { reason: error.message });
    return "requeue";
  }
  if (error instanceof RunLater) {
    if (deps.jobLogging) ctx.logger.info("run later", { reason: error.message, at: new Date(error.at).toISOString() });
    // Unchanged, byte for byte: it is neither a failure nor a retry.
    const entry: SettleEntry = { target: "schedule", score: error.at / 1000, json: unit.raw };
    return finish(deps, unit, { kind: "later", queue: unit.queue, payload, ms }, entry);
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
  ctx.logger.warn("fail", {
    elapsed_ms: Math.round(ms),
    error_class: errorClass(error),
    error_message: errorMessage(error),
  });
  return failed(deps, unit, await deps.retry.decide(job, payload, unit.queue, error), { error, ms });
}

/** A failure, decided: written once, then death handlers for a job that died. */
async function failed(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  decision: RetryDecision,
  run: { error: unknown; ms: number },
): Promise<UnitOutcome> {
  const outcome: JobOutcome = {
    kind: decision.kind,
    queue: unit.queue,
    payload: decision.payload,
    ms: run.ms,
    error: run.error,
  };
  const entry: SettleEntry | undefined = decision.kind === "retry"
    ? { target: "retry", score: decision.at, json: decision.json }
    : decision.kind === "dead"
    ? { target: "dead", score: Date.now() / 1000, json: decision.json }
    : undefined;
  const settled = await finish(deps, unit, outcome, entry);
  if (settled === "ack" && (decision.kind === "dead" || decision.kind === "dropped")) {
    await deps.settler.died(decision.payload, run.error);
  }
  return settled;
}

/**
 * Tells the features of an outcome, makes their writes and the core's
 * entry (if any) durable, and resolves to what to do with the unit.
 */
function finish(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  outcome: JobOutcome,
  entry?: SettleEntry,
): UnitOutcome | Promise<UnitOutcome> {
  const writes = observe(deps, outcome);
  // A success no feature writes for is acknowledged at once: no promise.
  if (!writes && !entry) return "ack";
  // Only features' writes (a batch job's success): no frame of our own around the settler's answer.
  if (!entry) return writeFeatures(deps, unit, writes!);
  return written(deps, unit, outcome, writes, entry);
}

/** Tells the features of an outcome; their writes, if any. */
function observe(deps: ProcessorDeps, outcome: JobOutcome): OutcomeWrite[] | undefined {
  let writes: OutcomeWrite[] | undefined;
  for (const feature of deps.observers) {
    feature.observe?.(outcome);
    const write = feature.outcome?.(outcome, deps);
    if (write) (writes ??= []).push(write);
  }
  return writes;
}

/** Features' writes alone, made durable; an unwritable one buries the job. */
function writeFeatures(deps: ProcessorDeps, unit: UnitOfWork, writes: OutcomeWrite[]): Promise<UnitOutcome> {
  return deps.settler.writeFeatures(unit, writes).then((done) => orBury(deps, unit, FEATURES, done));
}

/** What a failed write of features' outcomes is called where it is reported. */
const FEATURES = "features' outcome";

/** The features' outcome writes, then the job's own (`entry`), made durable. */
async function written(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  outcome: JobOutcome,
  writes: OutcomeWrite[] | undefined,
  entry: SettleEntry,
): Promise<UnitOutcome> {
  if (writes) {
    const done = await deps.settler.writeFeatures(unit, writes);
    if (done !== "ack") return orBury(deps, unit, FEATURES, done);
  }
  const what = outcome.kind === "later" ? "writing a job to run later" : `writing ${outcome.kind}`;
  return orBury(deps, unit, what, await deps.settler.settle(unit, entry, what));
}

/** The settler's answer, with an unwritable outcome buried instead. */
function orBury(deps: ProcessorDeps, unit: UnitOfWork, what: string, done: UnitOutcome | Unwritable) {
  return typeof done === "object" ? buryUnwritable(deps, unit, what, done) : done;
}

/** Buries the job's original text, with why its outcome could not be written appended. */
async function buryUnwritable(
  deps: ProcessorDeps,
  unit: UnitOfWork,
  what: string,
  { unwritable }: Unwritable,
): Promise<UnitOutcome> {
  const entry = appendFields(unit.raw, {
    error_class: errorClass(unwritable),
    error_message: `Cannot record the job's outcome (${what}): ${errorMessage(unwritable)}`.slice(0, 10_000),
    failed_at: wireTime(Date.now(), deps.timeFormat),
  });
  const done = await deps.settler.settle(
    unit,
    { target: "dead", score: Date.now() / 1000, json: entry },
    "burying an unwritable job",
  );
  return typeof done === "object" ? "abandon" : done;
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

/** A job no class here defines, by the worker's policy. */
function unknownJob(deps: ProcessorDeps, unit: UnitOfWork, payload: JobPayload): Promise<UnitOutcome> {
  const error = new PayloadError(`Cannot run job as no job named '${payload.class}' is registered in this worker`);
  error.name = "UnknownJobError";
  if (deps.unknownJobs === "dead") return bury(deps, unit, payload, error);
  if (deps.unknownJobs === "postpone") {
    // Another process may know it. A growing delay (2, 4, 8 ... 300 s),
    // counted in the payload: a fleet that does not know it would otherwise
    // pass it around in a hot loop.
    const tries = typeof payload.edgekiq_postponed === "number" ? payload.edgekiq_postponed + 1 : 1;
    payload.edgekiq_postponed = tries;
    const delay = Math.min(MAX_POSTPONE_SECONDS, 2 ** Math.min(tries, 20));
    deps.logger.warn("no job of this class here: postponed for another process", {
      class: payload.class,
      jid: payload.jid,
      delay_s: delay,
    });
    const json = serializePayload(payload, deps.timeFormat);
    return deps.settler.settle(unit, { target: "schedule", score: Date.now() / 1000 + delay, json }, "postponing")
      .then((done) => orBury(deps, unit, "postponing", done));
  }
  // Sidekiq's NameError: a failure like any other, retried with backoff. A
  // payload without `retry` gets Sidekiq's default (true): the class that
  // would say otherwise is not here, and dropping a job no one ran loses it.
  if (payload.retry === undefined) payload.retry = true;
  deps.stats.processed++;
  deps.stats.failed++;
  deps.logger.warn("fail", {
    class: payload.class,
    jid: payload.jid,
    error_class: error.name,
    error_message: error.message,
  });
  return deps.retry.decide(undefined, payload, unit.queue, error).then((decision) =>
    failed(deps, unit, decision, { error, ms: 0 })
  );
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
  const dead: SettleEntry = {
    target: "dead",
    score: Date.now() / 1000,
    json: serializePayload(entry, deps.timeFormat),
  };
  // A readable job's features hear of its death as of any other: its batch counts it (or it would wait forever), and
  // a limiter slot its receive took is let go. An unreadable one names nothing they could know. Death handlers are
  // not run: they are for jobs that ran and failed (a buried job's unique lock still waits for its expiry).
  if (payload && deps.observers.length) {
    return finish(deps, unit, { kind: "dead", queue: unit.queue, payload: entry, ms: 0, error }, dead);
  }
  const done = await deps.settler.settle(unit, dead, "burying a bad job");
  return typeof done === "object" ? "abandon" : done;
}

/** The per-job context; the logger and the job's own stopping signal are made only if used. */
class Context implements JobContext {
  readonly payload: JobPayload;
  readonly queue: string;
  readonly signal: AbortSignal;
  readonly transport: Transport;
  readonly keys: Keys;
  #deps: Pick<ProcessorDeps, "stopping" | "logger" | "progressors" | "onError">;
  #control: JobControl | undefined;
  #logger?: Logger;
  #told?: ProgressContext;

  constructor(
    payload: JobPayload,
    queue: string,
    deps: Pick<ProcessorDeps, "signal" | "stopping" | "transport" | "keys" | "logger" | "progressors" | "onError">,
    control: JobControl | undefined,
  ) {
    this.payload = payload;
    this.queue = queue;
    this.signal = deps.signal;
    this.transport = deps.transport;
    this.keys = deps.keys;
    this.#deps = deps;
    this.#control = control;
  }

  get jid(): string {
    return this.payload.jid;
  }

  get retryCount(): number {
    return typeof this.payload.retry_count === "number" ? this.payload.retry_count + 1 : 0;
  }

  get stopping(): AbortSignal {
    return this.#control?.signal() ?? this.#deps.stopping;
  }

  get logger(): Logger {
    return this.#logger ??= this.#deps.logger.child({
      class: this.payload.class,
      jid: this.payload.jid,
      queue: this.queue,
    });
  }

  progress(value: unknown): void {
    if (this.#control) this.#control.progress = value;
    if (this.#deps.progressors.length === 0) return;
    const { transport, keys, queue } = this;
    this.#told ??= { queue, transport, keys, onError: this.#deps.onError };
    for (const feature of this.#deps.progressors) {
      try {
        feature.progress!(this.payload, value, this.#told);
      } catch (error) {
        this.#deps.onError(error, { context: `${feature.name} progress`, jid: this.payload.jid });
      }
    }
  }
}
