/**
 * Tick arithmetic: when a schedule is next due, and which ticks a claim
 * covers. Ticks are whole epoch seconds. Cron expressions are read by
 * croner (no dependencies, runs on Node, Bun, Deno and workerd), which also
 * does time zones and DST: in a spring-forward gap a fixed-time job (`30 2 * * *`)
 * runs at the first valid time after the gap and an interval job (`0 * * * *`) skips
 * the missing times; in a fall-back overlap a fixed-time job runs once
 * and an interval job runs on both occurrences.
 *
 * A cron expression without `tz` is read in UTC, never the process's local
 * zone: every process must compute the same ticks.
 *
 * @module
 */
import { Cron } from "croner";
/** What tick planning reads of a schedule: its timing and its missed-tick policy. */
export interface TickSpec {
  /** The cron expression, if a cron schedule. */
  readonly cron?: string;
  /** Its time zone, if given. */
  readonly tz?: string;
  /** Seconds between ticks, if an interval schedule. */
  readonly every?: number;
  /** `"skip"` or `"catchUp"`. */
  readonly missed: "skip" | "catchUp";
  /** With `catchUp`: how many missed ticks to enqueue at most. */
  readonly catchUp?: number;
  /** Seconds late before a tick counts as missed. */
  readonly grace: number;
}

/** The most ticks one claim enqueues; a longer run of due ticks takes several claims. */
export const MAX_TICKS_PER_CLAIM = 100;

/** Only timing fields matter here. */
type Timing = Pick<TickSpec, "cron" | "tz" | "every">;

const crons = new Map<string, Cron>();

function cronOf(timing: Timing): Cron {
  const key = `${timing.cron}\n${timing.tz ?? ""}`;
  let cron = crons.get(key);
  if (!cron) {
    // No function: croner starts no timer, it only computes dates.
    cron = new Cron(timing.cron!, { timezone: timing.tz ?? "UTC", mode: "5-or-6-parts" });
    if (crons.size >= 1000) crons.clear();
    crons.set(key, cron);
  }
  return cron;
}

/**
 * The first tick strictly after `t` (epoch seconds), or `Infinity` if none.
 *
 * @example
 * ```ts
 * successor({ every: 60 }, 1700000000); // 1700000040 (the next whole minute)
 * ```
 */
export function successor(timing: Timing, t: number): number {
  if (timing.every !== undefined) return Math.floor(t / timing.every) * timing.every + timing.every;
  const next = cronOf(timing).nextRun(new Date(Math.floor(t * 1000)));
  return next ? next.getTime() / 1000 : Infinity;
}

/**
 * Why this runtime cannot compute a schedule's ticks (a time zone its ICU
 * data lacks, a cron croner does not read, such as Quartz's seven fields),
 * or `null` when it can. A schedule stored by another process or tool may
 * be one this runtime cannot read; it must fail alone.
 *
 * @example
 * ```ts
 * timingProblem({ cron: "0 * * * *", tz: "Mars/Olympus_Mons" }, Date.now() / 1000); // "its timing cannot be read here: ..."
 * ```
 */
export function timingProblem(timing: Timing, t: number): string | null {
  try {
    successor(timing, t);
    return null;
  } catch (error) {
    return `its timing cannot be read here: ${(error as Error)?.message ?? String(error)}`;
  }
}

/**
 * The latest `count` ticks at or before `t`, newest first.
 *
 * @example
 * ```ts
 * latestTicks({ every: 10 }, 1700000005, 2); // [1700000000, 1699999990]
 * ```
 */
export function latestTicks(timing: Timing, t: number, count: number): number[] {
  if (timing.every !== undefined) {
    const last = Math.floor(t / timing.every) * timing.every;
    return Array.from({ length: count }, (_, i) => last - i * timing.every!);
  }
  // previousRuns is strictly before its reference: one millisecond on includes `t` itself.
  return cronOf(timing).previousRuns(count, new Date(Math.floor(t * 1000) + 1)).map((d) => d.getTime() / 1000);
}

/**
 * Where a new (or re-timed) schedule starts: the latest tick at or before
 * `now` when it is within the grace period (so a platform cron that calls
 * at 10:00:00.3 still enqueues a schedule's 10:00 tick on its very first
 * run), else the first tick after `now`. With `backdate: false`, always the
 * first tick after `now` (resume after a pause).
 *
 * @example
 * ```ts
 * firstTick({ every: 60, grace: 60 }, 1700000010.5, true); // 1699999980 (10.5 s ago)
 * ```
 */
export function firstTick(spec: Timing & { grace: number }, now: number, backdate: boolean): number {
  if (backdate) {
    const [latest] = latestTicks(spec, now, 1);
    if (latest !== undefined && now - latest <= spec.grace) return latest;
  }
  return successor(spec, now);
}

/** The ticks one claim enqueues, and the schedule's next tick after them. */
export interface TickPlan {
  /** Ticks to enqueue a job for, oldest first (empty: none, only advance). */
  ticks: number[];
  /** The next due tick to store (`Infinity`: never again). */
  next: number;
}

/**
 * Plans a claim of the due tick `expected` at time `now` (epoch seconds).
 * A tick at most `grace` seconds late is on time: it and every later tick up
 * to `now` are enqueued. An older one was missed: `skip` enqueues one job
 * (for the latest tick) and goes on from the next; `catchUp` enqueues the
 * latest `catchUp` ticks since `expected`.
 *
 * @example
 * ```ts
 * planTicks({ every: 60, grace: 60, missed: "skip" }, 1700000040, 1700003600);
 * // { ticks: [1700003580], next: 1700003640 }: an hour missed, run once
 * ```
 */
export function planTicks(spec: TickSpec, expected: number, now: number): TickPlan {
  if (expected > now) return { ticks: [], next: expected };
  if (now - expected <= spec.grace) {
    const ticks: number[] = [];
    let t = expected;
    while (t <= now && ticks.length < MAX_TICKS_PER_CLAIM) {
      ticks.push(t);
      t = successor(spec, t);
    }
    return { ticks, next: t };
  }
  const count = spec.missed === "catchUp" ? Math.min(spec.catchUp ?? 1, MAX_TICKS_PER_CLAIM) : 1;
  const ticks = latestTicks(spec, now, count).filter((t) => t >= expected).reverse();
  return { ticks, next: successor(spec, ticks[ticks.length - 1] ?? now) };
}
