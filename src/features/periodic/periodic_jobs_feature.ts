/**
 * Periodic (cron) jobs as a feature: this app's schedules registered at
 * start (a bad one fails `run()`) and before each poll (no command while the
 * registration is fresh), every app's due ticks enqueued by whichever
 * process polls first (the poll check reads the due set: an idle poll costs
 * no extra command), and the dashboard's Periodic pages.
 *
 * @module
 */
import type { Feature } from "../feature.ts";
import { enqueueDuePeriodic } from "./enqueue.ts";
import { PERIODIC_DASHBOARD } from "./periodic_dashboard.ts";
import { registerPeriodic } from "./register.ts";
import type { PeriodicSchedule } from "./schedule.ts";

/** Options for {@link periodicJobs}. */
export interface PeriodicJobsOptions {
  /**
   * Cron schedules this app declares (`{ cron: "0 * * * *", job, args, tz }`
   * or `{ every: 60, job }`). Without any, the feature still enqueues every
   * other app's due ticks: no leader.
   */
  schedules?: readonly PeriodicSchedule[];
  /** The app owning `schedules`: a schedule removed from that app's code stops at its next deploy. */
  owner?: string;
}

/**
 * Periodic jobs, on by default in `createWorker`, `pollOnce` and the cron
 * routes (the root entry point adds it from their `periodic` and
 * `periodicOwner` options) and in `dashboard()`.
 *
 * @example
 * ```ts
 * createWorker({ transport, jobs, features: [periodicJobs({ schedules: [{ cron: "0 * * * *", job: Report }] })] });
 * ```
 */
export function periodicJobs(options: PeriodicJobsOptions = {}): Feature {
  const schedules = options.schedules ?? [];
  const register: Feature["start"] = async ({ client }) => {
    if (schedules.length) await registerPeriodic(client, schedules, { owner: options.owner });
  };
  return Object.freeze(
    {
      name: "periodic",
      start: register,
      poll: {
        async prepare({ client }, now) {
          if (schedules.length) await registerPeriodic(client, schedules, { owner: options.owner, now });
        },
        due: (keys) => keys.periodicDue,
        async run({ client, logger }, now) {
          return (await enqueueDuePeriodic({ client, now, schedules, logger })).enqueued;
        },
      },
      dashboard: PERIODIC_DASHBOARD,
    } satisfies Feature,
  );
}
