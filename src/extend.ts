/**
 * `edgekiq/extend`: for those who write a feature (a rate limiter, batches,
 * an audit log): the `Feature` contract and its parts, and the tools its
 * parts are made of. Applications need only `edgekiq`; transport authors
 * `edgekiq/transport`. ARCHITECTURE.md's "How to add a feature" walks
 * through a real feature folder.
 *
 * - **The contract**: {@link Feature}, and the slice each consumer names
 *   ({@link ClientFeature}, {@link WorkerFeature}, {@link DashboardFeature}).
 * - **Options**: {@link OptionRules} for typed, validated job and push
 *   options; {@link createJobDefiner} for a `defineJob` that knows them.
 * - **Write guards**: a {@link GuardFragment} makes a check part of the push
 *   itself, composed atomically with every other feature's guard.
 * - **Entry ops**: {@link EntryHooks} keep a feature's state right when the
 *   admin API deletes, enqueues or kills a job.
 * - **Outcomes, polls, lifecycle**: {@link JobOutcome}, {@link OutcomeWrite},
 *   {@link PollTask}, {@link FeatureContext}.
 * - **Series on the Prometheus endpoint**: a {@link MetricsSource} in the
 *   feature's `dashboard.metrics`, returning {@link MetricFamily} lists.
 * - **Redis**: {@link defineScript} (Lua with its KEYS/ARGV header and a
 *   JavaScript twin for the memory transport), {@link keys}, and the payload
 *   codec ({@link parsePayload}, {@link serializePayload}).
 *
 * @example
 * ```ts
 * import type { Feature } from "edgekiq/extend";
 * const audit: Feature = {
 *   name: "audit",
 *   observe: (outcome) => console.log(outcome.payload.class, outcome.kind, Math.round(outcome.ms)),
 * };
 * ```
 *
 * @module
 */
export type { Feature } from "./features/feature.ts";
export type { ClientFeature } from "./client_feature.ts";
export type {
  FeatureContext,
  JobOutcome,
  JobOutcomeKind,
  JobSite,
  OutcomeWrite,
  PollTask,
  ProgressContext,
  WorkerFeature,
} from "./server/worker_feature.ts";
export type {
  DashboardApp,
  DashboardExtension,
  DashboardFeature,
  DashboardNode,
  JobSection,
  JobSectionInput,
  NavItem,
  RouteDeps,
} from "./web/dashboard/dashboard_feature.ts";
export type { MetricsScrape, MetricsSource } from "./web/metrics/metrics_source.ts";
export type { MetricFamily } from "./web/metrics/exposition.ts";
export type { JobOptionRule, OptionCheck, OptionRules } from "./option_rules.ts";
export { createJobDefiner } from "./job.ts";
export type { DefineJob } from "./job.ts";
export { GUARD_STATUS } from "./write_guard.ts";
export type {
  GuardCheck,
  GuardedJob,
  GuardedStatus,
  GuardedWrite,
  GuardFragment,
  GuardTwin,
  WriteGuard,
} from "./write_guard.ts";
export type { EntryAction, EntryHome, EntryHooks, EntryOp } from "./entry_ops.ts";
export { defineScript } from "./transport/script.ts";
export type { Script, ScriptRedis, ScriptTwin } from "./transport/script.ts";
export { keys } from "./keys.ts";
export type { Keys } from "./keys.ts";
export { parsePayload, serializePayload } from "./payload.ts";
