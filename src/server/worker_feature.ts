/**
 * What a worker (and a serverless drain, and a poll) takes from a feature:
 * everything a client takes, plus its server middleware, its observer of
 * job outcomes, the writes that must be durable before a job is
 * acknowledged, its death handler, and its work on the poll cycle, on the
 * heartbeat and at start and stop. One slice of the whole contract
 * (`Feature`, in `src/features/feature.ts`).
 *
 * @module
 */
import type { Client } from "../client.ts";
import type { ClientFeature } from "../client_feature.ts";
import type { DeathHandler } from "../dead_set_rules.ts";
import type { Keys } from "../keys.ts";
import type { Logger } from "../logger.ts";
import type { JobPayload } from "../payload.ts";
import type { ServerMiddleware } from "../server_middleware.ts";
import type { AnyJob } from "../job.ts";
import type { Script } from "../transport/script.ts";
import type { RedisArg, Transport } from "../transport/transport.ts";

/**
 * How a job's run ended, as features see it:
 * - `succeeded`: `perform` returned (`result` is what it returned);
 * - `discarded`: it threw `Discard`, or `retryIn`/`retriesExhausted` discarded it;
 * - `retry`: it failed and waits in the `retry` set;
 * - `dead`: it failed for good and is in the `dead` set;
 * - `dropped`: it failed for good and is kept nowhere (`retry: false` or `dead: false`);
 * - `later`: it asked to run later (`RunLater`) and waits in the `schedule` set.
 */
export type JobOutcomeKind = "succeeded" | "discarded" | "retry" | "dead" | "dropped" | "later";

/** One job's outcome. */
export interface JobOutcome {
  readonly kind: JobOutcomeKind;
  /** The queue it ran from (a failure's `payload.queue` may already name its `retry_queue`). */
  readonly queue: string;
  /** The job as it ran (a failed job's with its error fields and retry count). */
  readonly payload: Readonly<JobPayload>;
  /** How long `perform` (with the server middleware) took, ms. */
  readonly ms: number;
  /** What `perform` returned (`succeeded` only). */
  readonly result?: unknown;
  /** What it threw (`retry`, `dead`, `dropped`, `discarded` by a hook). */
  readonly error?: unknown;
  /**
   * Why a `discarded` job was discarded, when a feature said (the `code` of
   * its `Discard`): `"expired"` (it had not started by its `expiresAt`),
   * `"cancelled"` (`cancelJob`). Undefined otherwise.
   */
  readonly code?: string;
}

/** What a feature's `receive` hook may use besides the payload. */
export interface ReceiveContext extends JobSite {
  readonly logger: Logger;
  /** Reports an error without failing the job. */
  readonly onError: (error: unknown, context: Record<string, unknown>) => void;
  /**
   * Fires when the worker (capsule) or drain that received the job quiets
   * or ends: a feature instance serving several at once tells by it which
   * of its jobs belong to the one stopping.
   */
  readonly stopping?: AbortSignal;
}

/**
 * A write a feature needs durable before a job's outcome is acknowledged (a
 * batch's count, a flow's stored result). It may be sent more than once (a
 * lost reply, a crash before the ack): the script must apply once per job
 * and outcome. Writes of jobs that finish together share one round trip.
 */
export interface OutcomeWrite {
  readonly script: Script<unknown>;
  readonly keys: readonly string[];
  readonly args: readonly RedisArg[];
  /**
   * With `coalesce`: args that go with `keys`, sent once per call with them
   * (the same for every write that shares its `keys` array).
   */
  readonly head?: readonly RedisArg[];
  /**
   * The script takes many writes in one call, framed as `frameWrites`
   * (`frame_writes.ts`) says: a write whose `keys` is the very array of an
   * earlier write of the call sends neither its keys nor its `head` again,
   * and such writes in a row whose first arg is a string without a newline,
   * all with one arg or all with two, go as one run (their first args
   * joined by newlines, then any second ones): the script must read all three forms.
   * The settler frames every coalesced write so (one sent alone too) and
   * sends the writes of one script made in one burst of work, or while a
   * call of it is on its way, together: jobs finishing at the same moment
   * cost one command between them, not one each, and jobs of one batch name
   * its keys once.
   */
  readonly coalesce?: boolean;
}

/** Where a job runs, for a feature's `receive` and `outcome`: the worker's transport and key names. */
export interface JobSite {
  readonly transport: Transport;
  readonly keys: Keys;
}

/** What a feature's `progress` hook gets beside the value: where the job runs, and a transport to write with. */
export interface ProgressContext extends JobSite {
  /** The queue the job runs from. */
  readonly queue: string;
  /** Reports an error (a write that failed) without failing the job. */
  readonly onError: (error: unknown, context: Record<string, unknown>) => void;
}

