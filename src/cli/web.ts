/**
 * `edgekiq web`: the dashboard (`edgekiq/web`'s `dashboard()`) served on
 * its own, on Node, Bun and Deno. The same rule as mounting it in an app:
 * nobody gets in without credentials (HTTP basic auth, the password from
 * EDGEKIQ_WEB_PASSWORD or `--password`), unless `--no-auth` says so, and an
 * open dashboard is served on a loopback address only, where only this
 * machine reaches it.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { TimeFormat } from "../payload.ts";
import type { Transport } from "../transport/transport.ts";
import { sanitize } from "../sanitize.ts";
import { type CliArgs, SetupError, UsageError } from "./args.ts";
import type { CliHost } from "./cli_host.ts";
import { explainAdapterError } from "./load_error.ts";

/** Who may see the dashboard: one basic-auth user, or anyone (on loopback). */
export type WebAuth = { kind: "basic"; user: string; password: string } | { kind: "open" };

/** Where `web` listens unless `--host` says otherwise: this machine only. */
export const DEFAULT_WEB_HOST = "127.0.0.1";

/** The port `web` listens on unless `--port` says otherwise. */
export const DEFAULT_WEB_PORT = 3000;

/**
 * Whether `hostname` is a loopback address, reachable from this machine
 * only: `localhost`, 127.0.0.0/8 and `::1`. `0.0.0.0` and `::` are every
 * interface, so not loopback.
 *
 * @example
 * ```ts
 * isLoopback("127.0.0.1"); // true
 * isLoopback("0.0.0.0");   // false
 * ```
 */
export function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h) ||
    /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

/**
 * Decides how the dashboard is guarded, or refuses to serve it, saying why.
 *
 * @example
 * ```ts
 * webAuth(parseArgs(["web", "--no-auth"]), () => undefined); // { kind: "open" }
 * webAuth(parseArgs(["web"]), (n) => n === "EDGEKIQ_WEB_PASSWORD" ? "pw" : undefined);
 * // { kind: "basic", user: "admin", password: "pw" }
 * ```
 */
export function webAuth(args: CliArgs, env: (name: string) => string | undefined): WebAuth {
  const host = args.host ?? DEFAULT_WEB_HOST;
  const password = args.password ?? (env("EDGEKIQ_WEB_PASSWORD") || undefined);
  if (args.noAuth) {
    if (password !== undefined) {
      throw new UsageError(
        `--no-auth and a password (${args.password ? "--password" : "EDGEKIQ_WEB_PASSWORD"}) given together: ` +
          "pick one",
      );
    }
    if (!isLoopback(host)) {
      throw new UsageError(
        `refusing to serve the dashboard without authentication on --host ${sanitize(host, 100)}: ` +
          "anyone who can reach that address could delete queues and kill jobs. --no-auth is allowed on a " +
          "loopback address only (127.0.0.1, ::1, localhost); elsewhere set EDGEKIQ_WEB_PASSWORD",
      );
    }
    return { kind: "open" };
  }
  if (password === undefined) {
    throw new UsageError(
      "refusing to serve the dashboard without credentials: set EDGEKIQ_WEB_PASSWORD (or --password) for " +
        "HTTP basic auth as --user (default admin), or pass --no-auth to serve it open on a loopback address " +
        `(--host ${DEFAULT_WEB_HOST}, the default)`,
    );
  }
  return { kind: "basic", user: args.user ?? env("EDGEKIQ_WEB_USER") ?? "admin", password };
}

/** What {@link serveDashboard} needs. */
export interface WebContext {
  host: CliHost;
  out(line: string): void;
  transport: Transport;
  args: CliArgs;
  /** The Redis URL, redacted, for the banner. */
  redis: string;
  prefix?: string;
  /** A sharded namespace's shard count. */
  shards?: number;
  timeFormat?: TimeFormat;
  logger: Logger;
}

/**
 * Serves the dashboard until INT or TERM, then stops listening and
 * resolves to the exit code. The dashboard and the Node adapter are loaded
 * only here, so a missing `hono` or `@hono/node-server` is explained (with
 * how to install it) instead of failing every other command.
 *
 * @example
 * ```ts
 * const code = await serveDashboard({ host, out, transport, args, redis: "redis://127.0.0.1:6379", logger });
 * ```
 */
export async function serveDashboard(context: WebContext): Promise<number> {
  const { host, out, transport, args } = context;
  const env = (name: string) => host.runtime.env(name);
  const auth = webAuth(args, env);
  if (!host.serve) throw new ConfigError("Cannot serve the dashboard as this host has no HTTP server");
  let web: typeof import("../web/mod.ts");
  try {
    web = await import("../web/mod.ts");
  } catch (error) {
    throw explainAdapterError(error, { what: "the dashboard", runtime: host.runtime.key }) ?? error;
  }
  const app = web.dashboard({
    transport,
    prefix: context.prefix,
    shards: context.shards,
    timeFormat: context.timeFormat,
    logger: context.logger,
    auth: auth.kind === "open" ? () => true : (c) => web.verifyBasic(c.req.raw, auth.user, auth.password),
  });
  const hostname = args.host ?? DEFAULT_WEB_HOST;
  let listening;
  try {
    listening = await host.serve((request) => app.fetch(request), { hostname, port: args.port ?? DEFAULT_WEB_PORT });
  } catch (error) {
    throw explainAdapterError(error, { what: "edgekiq web on Node", runtime: host.runtime.key }) ??
      new SetupError(
        `cannot listen on ${sanitize(hostname, 100)}:${args.port ?? DEFAULT_WEB_PORT}: ${
          sanitize((error as Error)?.message ?? String(error), 200)
        }`,
        { cause: error },
      );
  }
  const shownHost = hostname.includes(":") ? `[${hostname.replace(/^\[|\]$/g, "")}]` : hostname;
  out(
    `edgekiq web: the dashboard is at http://${sanitize(shownHost, 100)}:${listening.port}/ ` +
      `(Redis ${context.redis}; ${
        auth.kind === "open" ? "no authentication, loopback only" : `basic auth as ${sanitize(auth.user, 60)}`
      }). Ctrl-C stops it.`,
  );
  await new Promise<void>((resolve) => {
    const offs = (["SIGINT", "SIGTERM"] as const).map((name) => host.runtime.onSignal(name, () => done()));
    const done = () => {
      for (const off of offs) off();
      resolve();
    };
  });
  await listening.close();
  return 0;
}
