/**
 * Periodic (cron) jobs without a leader: schedules declared in code, their
 * next due ticks in Redis, and one script that claims a due tick and pushes
 * its job atomically, so any number of processes (and serverless cron
 * calls) enqueue each tick exactly once.
 *
 * The engine drives it with three calls:
 * - {@link registerPeriodic} at start and then every poll cycle (it sends
 *   nothing while its lease is fresh);
 * - the poll check asks "is anything due?" with {@link periodicDueLua}
 *   folded into its script (no extra command), or on its own one command;
 * - {@link enqueueDuePeriodic} when something is due.
 *
 * @example
 * ```ts
 * const periodic: PeriodicSchedule[] = [{ cron: "*" + "/5 * * * *", job: Report, tz: "Europe/Berlin" }];
 * await registerPeriodic(client, periodic, { owner: "reports" });
 * const { enqueued } = await enqueueDuePeriodic({ client, schedules: periodic });
 * ```
 *
 * @module
 */

export { periodicJobs } from "./periodic_jobs_feature.ts";
export type { PeriodicJobsOptions } from "./periodic_jobs_feature.ts";
export { PeriodicSet } from "./periodic_set.ts";
export type { PeriodicEntry } from "./periodic_set.ts";
export { registerPeriodic } from "./register.ts";
export type { RegisterPeriodicOptions, RegisterPeriodicResult } from "./register.ts";
export { enqueueDuePeriodic } from "./enqueue.ts";
export type { EnqueueDuePeriodicOptions, EnqueueDuePeriodicResult } from "./enqueue.ts";
export type {
  CronSchedule,
  EverySchedule,
  MissedPolicy,
  PeriodicSchedule,
  PeriodicScheduleBase,
  PeriodicSpec,
} from "./schedule.ts";
