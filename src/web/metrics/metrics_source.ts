/**
 * The seam through which a feature adds its series to the Prometheus
 * endpoint (`metricsHandler()` in `edgekiq/web`): a feature's
 * `dashboard.metrics` part. The execution metrics feature adds per-class
 * run counts and run-time histograms this way; a rate limiter or batches
 * add theirs the same way, without the endpoint naming them.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import type { MetricFamily } from "./exposition.ts";

/** What a source gets for one scrape. */
export interface MetricsScrape {
  /** The client for the scrape's transport and key prefix. */
  readonly client: Client<object>;
  /** The scrape's time (windows end here). */
  readonly now: Date;
}

/**
 * A feature's series. Every scrape pays for `collect`, so it must read with
 * a fixed number of Redis commands whatever the data (one script over
 * every key it needs, or one pipeline), never one command per queue, class
 * or entry; the endpoint's tests count them. Names start with `edgekiq_`
 * and the feature's own word (`edgekiq_limiter_...`). A source that throws
 * is left out of that scrape, and `edgekiq_scrape_source_up{source}` says so.
 *
 * @example
 * ```ts
 * const limiterSeries: MetricsSource = {
 *   async collect({ client }) {
 *     const waiting = Number(await client.transport.call("ZCARD", "edgekiq:limiter:waiting"));
 *     return [{ name: "edgekiq_limiter_waiting", help: "Jobs waiting for a slot.", type: "gauge", samples: [{ value: waiting }] }];
 *   },
 * };
 * const feature: Feature = { name: "limiter", dashboard: { metrics: limiterSeries } };
 * ```
 */
export interface MetricsSource {
  /** Reads this feature's series for one scrape. */
  collect(scrape: MetricsScrape): Promise<readonly MetricFamily[]>;
}
