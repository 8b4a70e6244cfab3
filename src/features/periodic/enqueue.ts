/**
 * `enqueueDuePeriodic()`: enqueues every periodic tick that is due, from any
 * process, exactly once across all of them.
 *
 * One read finds the due schedules and their ticks (the scores of
 * `edgekiq:periodic:due`); the jobs are built here from each schedule's spec;
 * one claim script then claims each tick and pushes its jobs atomically (see
 * `claim_script.ts`). The spec comes from this process's own declarations or
 * from what an earlier claim returned; a schedule this process has never
 * seen costs one more claim round (the first answers with its spec).
 *
 * A schedule that cannot be enqueued fails alone: a time zone or cron this
 * runtime cannot read (a mixed fleet, another tool's seven-field cron), a
 * job its client middleware cannot build, a key of the wrong type (the
 * claim script answers `broken`). The others are claimed as usual; the
 * broken one stays due, is retried each poll, and is logged and marked in
 * its hash (`broken`, which the dashboard shows) once per change of reason.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import type { Logger } from "../../logger.ts";
import { pairs } from "../../transport/reply_readers.ts";
import type { RedisArg } from "../../transport/transport.ts";
import { PERIODIC_CLAIM } from "./claim_script.ts";
import { PERIODIC_CONTROL } from "./control_script.ts";
import { scoreArg } from "./lua_common.ts";
import { buildPeriodicJobs, type PeriodicJob } from "./periodic_jobs.ts";
import {
  type NormalizedSchedule,
  normalizeSchedules,
  parseSpec,
  type PeriodicSchedule,
  type PeriodicSpec,
} from "./schedule.ts";
import { sidekiqCronMember, sidekiqCronTime } from "./sidekiq_cron.ts";
import { planTicks, timingProblem } from "./ticks.ts";

/** Options for {@link enqueueDuePeriodic}. */
export interface EnqueueDuePeriodicOptions {
  /** The client: transport, key prefix, time format and middleware of the pushes. */
  client: Client;
  /** Now, epoch ms; default `Date.now()`. Ticks at or before it are due. */
  now?: number;
  /** This process's schedules: their specs save a round, their job definitions reach client middleware. */
  schedules?: readonly PeriodicSchedule[];
  /**
   * Due entries already read (name, tick), e.g. by the poller's poll check;
   * saves the first read. Default: read `edgekiq:periodic:due` up to `batch`.
   */
  due?: ReadonlyArray<readonly [name: string, tick: number | string]>;
  /** Schedules claimed per call; default 100. */
  batch?: number;
  /** Where a schedule that cannot be enqueued is reported (once per change of reason); default silent. */
  logger?: Logger;
}

/** What {@link enqueueDuePeriodic} did. */
export interface EnqueueDuePeriodicResult {
  /** Jobs pushed. */
  enqueued: number;
  /** Each pushed job: its schedule, tick (epoch s) and jid. */
  jobs: { name: string; tick: number; jid: string }[];
  /** Due ticks another process claimed first. */
  stale: number;
  /** Schedules dropped because no owner's lease is alive any more. */
  expired: string[];
  /** Due schedules that could not be enqueued, and why; the others were claimed as usual. */
  broken: { name: string; error: string }[];
  /** Commands sent (each one round trip). */
  commands: number;
}

interface Known {
  spec: PeriodicSpec;
  specDigest: string;
}

/** Specs learned from claims, per client: name -> spec. */
const learned = new WeakMap<Client, Map<string, Known>>();

/** Per client: broken schedule name -> the reason last reported, so each is reported once per change. */
const reported = new WeakMap<Client, Map<string, string>>();

/** The longest reason kept in a schedule's hash. */
const MAX_REASON = 500;

