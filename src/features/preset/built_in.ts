/**
 * The built-in features the root entry point turns on by default, and the
 * option types of every built-in feature (what its `defineJob` and
 * `createClient` type-check).
 *
 * @module
 */
import type { Feature } from "../feature.ts";
import { jobMetrics, type JobMetricsOptions } from "../metrics/job_metrics.ts";
import { periodicJobs } from "../periodic/periodic_jobs_feature.ts";
import type { PeriodicSchedule } from "../periodic/schedule.ts";
import { UNIQUE_OPTION_RULES, type UniqueJobOptions, type UniquePushOptions } from "../unique/options.ts";
import { PROFILE_OPTION_RULES, type ProfileJobOptions } from "../profiles/job_profiles.ts";
import { EXPIRY_OPTION_RULES, type ExpiryJobOptions, type ExpiryPushOptions } from "../expiry/options.ts";
import {
  ENCRYPTION_OPTION_RULES,
  type EncryptionJobOptions,
  type EncryptionPushOptions,
} from "../encryption/options.ts";
import { EVENTS_OPTION_RULES, type EventsJobOptions, type EventsPushOptions } from "../events/options.ts";
import { BATCH_OPTION_RULES, type BatchPushOptions } from "../batches/options.ts";
import { LIMITS_OPTION_RULES, type LimitsJobOptions, type LimitsPushOptions } from "../limits/options.ts";
import type { OptionRules } from "../../option_rules.ts";
import type { JobOptions as CoreJobOptions, PushOptions as CorePushOptions } from "../../job.ts";

/** Job options the built-in features add to `defineJob`. */
export type BuiltInJobOptions =
  & UniqueJobOptions
  & ProfileJobOptions
  & ExpiryJobOptions
  & EncryptionJobOptions
  & EventsJobOptions
  & LimitsJobOptions;

/** Push options the built-in features add to `client.push`. */
export type BuiltInPushOptions =
  & UniquePushOptions
  & ProfileJobOptions
  & ExpiryPushOptions
  & EncryptionPushOptions
  & EventsPushOptions
  & BatchPushOptions
  & LimitsPushOptions;

/** Every option `defineJob` takes: Sidekiq's and the built-in features'. */
export interface AllJobOptions extends CoreJobOptions, UniqueJobOptions, ProfileJobOptions {}

/** Every option `client.push` takes: where and when, and the built-in features'. */
export interface AllPushOptions extends CorePushOptions, UniquePushOptions, ProfileJobOptions {}

/** The rules of the built-in features' options. */
export const BUILT_IN_OPTION_RULES: readonly OptionRules[] = [
  UNIQUE_OPTION_RULES,
  PROFILE_OPTION_RULES,
  EXPIRY_OPTION_RULES,
  ENCRYPTION_OPTION_RULES,
  EVENTS_OPTION_RULES,
  BATCH_OPTION_RULES,
  LIMITS_OPTION_RULES,
];

/** The options that turn the default features on, off, or configure them. */
export interface DefaultFeatureOptions {
  /**
   * Execution metrics per job class in Sidekiq 7/8's Redis format (what
   * Sidekiq's Web UI Metrics page and `Metrics` in `edgekiq/features` read),
   * counted in memory and written with the heartbeat: one command per beat
   * when jobs ran, none when idle. Default on, as in Sidekiq 7+; `false`
   * turns it off (as does passing your own `jobMetrics()` in `features`).
   */
  metrics?: boolean | JobMetricsOptions;
  /**
   * Cron schedules this app declares (`{ cron: "0 * * * *", job, args, tz }`
   * or `{ every: 60, job }`). Registered at start (a bad one fails `run()`),
   * enqueued exactly once per tick by whichever process polls first.
   */
  periodic?: readonly PeriodicSchedule[];
  /** The app owning `periodic`: a schedule removed from that app's code stops at its next deploy. */
  periodicOwner?: string;
}

/**
 * `features` with the default features added: metrics (unless `metrics:
 * false`) and periodic jobs (always: a process that declares no schedule
 * still enqueues other apps' due ticks). A feature of the same name given
 * in `features` replaces the default.
 *
 * @example
 * ```ts
 * withDefaultFeatures([uniqueJobs()], { metrics: false }); // [unique, periodic]
 * ```
 */
export function withDefaultFeatures<F extends Feature>(
  features: readonly F[] | undefined,
  options: DefaultFeatureOptions,
  which: { metrics?: boolean; periodic?: boolean } = { metrics: true, periodic: true },
): readonly (F | Feature)[] {
  const given = features ?? [];
  const named = new Set(given.map((f) => f?.name));
  const out: (F | Feature)[] = [...given];
  if (which.metrics && !named.has("metrics") && options.metrics !== false) {
    out.push(jobMetrics(typeof options.metrics === "object" ? options.metrics : {}));
  }
  if (which.periodic && !named.has("periodic")) {
    out.push(periodicJobs({ schedules: options.periodic, owner: options.periodicOwner }));
  }
  return out;
}
