/**
 * Periodic schedules as declared in code, and their checked, stored form.
 *
 * A schedule is declared next to the worker (`periodic: [...]`) and turned
 * into a {@link PeriodicSpec}: the timing (cron + time zone, or `every`
 * seconds), the missed-tick policy, and the job's payload template. The spec
 * is what Redis stores, so any process (even one of another app, or a cron
 * function that does not know this job) computes the same ticks and builds
 * the same job for a due schedule.
 *
 * @module
 */
import { ConfigError } from "../../errors.ts";
import { type AnyJob, validateArgs } from "../../job.ts";
import { type JobPayload } from "../../payload.ts";
import { describeValue } from "../../describe_value.ts";
import { assertJsonSafe } from "../../json_safe.ts";
import { digest } from "./spec_digest.ts";
import { firstTick, type TickSpec } from "./ticks.ts";

/**
 * What to do with ticks missed while nothing ran (every process down, a
 * serverless cron not called): `"skip"` runs the schedule once, now, and goes
 * on from the next tick; `{ catchUp: n }` enqueues the latest `n` missed
 * ticks (1 to 100), each as its own job.
 */
export type MissedPolicy = "skip" | { readonly catchUp: number };

/** Fields every schedule has, whatever its timing. */
export interface PeriodicScheduleBase {
  /** The job: a `defineJob()` result, or a class name (a job another process, maybe Ruby, runs). */
  job: AnyJob | string;
  /** The job's arguments, checked against its schema at registration; default `[]`. */
  args?: readonly unknown[];
  /**
   * A stable name. Default: derived from the job, the timing and the args
   * (`"Report 0 7 * * * Europe/Berlin 1a2b3c4d5e6f70"`), so editing any of
   * them makes a new schedule. Give one to keep a schedule's identity (and its
   * paused state and history) across such edits.
   */
  name?: string;
  /** Queue to push to; default the job's queue, else `"default"`. */
  queue?: string;
  /** Missed-tick policy; default `"skip"`. */
  missed?: MissedPolicy;
  /**
   * Seconds a tick may be late and still count as on time; default 60. A
   * tick later than this is a missed tick and follows `missed`. Keep it above
   * the gap between two polls (and above the clock skew between processes).
   */
  grace?: number;
}

/** A cron schedule: `cron` in 5 fields (minutes) or 6 (seconds first), read in `tz`. */
export interface CronSchedule extends PeriodicScheduleBase {
  /** A cron expression (`"0 * * * *"`, `"0 30 9 * * MON-FRI"`, `"@daily"`). */
  cron: string;
  /** IANA time zone the expression is read in (`"Europe/Berlin"`); default UTC. DST is handled by croner. */
  tz?: string;
  /**
   * The name of a sidekiq-cron job with the same timing whose ticks this
   * schedule shares: each tick is enqueued once, by edgekiq or by Ruby's
   * sidekiq-cron poller, whichever claims it first; disabling the job in
   * sidekiq-cron's Web UI stops it here too.
   */
  sidekiqCron?: string;
  every?: undefined;
}

/** An interval schedule: every `every` seconds, on multiples of it since the epoch (UTC). */
export interface EverySchedule extends PeriodicScheduleBase {
  /** Whole seconds between ticks, at least 1. `every: 60` ticks at the start of each minute. */
  every: number;
  cron?: undefined;
  tz?: undefined;
  sidekiqCron?: undefined;
}

/**
 * A periodic schedule as declared in code.
 *
 * @example
 * ```ts
 * const schedules: PeriodicSchedule[] = [
 *   { cron: "0 7 * * MON-FRI", tz: "Europe/Berlin", job: Report, args: ["daily"] },
 *   { every: 30, job: "Heartbeat", queue: "low", missed: { catchUp: 5 } },
 * ];
 * ```
 */
export type PeriodicSchedule = CronSchedule | EverySchedule;

/** A job payload without its jid and times: what every tick's job starts from. */
export type PayloadTemplate = Pick<JobPayload, "class" | "queue" | "args"> & Record<string, unknown>;

/**
 * The stored form of a schedule: everything a process needs to compute its
 * ticks and build its job, with no code of its own.
 */
