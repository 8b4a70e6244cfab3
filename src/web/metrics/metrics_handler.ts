/**
 * `metricsHandler()`: a Prometheus endpoint over the same Redis the
 * dashboard reads, with the dashboard's auth rules. One scrape reads the
 * core's series (three commands) and each feature's (`dashboard.metrics`,
 * a fixed number each), all at once, so its cost does not grow with the
 * number of queues, processes or job classes.
 *
 * @module
 */
import { Hono } from "hono";
import { Client } from "../../client.ts";
import { checkFeatures } from "../../client_feature.ts";
import { ConfigError } from "../../errors.ts";
import { type Logger, silentLogger } from "../../logger.ts";
import { describeValue } from "../../describe_value.ts";
import { logErrors } from "../../server/identity.ts";
import type { Transport } from "../../transport/transport.ts";
import type { Keyspace } from "../../keys.ts";
import { authGate, type DashboardAuth } from "../dashboard/auth.ts";
import type { DashboardFeature } from "../dashboard/dashboard_feature.ts";
import type { DashboardEnv } from "../dashboard/view.ts";
import { coreSeries } from "./core_series.ts";
import { EXPOSITION_CONTENT_TYPE, type MetricSample, renderExposition } from "./exposition.ts";

/** Options for {@link metricsHandler}. */
export interface MetricsHandlerOptions<E extends object = Record<string, unknown>> {
  /** The transport, or a function of the platform's bindings returning it (cache it inside). */
  transport: Transport | ((env: E) => Transport);
  /**
   * Required, as the dashboard's: who may scrape. `true` lets the request in,
   * anything else answers 401; `() => true` for an open endpoint (behind a
   * private network). Prometheus sends basic auth or a bearer token
   * (`basic_auth`, `authorization` in its scrape config): check them with
   * `verifyBasic` or `verifyBearer`.
   */
  auth: DashboardAuth<E>;
  /** The key namespace, as the workers' `prefix`. */
  prefix?: string;
  /** The key layout, as the workers' `keyspace` (by default the transport's). */
  keyspace?: Keyspace;
  /** A sharded namespace's shard count, as the workers' `shards`: every figure sums the shards. */
  shards?: number;
  /** Features whose series to add (their `dashboard.metrics` part). */
  features?: readonly DashboardFeature[];
  /** `WWW-Authenticate` sent with a 401; default `Basic realm="edgekiq"`; `null` for none. */
  challenge?: string | null;
  /** Where errors are logged when there is no `onError`; default silent. */
  logger?: Logger;
  /** Receives every error behind a 503 (Redis unreachable) and every feature source that failed. */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/**
 * Builds the endpoint as a hono app answering `GET /` with the
 * text format Prometheus scrapes: mount it with
 * `app.route("/metrics", metricsHandler({...}))`. A Redis that cannot be read
 * answers 503 (the scrape fails, `up` is 0); a feature's source that fails
 * is left out and `edgekiq_scrape_source_up{source}` is 0.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { metricsHandler, verifyBearer } from "edgekiq/web";
 *
 * const app = new Hono();
 * app.route("/metrics", metricsHandler({ transport, auth: (c) => verifyBearer(c.req.raw, env.METRICS_TOKEN) }));
 * // prometheus.yml: scrape_configs: [{ job_name: edgekiq, metrics_path: /metrics, authorization: { credentials: ... } }]
 * ```
 */
export function metricsHandler<E extends object = Record<string, unknown>>(
  options: MetricsHandlerOptions<E>,
): Hono<DashboardEnv<E>> {
  const { transport, auth } = options ?? ({} as MetricsHandlerOptions<E>);
  if (typeof auth !== "function") {
    throw new ConfigError(
      `Cannot build the metrics endpoint as 'auth' must be a function (use () => true for an open endpoint): current value is ${
        describeValue(auth)
      }`,
    );
  }
  if (!transport) throw new ConfigError("Cannot build the metrics endpoint as 'transport' is required");
  const report = options.onError ?? logErrors(options.logger ?? silentLogger);
  const features = checkFeatures(options.features, "build the metrics endpoint");
  const sources = features.flatMap((
    f,
  ) => (f.dashboard?.metrics ? [{ name: f.name, source: f.dashboard.metrics }] : []));
  const clients = new WeakMap<Transport, Client<object>>();
  const clientFor = (t: Transport) => {
    let client = clients.get(t);
    if (!client) {
      clients.set(
        t,
        client = new Client({
          transport: t,
          prefix: options.prefix,
          keyspace: options.keyspace,
          shards: options.shards,
        }),
      );
    }
    return client;
  };
  const plain = (status: 401 | 500 | 503, text: string) =>
    new Response(`${text}\n`, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

  const app = new Hono<DashboardEnv<E>>();
  app.use(
    "*",
    authGate<E>(auth, {
      challenge: options.challenge === undefined ? 'Basic realm="edgekiq", charset="UTF-8"' : options.challenge,
      report,
      deny: (_c, status, message) => plain(status, message),
    }),
  );
  app.get("/", async (c) => {
    const client = clientFor(typeof transport === "function" ? transport(c.env as E) : transport);
    const scrape = { client, now: new Date() };
    const [core, ...extra] = await Promise.allSettled([
      coreSeries(client),
      ...sources.map(({ source }) => source.collect(scrape)),
    ]);
    if (core.status === "rejected") {
      report(core.reason, { context: "metrics scrape" });
      return plain(503, "Cannot read Redis: see the server's log.");
    }
    const seen = new Set<string>();
    let text = renderExposition(core.value, seen);
    const up: MetricSample[] = [];
    extra.forEach((result, i) => {
      const source = sources[i].name;
      let part: string | undefined;
      try {
        if (result.status === "rejected") throw result.reason;
        // Rendered alone, so a source with a bad name or one the core uses is left out alone.
        const mine = new Set(seen);
        part = renderExposition(result.value, mine);
        for (const name of mine) seen.add(name);
      } catch (error) {
        report(error, { context: `metrics scrape: ${source}` });
      }
      text += part ?? "";
      up.push({ labels: { source }, value: part === undefined ? 0 : 1 });
    });
    if (up.length) {
      text += renderExposition([{
        name: "edgekiq_scrape_source_up",
        help: "Whether each feature's series could be read in this scrape.",
        type: "gauge",
        samples: up,
      }], seen);
    }
    return new Response(text, {
      headers: {
        "content-type": EXPOSITION_CONTENT_TYPE,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  });
  return app;
}