/**
 * Enqueues every due periodic tick. Costs one command when nothing is due
 * (or none with `due` from a poll check that found nothing; then do not call
 * it at all), and two for a cycle with due ticks: the read and one claim
 * for all of them. Safe to call from any number of processes at once, with
 * skewed clocks: each tick is pushed once.
 *
 * @example
 * ```ts
 * const { enqueued } = await enqueueDuePeriodic({ client, schedules: periodic });
 * ```
 */
export async function enqueueDuePeriodic(options: EnqueueDuePeriodicOptions): Promise<EnqueueDuePeriodicResult> {
  const { client } = options;
  const k = client.keys;
  const nowMs = options.now ?? Date.now();
  const now = nowMs / 1000;
  const batch = options.batch ?? 100;
  const result: EnqueueDuePeriodicResult = { enqueued: 0, jobs: [], stale: 0, expired: [], broken: [], commands: 0 };
  const local = new Map<string, NormalizedSchedule>();
  for (const s of options.schedules ? await normalizeSchedules(options.schedules) : []) local.set(s.name, s);
  let cache = learned.get(client);
  if (!cache) learned.set(client, cache = new Map());
  let problems = reported.get(client);
  if (!problems) reported.set(client, problems = new Map());

  const state: ClaimState = {
    client,
    now,
    nowMs,
    local,
    cache,
    result,
    respecs: new Map(),
    problems,
    logger: options.logger,
  };
  let due = options.due?.map(([name, tick]): [string, number] => [name, Number(tick)]);
  // A page of due schedules at a time; a full page means there may be more.
  for (let page = 0; page < 10; page++) {
    if (!due) {
      const reply = await client.transport.call(
        "ZRANGE",
        k.periodicDue,
        "-inf",
        now,
        "BYSCORE",
        "LIMIT",
        0,
        batch,
        "WITHSCORES",
      );
      result.commands++;
      due = pairs(reply).map(([name, tick]) => [name, Number(tick)]);
    }
    const full = due.length >= batch;
    await claimDue(state, due.filter(([, tick]) => tick <= now));
    if (!full) break;
    due = undefined;
  }
  return result;
}

interface ClaimState {
  client: Client;
  now: number;
  nowMs: number;
  local: Map<string, NormalizedSchedule>;
  cache: Map<string, Known>;
  result: EnqueueDuePeriodicResult;
  respecs: Map<string, number>;
  problems: Map<string, string>;
  logger: Logger | undefined;
}

