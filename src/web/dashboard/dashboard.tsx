/**
 * `dashboard()`: Sidekiq's Web UI for edgekiq as one mountable hono app.
 * The same app runs on Node, Bun, Deno and Cloudflare Workers (no
 * filesystem, no Node built-ins), reads a Ruby Sidekiq fleet sharing the
 * Redis, and is safe by default: an auth hook before every route,
 * same-origin checks on every action, a nonce CSP and escaped output.
 *
 * @module
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { Client } from "../../client.ts";
import { checkFeatures } from "../../client_feature.ts";
import { ConfigError } from "../../errors.ts";
import { type Logger, silentLogger } from "../../logger.ts";
import { type TimeFormat } from "../../payload.ts";
import { describeValue } from "../../describe_value.ts";
import { logErrors } from "../../server/identity.ts";
import type { DeathHandler } from "../../dead_set_rules.ts";
import type { Transport } from "../../transport/transport.ts";
import type { Keyspace } from "../../keys.ts";
import { actionRoutes } from "./action_routes.tsx";
import { authGate, type DashboardAuth } from "./auth.ts";
import { checkSameOrigin } from "./csrf.ts";
import { securityHeaders } from "./headers.ts";
import { notFound, pageRoutes } from "./page_routes.tsx";
import { MessagePage } from "./pages/message.tsx";
import { ParamError } from "./params.ts";
import { type Ctx, page, type RouteDeps, viewOf } from "./render.ts";
import type { DashboardEnv } from "./view.ts";
import type { DashboardApp, DashboardFeature } from "./dashboard_feature.ts";

/** Options for {@link dashboard}. */
export interface DashboardOptions<E extends object = Record<string, unknown>> {
  /**
   * The transport, or a function of the platform's bindings returning it
   * (on Cloudflare the Upstash URL and token arrive per request; cache the
   * transport inside the function).
   */
  transport: Transport | ((env: E) => Transport);
  /**
   * Required: who may see the dashboard. Runs before every route; `true`
   * lets the request in, anything else answers 401. For an open dashboard
   * say so: `auth: () => true`.
   */
  auth: DashboardAuth<E>;
  /**
   * The path the browser sees the dashboard at, for links and redirects,
   * when a proxy rewrites paths (`"/admin/jobs"`). By default it is found
   * from where the app is mounted with `app.route()`.
   */
  basePath?: string;
  /** The key namespace, as the workers' `prefix`. */
  prefix?: string;
  /** The key layout, as the workers' `keyspace` (by default the transport's: `"cluster"` on a cluster). */
  keyspace?: Keyspace;
  /**
   * A sharded namespace's shard count, as the workers' `shards`: the
   * counters, queues, processes and job sets then read every shard.
   */
  shards?: number;
  /**
   * Features: their pages and nav entries, and their part in the moves the
   * dashboard makes (a unique job's lock released when it is deleted).
   */
  features?: readonly DashboardFeature[];
  /** Time format for jobs the dashboard rewrites (retry now, add to queue); default `"seconds"`. */
  timeFormat?: TimeFormat;
  /** The name in the header; default `"edgekiq"`. */
  title?: string;
  /** Origins accepted for actions besides the request's own host (for proxies that rewrite Host). */
  allowedOrigins?: readonly string[];
  /** `WWW-Authenticate` sent with a 401; default `Basic realm="edgekiq"` (browsers then prompt); `null` for none. */
  challenge?: string | null;
  /** Run for each job killed from the dashboard (Sidekiq's `death_handlers`). */
  deathHandlers?: readonly DeathHandler[];
  /** Where errors are logged when there is no `onError`; default silent. */
  logger?: Logger;
  /** Receives every error behind a 500 page (the caller sees a generic message). */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/** The request's path as sent, still percent-encoded (hono's `c.req.path` is decoded). */
const rawPath = (url: string): string => new URL(url).pathname;

/** The largest form accepted (a queue job's raw JSON is posted back to delete it). */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** A path segment as RFC 3986 allows it (`pchar`), still percent-encoded. */
const CLEAN_SEGMENT = /^(?:[\w\-.~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+$/;
/** `.` and `..`, also percent-encoded: browsers resolve `/%2e%2e/` as `/../`. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * The link base under a mount: as many segments of the raw request path
 * (still percent-encoded, as the browser sent them) as the mount pattern of
 * the dashboard's first middleware has (`/t/:tenant/jobs/*`). Never the
 * decoded path: `/%5Cevil.com/jobs` decodes to `/\evil.com/jobs`, which a
 * browser follows to another site. `null` when a segment is not clean.
 */
function mountBase(routePath: string, rawPath: string): string | null {
  const depth = routePath.replace(/\/?\*$/, "").split("/").filter(Boolean).length;
  const segments = rawPath.split("/").slice(1, depth + 1);
  if (segments.some((s) => !CLEAN_SEGMENT.test(s) || DOT_SEGMENT.test(s))) return null;
  return segments.length ? `/${segments.join("/")}` : "";
}

/**
 * Builds the dashboard as a hono app: mount it with
 * `app.route("/jobs", dashboard({...}))`; links follow the mount, nested
 * ones included (`/admin/jobs`).
 *
 * Pages: Dashboard (`/`), Busy, Queues, a queue, Retries, Scheduled, Dead,
 * a job, and each feature's (Metrics and Periodic by default, from
 * `edgekiq/web`); `/stats` answers the counters as JSON (the live chart
 * polls it). Actions are POST forms that work without JavaScript.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { dashboard, verifyBasic } from "edgekiq/web";
 *
 * const app = new Hono();
 * app.route("/jobs", dashboard({ transport, auth: (c) => verifyBasic(c.req.raw, "admin", process.env.JOBS_PASSWORD) }));
 * // or behind a proxy that authenticates: auth: (c) => c.req.header("x-auth-user") === "ops"
 * ```
 */
export function dashboard<E extends object = Record<string, unknown>>(
  options: DashboardOptions<E>,
): Hono<DashboardEnv<E>> {
  const { transport, auth } = options ?? ({} as DashboardOptions<E>);
  if (typeof auth !== "function") {
    throw new ConfigError(
      `Cannot build the dashboard as 'auth' must be a function (use () => true for an open dashboard): current value is ${
        describeValue(auth)
      }`,
    );
  }
  if (!transport) throw new ConfigError("Cannot build the dashboard as 'transport' is required");
  const basePath = options.basePath;
  if (basePath !== undefined && !/^(\/[^/\s?#"'<>\\]+)*$/.test(basePath)) {
    throw new ConfigError(
      `Cannot build the dashboard as 'basePath' must be a path such as "/admin/jobs" (no trailing slash): current value is ${
        describeValue(basePath)
      }`,
    );
  }
  const report = options.onError ?? logErrors(options.logger ?? silentLogger);
  const features = checkFeatures(options.features, "build the dashboard");
  const deps: RouteDeps = {
    title: options.title ?? "edgekiq",
    setOptions: { deathHandlers: options.deathHandlers },
    nav: features.flatMap((f) => f.dashboard?.nav ?? []),
    notices: Object.assign({}, ...features.map((f) => f.dashboard?.notices ?? {})),
    workActions: features.flatMap((f) => f.dashboard?.workActions ?? []),
    jobSections: features.flatMap((f) => (f.dashboard?.jobSection ? [once(f.dashboard.jobSection)] : [])),
  };
  const clients = new WeakMap<Transport, Client<object>>();
  const clientFor = (t: Transport) => {
    let client = clients.get(t);
    if (!client) {
      client = new Client({
        transport: t,
        prefix: options.prefix,
        keyspace: options.keyspace,
        shards: options.shards,
        timeFormat: options.timeFormat,
        features,
      });
      clients.set(t, client);
    }
    return client;
  };
  const deny = (c: Ctx, status: 401 | 403 | 500, heading: string, message: string) =>
    page(c, <MessagePage view={viewOf(c, deps)} heading={heading} message={message} />, status);

  // deno-lint-ignore no-explicit-any
  const app = new Hono<DashboardEnv<any>>();
  app.use("*", securityHeaders());
  app.use("*", async (c, next) => {
    const base = basePath ?? mountBase(c.req.routePath, rawPath(c.req.url));
    if (base === null) return c.text("Bad request: the dashboard's mount path is not a clean path.", 400);
    c.set("base", base);
    await next();
  });
  app.use(
    "*",
    authGate<E>(auth, {
      challenge: options.challenge === undefined ? 'Basic realm="edgekiq", charset="UTF-8"' : options.challenge,
      report,
      deny: (c, status, message) => deny(c, status, status === 401 ? "Sign in" : "Something went wrong", message),
    }),
  );
  app.use("*", async (c, next) => {
    const request = { method: c.req.method, url: c.req.url, header: (name: string) => c.req.header(name) };
    if (!checkSameOrigin(request, options.allowedOrigins)) {
      return deny(c, 403, "Refused", "This action came from another site (cross-site request refused).");
    }
    c.set("client", clientFor(typeof transport === "function" ? transport(c.env as E) : transport));
    await next();
  });
  app.use("*", bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.text("The form is too large.", 413) }));
  pageRoutes(app, deps);
  for (const feature of features) feature.dashboard?.routes?.(app as unknown as DashboardApp, deps);
  actionRoutes(app, deps);
  app.all("*", (c) => {
    const base = c.get("base");
    if (c.req.method === "GET" && rawPath(c.req.url) === `${base}/`) {
      return c.redirect((base || "/") + new URL(c.req.url).search, 308);
    }
    return notFound(c, deps);
  });
  app.onError(async (error, c) => {
    if (error instanceof ParamError) {
      return await page(c, <MessagePage view={viewOf(c, deps)} heading="Bad request" message={error.message} />, 400);
    }
    report(error, { context: `dashboard ${c.req.method} ${c.req.path}` });
    return await deny(
      c,
      500,
      "Something went wrong",
      "The dashboard could not complete this request. The error has been logged.",
    );
  });
  return app as unknown as Hono<DashboardEnv<E>>;
}

/** Loads a lazily loaded module once, however many requests ask at once. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}
