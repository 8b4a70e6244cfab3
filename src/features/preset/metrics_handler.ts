/**
 * `metricsHandler()` as `edgekiq/web` exports it: the Prometheus endpoint
 * with the execution metrics' per-class series added, as `dashboard()` adds
 * their pages.
 *
 * @module
 */
import type { Hono } from "hono";
import type { MetricsFormat } from "../metrics/metrics.ts";
import { jobMetrics } from "../metrics/job_metrics.ts";
import type { DashboardEnv } from "../../web/dashboard/view.ts";
import { metricsHandler as buildHandler, type MetricsHandlerOptions } from "../../web/metrics/metrics_handler.ts";

/** Options for {@link metricsHandler}: the endpoint's, and the per-class series' keys and window. */
export interface MetricsHandlerPresetOptions<E extends object = Record<string, unknown>>
  extends MetricsHandlerOptions<E> {
  /** The execution-metrics keys to read (`"sidekiq8"`, the default, or `"sidekiq7"`). Ignored when `features` has its own `jobMetrics()`. */
  metricsFormat?: MetricsFormat;
  /** Minutes the per-class series cover (default 5, at most 60). Ignored when `features` has its own `jobMetrics()`. */
  windowMinutes?: number;
}

/**
 * A Prometheus endpoint (text format 0.0.4) with the dashboard's auth rules:
 * Sidekiq's counters, each queue's size and latency, the retry, scheduled
 * and dead sets, processes and busy slots, per-class runs, failures and
 * run-time histograms over the last minutes, and what features add. Mount
 * it with `app.route("/metrics", metricsHandler({...}))`; a scrape costs 5
 * Redis commands whatever the size of the fleet.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { metricsHandler, verifyBasic } from "edgekiq/web";
 *
 * const app = new Hono();
 * app.route("/metrics", metricsHandler({ transport, auth: (c) => verifyBasic(c.req.raw, "prometheus", env.METRICS_PASSWORD) }));
 * ```
 */
export function metricsHandler<E extends object = Record<string, unknown>>(
  options: MetricsHandlerPresetOptions<E>,
): Hono<DashboardEnv<E>> {
  const { metricsFormat, windowMinutes, ...rest } = options ?? ({} as MetricsHandlerPresetOptions<E>);
  const given = rest.features ?? [];
  const features = given.some((f) => f?.name === "metrics")
    ? given
    : [...given, jobMetrics({ format: metricsFormat ?? "sidekiq8", windowMinutes })];
  return buildHandler({ ...rest, features });
}