export interface PeriodicSpec extends TickSpec {
  /** The sidekiq-cron job whose ticks it shares, if any. */
  readonly sidekiqCron?: string;
  /** The job payload without its per-push fields (jid, times). */
  readonly payload: Readonly<PayloadTemplate>;
}

/** A checked schedule, ready to register. */
export interface NormalizedSchedule {
  /** Its stable name. */
  readonly name: string;
  /** The stored form. */
  readonly spec: PeriodicSpec;
  /** `spec` as stored (JSON). */
  readonly specJson: string;
  /** Digest of `specJson`: a claim built from another spec is refused. */
  readonly specDigest: string;
  /** Digest of the timing alone: when it changes, the next tick is computed again. */
  readonly timingDigest: string;
  /** The job definition, when the schedule names one (client middleware receives it). */
  readonly job: AnyJob | undefined;
}

// deno-lint-ignore no-control-regex -- control characters are what it refuses
const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * Checks one declared schedule and turns it into its stored form. Throws a
 * {@link ConfigError} naming the schedule and the field at fault.
 *
 * @example
 * ```ts
 * const s = await normalizeSchedule({ cron: "0 * * * *", job: Report }, 0);
 * s.name; // "Report 0 * * * *"
 * ```
 */
export async function normalizeSchedule(schedule: PeriodicSchedule, index: number): Promise<NormalizedSchedule> {
  const where = `periodic[${index}]`;
  const fail = (what: string, value: unknown, cause?: unknown): never => {
    throw new ConfigError(`Cannot register ${where} as ${what}: current value is ${describeValue(value)}`, { cause });
  };
  if (typeof schedule !== "object" || schedule === null) fail("it must be an object", schedule);
  const { job, cron, tz, every } = schedule;
  const className = typeof job === "string" ? job : job?.name;
  if (typeof className !== "string" || className === "") {
    fail("'job' must be a defineJob() result or a class name", job);
  }
  const args = schedule.args ?? [];
  if (!Array.isArray(args)) fail("'args' must be an array", args);
  if (typeof job !== "string" && job.schema) {
    try {
      await validateArgs(job, args);
    } catch (error) {
      throw new ConfigError(`Cannot register ${where} as its args do not fit ${className}: ${String(error)}`, {
        cause: error,
      });
    }
  }
  try {
    assertJsonSafe(args, "args");
  } catch (error) {
    throw new ConfigError((error as Error).message.replace("Cannot push job as ", `Cannot register ${where} as `), {
      cause: error,
    });
  }
  if ((cron === undefined) === (every === undefined)) {
    fail("exactly one of 'cron' and 'every' must be set", { cron, every });
  }
  if (cron !== undefined && (typeof cron !== "string" || cron.trim() === "")) fail("'cron' must be a string", cron);
  if (tz !== undefined && (cron === undefined || typeof tz !== "string" || tz === "")) {
    fail("'tz' must be an IANA time zone name, and only with 'cron'", tz);
  }
  const { sidekiqCron } = schedule;
  if (
    sidekiqCron !== undefined &&
    (cron === undefined || typeof sidekiqCron !== "string" || !/^\S+$/.test(sidekiqCron) || CONTROL.test(sidekiqCron))
  ) {
    fail("'sidekiqCron' must name a sidekiq-cron job, and only with 'cron'", sidekiqCron);
  }
  if (every !== undefined && !(Number.isInteger(every) && every >= 1)) {
    fail("'every' must be a whole number of seconds >= 1", every);
  }
  const missed = schedule.missed ?? "skip";
  const catchUp = typeof missed === "object" && missed !== null ? missed.catchUp : undefined;
  if (missed !== "skip" && !(Number.isInteger(catchUp) && catchUp! >= 1 && catchUp! <= 100)) {
    fail(`'missed' must be "skip" or { catchUp: 1..100 }`, missed);
  }
  const grace = schedule.grace ?? 60;
  if (typeof grace !== "number" || !Number.isFinite(grace) || grace < 0) fail("'grace' must be seconds >= 0", grace);
  const options = typeof job === "string" ? {} : job.options;
  const queue = schedule.queue ?? options.queue ?? "default";
  if (typeof queue !== "string" || !/^[^\s,]+$/.test(queue)) {
    fail("'queue' must be a non-empty string without spaces or commas", queue);
  }

  const payload: PayloadTemplate = { class: className, queue, args: [...args], retry: options.retry ?? true };
  if (options.retryQueue !== undefined) payload.retry_queue = options.retryQueue;
  if (options.retryFor !== undefined) payload.retry_for = options.retryFor;
  if (options.dead !== undefined) payload.dead = options.dead;
  if (options.backtrace !== undefined) payload.backtrace = options.backtrace;
  if (options.tags !== undefined) payload.tags = [...options.tags];
  const spec: PeriodicSpec = {
    ...(cron !== undefined ? { cron: cron.trim(), ...(tz !== undefined ? { tz } : {}) } : { every }),
    ...(sidekiqCron !== undefined ? { sidekiqCron } : {}),
    missed: catchUp === undefined ? "skip" : "catchUp",
    ...(catchUp !== undefined ? { catchUp } : {}),
    grace,
    payload,
  };
  try {
    // Parses the expression and the zone (croner checks a zone when it first uses it).
    if (firstTick(spec, Date.now() / 1000, false) === Infinity) fail("'cron' never matches a date", cron);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    fail(`its timing is invalid (${(error as Error).message})`, { cron, tz }, error);
  }
  const timing = cron !== undefined ? `${spec.cron}${tz ? ` ${tz}` : ""}` : `every ${every}s`;
  const argsText = JSON.stringify(args);
  const name = schedule.name ?? `${className} ${timing}${args.length ? ` ${digest(argsText)}` : ""}`;
  if (typeof name !== "string" || name === "" || name.length > 200 || CONTROL.test(name)) {
    fail("'name' must be 1 to 200 characters without control characters", name);
  }
  const specJson = JSON.stringify(spec);
  return {
    name,
    spec,
    specJson,
    specDigest: digest(specJson),
    timingDigest: digest(timing),
    job: typeof job === "string" ? undefined : job,
  };
}

