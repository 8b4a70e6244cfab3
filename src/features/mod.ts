/**
 * edgekiq's optional features, each turned on where it is wanted by passing
 * it in `features` to a client, a worker or the dashboard (metrics and
 * periodic jobs are on by default in `createWorker`). Each lives in its own
 * folder and plugs in through one contract, `Feature` (ARCHITECTURE.md).
 *
 * @example
 * ```ts
 * import { createClient, createWorker } from "edgekiq";
 * import { uniqueJobs } from "edgekiq/features";
 *
 * const unique = uniqueJobs();
 * const client = createClient({ transport, features: [unique] });
 * createWorker({ transport, jobs, features: [unique] });
 * ```
 *
 * @module
 */
export { uniqueJobs } from "./unique/unique_jobs.ts";
export type { UniqueJobs } from "./unique/unique_jobs.ts";
export type { UniqueConflict, UniqueOptions, UniqueUntil } from "./unique/options.ts";
export { jobMetrics } from "./metrics/job_metrics.ts";
export type { JobMetricsFeature, JobMetricsOptions } from "./metrics/job_metrics.ts";
export { expiringJobs } from "./expiry/expiring_jobs.ts";
export type { ExpiringJobs, ExpiringJobsOptions } from "./expiry/expiring_jobs.ts";
export type { ExpiryJobOptions, ExpiryPushOptions } from "./expiry/options.ts";
export { jobCancellation } from "./cancel/job_cancellation.ts";
export type { JobCancellation } from "./cancel/job_cancellation.ts";
export { encryptedArgs } from "./encryption/encrypted_args.ts";
export type { EncryptedArgs, EncryptedArgsOptions } from "./encryption/encrypted_args.ts";
export type { EncryptionKey } from "./encryption/keyring.ts";
export type { EncryptionJobOptions, EncryptionPushOptions } from "./encryption/options.ts";
export { leaderElection } from "./leader/leader_election.ts";
export type { LeaderCallback, LeaderElection, LeaderElectionOptions, LeaderTerm } from "./leader/leader_election.ts";
export { periodicJobs } from "./periodic/periodic_jobs_feature.ts";
export type { PeriodicJobsOptions } from "./periodic/periodic_jobs_feature.ts";
export type { MissedPolicy, PeriodicSchedule } from "./periodic/schedule.ts";
export { jobProfiles } from "./profiles/job_profiles.ts";
export type { JobProfiles, JobProfilesOptions, ProfileOption } from "./profiles/job_profiles.ts";
export { Limiter } from "./limits/limiter.ts";
export type {
  ConcurrentOptions,
  LeakyOptions,
  LimiterKind,
  LimiterOptions,
  LimiterSite,
  Taken,
  TakeOptions,
} from "./limits/limiter.ts";
export { OverLimit } from "./limits/over_limit.ts";
export type { Duration } from "./limits/duration.ts";
export type { LimiterReply } from "./limits/limiter_lua.ts";
export { flowLimits } from "./limits/flow_limits.ts";
export type { FlowLimits, FlowLimitsCounts } from "./limits/flow_limits.ts";
export type {
  ConcurrencyLimit,
  DeclaredLimit,
  LimitKey,
  LimitsJobOptions,
  PointsLimit,
  RateLimit,
} from "./limits/options.ts";
export { FlowGroups } from "./limits/flow_groups.ts";
export type { GroupInfo } from "./limits/flow_groups.ts";
export type { FlowLimitsOptions, GroupLimits } from "./limits/flow_limits.ts";
export type { LimitsPushOptions } from "./limits/options.ts";
export { FlowLimiters } from "./limits/flow_limiters.ts";
export type { LimiterInfo } from "./limits/flow_limiters.ts";
// Admin APIs of the features above (Sidekiq's API for the core is edgekiq/api).
export { markDeploy } from "./metrics/deploy_marks.ts";
export { Metrics, METRICS_PERIODS } from "./metrics/metrics.ts";
export type {
  DeployMark,
  JobMetrics,
  JobMetricsResult,
  MetricsCounts,
  MetricsFormat,
  MetricsOptions,
  MetricsPeriod,
  MetricsQueryOptions,
  MetricsResult,
  TopJobsResult,
} from "./metrics/metrics.ts";
export { type PeriodicEntry, PeriodicSet } from "./periodic/periodic_set.ts";
export { iterationStates } from "./iterable/iteration_states.ts";
export type { IterationState } from "./iterable/iteration_states.ts";
export { UniqueLocks } from "./unique/unique_locks.ts";
export type { CleanOrphansOptions, UniqueLock } from "./unique/unique_locks.ts";
export { listProfiles, profileData } from "./profiles/profile_store.ts";
export type { ProfileEntry } from "./profiles/profile_store.ts";