/** A job running in this worker, as a feature sees it. */
export interface RunningJobInfo {
  readonly jid: string;
  readonly queue: string;
  /** Its `class`. */
  readonly className: string;
  /** Epoch ms when it started. */
  readonly startedAt: number;
  /** The job as fetched (undefined where its text is not a JSON object). */
  readonly payload: Readonly<JobPayload> | undefined;
}

/** The jobs running in a worker, for a feature that acts on them (cancel, say). */
export interface RunningJobs {
  /** The jobs running now. */
  list(): RunningJobInfo[];
  /**
   * Asks the job `jid`, if it runs here, to stop: its `ctx.stopping` aborts
   * with `reason`. Resolves to whether it runs here.
   */
  stop(jid: string, reason: string): boolean;
}

/** What a feature's lifecycle and poll hooks get. */
export interface FeatureContext {
  /** The client of the worker (or of the poll): its transport, keys, time format and middleware. */
  readonly client: Client<object>;
  readonly transport: Transport;
  readonly keys: Keys;
  readonly logger: Logger;
  /** The worker's identity; undefined in a serverless poll. */
  readonly identity: string | undefined;
  /** Reports an error without stopping anything. */
  readonly onError: (error: unknown, context: Record<string, unknown>) => void;
  /** The jobs running in this worker; undefined in a serverless poll. */
  readonly jobs?: RunningJobs;
}

/** A feature's work on the poll cycle (a worker's poller, `pollOnce()`, the cron routes). */
export interface PollTask {
  /** Runs before every poll's check (periodic schedules register here; usually no command). */
  prepare?(ctx: FeatureContext, now: number): Promise<void>;
  /**
   * A sorted set scored by when this task next has work: the poll check
   * reads it in its own script (no extra command) and `run` is called only
   * when an entry is due. Without it, `run` is called every poll.
   */
  due?(keys: Keys): string;
  /** Does the task's work; resolves to how much it did (shown in `PollResult.features`). */
  run(ctx: FeatureContext, now: number): Promise<number>;
}

/**
 * A feature, as a worker sees it.
 *
 * @example
 * ```ts
 * const timing: WorkerFeature = {
 *   name: "timing",
 *   observe: (outcome) => histogram.record(outcome.payload.class, outcome.ms),
 * };
 * createWorker({ transport, jobs, features: [timing] });
 * ```
 */
export interface WorkerFeature extends ClientFeature {
  /**
   * Runs before a job's arguments are checked, for a feature that must see
   * (or rewrite) the payload first: decrypt its arguments, drop it because
   * it expired. It may rewrite `payload` in place; a new `payload.args` is
   * for this run only: whatever the engine writes of the job afterwards (a
   * retry, the dead set) carries the arguments as they were received.
   * Throwing `Discard` ends the job quietly, `RunLater` puts it back for
   * later, anything else buries it in the dead set with the error as its
   * reason.
   */
  readonly receive?: (payload: JobPayload, job: AnyJob, ctx: ReceiveContext) => void | Promise<void>;
  /** Runs around every job's `perform`, inside the worker's own `middleware`. */
  readonly server?: ServerMiddleware;
  /**
   * Told of every job's outcome, synchronously, as it is decided (before it
   * is written): for counters. Cheaper than a middleware (no promise).
   */
  readonly observe?: (outcome: JobOutcome) => void;
  /** Writes to make durable before the job is acknowledged (see {@link OutcomeWrite}). */
  readonly outcome?: (outcome: JobOutcome, site: JobSite) => OutcomeWrite | undefined;
  /**
   * Told of a job's progress (`ctx.progress(value)`), synchronously; the
   * engine shows the latest in the worker's work hash (the Busy page) with
   * each heartbeat, and a feature that writes more often must bound its own
   * rate (`context` says where the job runs and lends the transport).
   */
  readonly progress?: (payload: Readonly<JobPayload>, value: unknown, context: ProgressContext) => void;
  /** Runs when a job dies (as the worker's `deathHandlers`). */
  readonly onDeath?: DeathHandler;
  /** Work on the poll cycle. */
  readonly poll?: PollTask;
  /**
   * A sorted set the heartbeat reads inside its own script (no command of
   * its own): its highest score comes back with each beat and is handed to
   * `beat`, so a feature learns whether anything was added since it last
   * looked without asking (the cancel feature's cancelled jids).
   */
  readonly watch?: (keys: Keys) => string;
  /**
   * Runs beside every heartbeat of a worker (a drain has none: it runs `stop`
   * at its end). `watched` is the highest score of the feature's `watch`
   * set as the beat read it (null when the set is empty or missing;
   * undefined without `watch`).
   */
  readonly beat?: (ctx: FeatureContext, watched?: number | null) => Promise<void>;
  /** Runs in `worker.run()` before anything is fetched; an error fails `run()`. */
  readonly start?: (ctx: FeatureContext) => Promise<void>;
  /** Runs at the end of a worker's stop and of a drain, once jobs have finished (a last flush). */
  readonly stop?: (ctx: FeatureContext) => Promise<void>;
}