const normalized = new WeakMap<readonly PeriodicSchedule[], Promise<NormalizedSchedule[]>>();

/**
 * Checks a whole schedule list (names must be unique). The result is kept per
 * list, so a poller passing the same array every cycle checks it once.
 *
 * @example
 * ```ts
 * const list = await normalizeSchedules([{ every: 60, job: Ping }]);
 * ```
 */
export function normalizeSchedules(schedules: readonly PeriodicSchedule[]): Promise<NormalizedSchedule[]> {
  if (!Array.isArray(schedules)) {
    return Promise.reject(
      new ConfigError(
        `Cannot register periodic schedules as they must be an array: current value is ${describeValue(schedules)}`,
      ),
    );
  }
  let done = normalized.get(schedules);
  if (!done) {
    done = Promise.all(schedules.map(normalizeSchedule)).then((list) => {
      const seen = new Set<string>();
      for (const s of list) {
        if (seen.has(s.name)) {
          throw new ConfigError(
            `Cannot register periodic schedules as two are named '${s.name}': give one of them its own 'name'`,
          );
        }
        seen.add(s.name);
      }
      return list;
    });
    normalized.set(schedules, done);
    // A failed check is not kept: a caller fixing the list in place retries.
    done.catch(() => normalized.delete(schedules));
  }
  return done;
}

/**
 * Reads a stored spec back (from Redis), or `undefined` when it is not one.
 *
 * @example
 * ```ts
 * const spec = parseSpec(await transport.call("HGET", key, "spec") as string);
 * ```
 */
export function parseSpec(json: string | null | undefined): PeriodicSpec | undefined {
  if (!json) return undefined;
  try {
    const spec = JSON.parse(json) as PeriodicSpec;
    const timed = typeof spec?.cron === "string" || (Number.isInteger(spec?.every) && spec.every! >= 1);
    return timed && typeof spec.grace === "number" && typeof spec.payload?.class === "string" ? spec : undefined;
  } catch {
    return undefined;
  }
}
