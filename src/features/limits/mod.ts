/**
 * Flow control: limiters shared through Redis (concurrent, bucket, window,
 * leaky, points, unlimited) used inside `perform` with `within()`, and
 * the `flowLimits()` feature for limits declared on a job. See docs/limits.md.
 *
 * @example
 * ```ts
 * import { Limiter } from "edgekiq/features";
 *
 * const Sync = defineJob({ name: "Sync", async perform(ctx, tenant: string) {
 *   await Limiter.concurrent(`stripe-${tenant}`, 5).within(ctx, () => stripe.sync(tenant));
 * } });
 * ```
 *
 * @module
 */
export { Limiter } from "./limiter.ts";
export type {
  ConcurrentOptions,
  LeakyOptions,
  LimiterKind,
  LimiterOptions,
  LimiterSite,
  Taken,
  TakeOptions,
} from "./limiter.ts";
export { OverLimit } from "./over_limit.ts";
export type { Duration } from "./duration.ts";
export type { LimiterReply } from "./limiter_lua.ts";
export { flowLimits } from "./flow_limits.ts";
export type { FlowLimits, FlowLimitsCounts } from "./flow_limits.ts";
export type { ConcurrencyLimit, DeclaredLimit, LimitKey, LimitsJobOptions, PointsLimit, RateLimit } from "./options.ts";
export { FlowGroups } from "./flow_groups.ts";
export type { GroupInfo } from "./flow_groups.ts";
export type { FlowLimitsOptions, GroupLimits } from "./flow_limits.ts";
export type { LimitsPushOptions } from "./options.ts";
export { FlowLimiters } from "./flow_limiters.ts";
export type { LimiterInfo } from "./flow_limiters.ts";