/** Claims a page of due entries, in rounds while some need their spec or have more ticks due than a claim takes. */
async function claimDue(state: ClaimState, due: [string, number][]): Promise<void> {
  const { client, now, nowMs, local, cache, result, respecs } = state;
  const k = client.keys;
  // Each round claims every entry; a round repeats only entries that need
  // their spec (at most twice each) or hit the per-claim tick cap.
  for (let round = 0; due.length > 0 && round < 10; round++) {
    const queues = new Map<string, number>();
    const args: RedisArg[] = [];
    const plans: { name: string; tick: number; next: number; jobs: PeriodicJob[] }[] = [];
    const scheduleKeys: string[] = [];
    for (const [name, tick] of due) {
      const known = cache.get(name) ?? local.get(name);
      const built = known ? await buildJobs(state, name, known, tick) : { ticks: [], next: tick, jobs: [] };
      if (typeof built === "string") {
        // A learned spec is forgotten, so the next poll reads it again: a fix made in Redis is seen.
        if (cache.get(name) === known) cache.delete(name);
        await broken(state, name, built);
        continue;
      }
      const { jobs, ...plan } = built;
      plans.push({ name, tick, next: plan.next, jobs });
      const cron = known?.spec.sidekiqCron;
      scheduleKeys.push(k.periodicSchedule(name));
      if (cron !== undefined) {
        scheduleKeys.push(k.sidekiqCronJob(cron), k.sidekiqCronEnqueued(cron), k.sidekiqCronHistory(cron));
      }
      args.push(name, tick, scoreArg(plan.next), known?.specDigest ?? "", plan.ticks.at(-1) ?? tick);
      args.push(cron === undefined ? 0 : 1, jobs.length);
      for (const job of jobs) {
        let index = queues.get(job.queue);
        if (index === undefined) queues.set(job.queue, index = queues.size + 1);
        args.push(index, job.json, job.jid, job.tick, cron === undefined ? "" : sidekiqCronMember(job.tick));
      }
    }
    if (plans.length === 0) return;
    const names = [...queues.keys()];
    const outcomes = await client.transport.script(
      PERIODIC_CLAIM,
      [k.periodicDue, k.queues, ...names.map(k.queue), ...scheduleKeys],
      [now, sidekiqCronTime(nowMs), names.length, ...names, plans.length, ...args],
    );
    result.commands++;
    const again: [string, number][] = [];
    for (const [i, outcome] of outcomes.entries()) {
      const { name, next, jobs, tick } = plans[i];
      if (outcome.status === "broken") await broken(state, name, outcome.reason);
      else if (outcome.status === "ok") {
        works(state, name);
        const pushed = new Set(outcome.pushed);
        for (const job of jobs) {
          if (pushed.has(job.jid)) result.jobs.push({ name, tick: job.tick, jid: job.jid });
        }
        result.enqueued += pushed.size;
        // More due ticks than one claim takes: claim the rest.
        if (next !== tick && next <= now) again.push([name, next]);
      } else if (outcome.status === "stale") result.stale++;
      else if (outcome.status === "expired") result.expired.push(name);
      else {
        const spec = parseSpec(outcome.spec);
        const tries = (respecs.get(name) ?? 0) + 1;
        respecs.set(name, tries);
        if (!spec) await broken(state, name, "its stored spec cannot be read by this version of edgekiq");
        else if (tries <= 2) {
          cache.set(name, { spec, specDigest: outcome.specDigest });
          again.push([name, tick]);
        }
      }
    }
    due = again;
  }
}

/**
 * Plans a schedule's ticks from `tick` and builds their jobs, or says why it
 * cannot (a timing this runtime cannot read, a job that cannot be built).
 */
async function buildJobs(
  state: ClaimState,
  name: string,
  known: Known | NormalizedSchedule,
  tick: number,
): Promise<{ ticks: number[]; next: number; jobs: PeriodicJob[] } | string> {
  const problem = timingProblem(known.spec, state.now);
  if (problem) return problem;
  try {
    const plan = planTicks(known.spec, tick, state.now);
    const jobs = await buildPeriodicJobs(state.client, {
      name,
      spec: known.spec,
      ticks: plan.ticks,
      now: state.nowMs,
      job: state.local.get(name)?.job,
    });
    return { ...plan, jobs };
  } catch (error) {
    return `its jobs cannot be built: ${(error as Error)?.message ?? String(error)}`;
  }
}

/**
 * A schedule that cannot be enqueued: in the result every time; logged and
 * marked in its hash (for the dashboard) only when its reason changed.
 */
async function broken(state: ClaimState, name: string, reason: string): Promise<void> {
  const error = reason.slice(0, MAX_REASON);
  state.result.broken.push({ name, error });
  if (state.problems.get(name) === error) return;
  state.problems.set(name, error);
  state.logger?.error("periodic schedule cannot be enqueued; the other schedules go on", { schedule: name, error });
  const k = state.client.keys;
  try {
    await state.client.transport.script(
      PERIODIC_CONTROL,
      [k.periodicDue, k.periodicSchedule(name), k.queues, k.queues],
      ["broken", name, state.now, error],
    );
    state.result.commands++;
  } catch {
    // Best effort: the mark only informs the dashboard (a schedule hash of the wrong type cannot take it).
  }
}

/** A schedule claimed: if it was reported broken, say it works again. */
function works(state: ClaimState, name: string): void {
  if (!state.problems.delete(name)) return;
  state.logger?.info("periodic schedule enqueued again", { schedule: name });
}
