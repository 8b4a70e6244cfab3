/**
 * Serverless entry points: hono routes a cron service (Cloudflare Cron
 * Triggers, Vercel Cron, Deno Deploy cron, QStash schedules, GitHub Actions)
 * can hit to promote scheduled jobs and drain the queues within a time
 * budget, answering JSON counts.
 *
 * - `POST /poll`: promote due scheduled and retry jobs, enqueue due
 *   periodic jobs, prune dead processes, recover orphans ({@link pollOnce});
 * - `POST /drain`: run queued jobs until empty or out of budget ({@link drain});
 * - `POST /tick`: both, poll first: the handler to point a cron at (also
 *   `GET /tick`, since Vercel Cron sends GET).
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { Client } from "../client.ts";
import type { ClientMiddleware } from "../client_middleware.ts";
import { ConfigError } from "../errors.ts";
import { silentLogger } from "../logger.ts";
import { describe } from "../payload.ts";
import { drain, type DrainOptions, type DrainResult } from "../server/drain.ts";
import { logErrors } from "../server/identity.ts";
import { pollOnce, type PollResult } from "../server/poller.ts";
import type { PeriodicSchedule } from "../periodic/mod.ts";
import type { Transport } from "../transport/transport.ts";
import { equalSecrets } from "./secrets.ts";

/**
 * Who may call the routes: a shared secret sent as `Authorization: Bearer
 * <secret>` (compared in constant time), or a verifier given the request
 * and the platform's env bindings (`c.env`).
 */
export type CronAuth<E = unknown> = string | ((req: Request, env: E) => boolean | Promise<boolean>);

/** Options for {@link pollAndDrain}. */
export interface TickOptions extends Omit<DrainOptions, "budgetMs"> {
  /** Budget for the poll and the drain together, ms; default 10,000. */
  budgetMs?: number;
  /** Client middleware applied to promoted jobs, as a worker's poller does. */
  clientMiddleware?: ClientMiddleware[];
  /** Recoveries of one orphaned job before it is buried; default 3. */
  maxRecoveries?: number;
  /**
   * Cron schedules this app declares, as the worker's `periodic`: each poll
   * registers them (no command while the registration is fresh) and
   * enqueues the due ticks of every app's schedules.
   */
  periodic?: readonly PeriodicSchedule[];
  /** Who owns `periodic` (an app name), as the worker's `periodicOwner`. */
  periodicOwner?: string;
}

/** Options for {@link cronRoutes}. */
export interface CronRoutesOptions<E extends object = Record<string, unknown>> extends Omit<TickOptions, "transport"> {
  /**
   * The transport, or a function of the env bindings returning it (on
   * Cloudflare the Upstash URL and token arrive as bindings per request).
   * Cache the transport inside the function: it is called per request.
   */
  transport: Transport | ((env: E) => Transport);
  /** Required: a bearer secret or a verifier. Failing requests get a 401. */
  auth: CronAuth<E>;
}

/** What `/tick` answers: the poll's counts (`periodic`: periodic jobs enqueued) and the drain's. */
export interface TickResult {
  poll: PollResult;
  drain: DrainResult;
}

const DEFAULT_BUDGET_MS = 10_000;

/**
 * One cron tick without HTTP: poll, then drain for what is left of the
 * budget. Use it from a platform's scheduled handler.
 *
 * @example
 * ```ts
 * export default {
 *   fetch: app.fetch,
 *   async scheduled(_event, env, ctx) {
 *     ctx.waitUntil(pollAndDrain({ transport: transportFor(env), jobs: [SendEmail], budgetMs: 25_000 }));
 *   },
 * };
 * ```
 */
export async function pollAndDrain(options: TickOptions): Promise<TickResult> {
  const budgetMs = options.budgetMs ?? DEFAULT_BUDGET_MS;
  if (typeof budgetMs !== "number" || !(budgetMs > 0)) {
    throw new ConfigError(`Cannot run a cron tick as 'budgetMs' must be > 0: current value is ${describe(budgetMs)}`);
  }
  return await tick(sharedClients(options.transport, options), { ...options, budgetMs });
}

/** Poll, then drain for what is left of the budget. */
async function tick(client: Client, options: TickOptions & { budgetMs: number }): Promise<TickResult> {
  const started = Date.now();
  const poll = await pollWith(client, options);
  const left = Math.max(1, options.budgetMs - (Date.now() - started));
  return { poll, drain: await drain({ ...options, budgetMs: left }) };
}

type ClientSettings = Pick<TickOptions, "prefix" | "timeFormat" | "clientMiddleware">;

function pollWith(client: Client, options: Omit<TickOptions, "transport" | "budgetMs">): Promise<PollResult> {
  return pollOnce({
    client,
    logger: options.logger,
    maxRecoveries: options.maxRecoveries,
    onError: options.onError,
    periodic: options.periodic,
    periodicOwner: options.periodicOwner,
  });
}

/**
 * One Client per transport (and settings), kept for the life of the
 * isolate: the periodic registration is remembered per Client, so a warm
 * isolate's next tick sends no registration while it is fresh.
 */
function clientCache(): (transport: Transport, settings: ClientSettings) => Client {
  const clients = new WeakMap<Transport, { settings: ClientSettings; client: Client }>();
  return (transport, settings) => {
    const held = clients.get(transport);
    if (
      held && held.settings.prefix === settings.prefix && held.settings.timeFormat === settings.timeFormat &&
      held.settings.clientMiddleware === settings.clientMiddleware
    ) {
      return held.client;
    }
    const { prefix, timeFormat, clientMiddleware: middleware } = settings;
    const client = new Client({ transport, prefix, timeFormat, middleware });
    clients.set(transport, { settings: { prefix, timeFormat, clientMiddleware: middleware }, client });
    return client;
  };
}

/** The clients of {@link pollAndDrain}, shared by its calls in this isolate. */
const sharedClients = clientCache();

/**
 * Checks `Authorization: Bearer <secret>` in constant time (both sides are
 * hashed first, so neither the content nor the length leaks through timing).
 *
 * @example
 * ```ts
 * if (!(await verifyBearer(request, env.CRON_SECRET))) return new Response("no", { status: 401 });
 * ```
 */
export async function verifyBearer(req: Request, secret: string | undefined): Promise<boolean> {
  if (typeof secret !== "string" || secret === "") return false;
  const header = req.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return await equalSecrets(match ? match[1].trim() : "", secret);
}

/**
 * Builds the cron routes as a hono sub-app: mount it with
 * `app.route("/cron", cronRoutes({...}))`. Every route is `POST`, requires
 * `auth`, and answers JSON: `{ poll }`, `{ drain }` or `{ poll, drain }`;
 * 401 `{ error: "unauthorized" }` without valid auth; 500
 * `{ error: "internal error" }` if the verifier throws (the detail goes to
 * `onError`, else the logger, never to the unauthenticated caller); 500
 * `{ error }` if Redis fails.
 *
 * @example
 * ```ts
 * import { type Context, Hono } from "hono";
 * import { cronRoutes } from "edgekiq/web";
 * const app = new Hono();
 * app.route("/cron", cronRoutes({ transport, jobs: [SendEmail], queues: ["default"], budgetMs: 25_000, auth: secret }));
 * // curl -X POST -H "Authorization: Bearer $CRON_SECRET" https://app.example/cron/tick
 * // {"poll":{"promoted":1,...},"drain":{"processed":3,"failed":0,"remaining":0,...}}
 * ```
 */
export function cronRoutes<E extends object = Record<string, unknown>>(
  options: CronRoutesOptions<E>,
): Hono<{ Bindings: E }> {
  const { auth, transport, ...rest } = options ?? ({} as CronRoutesOptions<E>);
  if (typeof auth === "string" ? auth === "" : typeof auth !== "function") {
    throw new ConfigError(
      `Cannot build cron routes as 'auth' must be a non-empty secret or a verifier function: current value is ${
        describe(auth)
      }`,
    );
  }
  if (!transport) throw new ConfigError("Cannot build cron routes as 'transport' is required");
  if (!rest.jobs) throw new ConfigError("Cannot build cron routes as 'jobs' is required");
  const budgetMs = rest.budgetMs ?? DEFAULT_BUDGET_MS;
  if (typeof budgetMs !== "number" || !(budgetMs > 0)) {
    throw new ConfigError(`Cannot build cron routes as 'budgetMs' must be > 0: current value is ${describe(budgetMs)}`);
  }
  const resolve = (env: E): Transport => typeof transport === "function" ? transport(env) : transport;
  // Built once per transport for this instance, not per request (see clientCache).
  const clients = clientCache();

  const app = new Hono<{ Bindings: E }>();
  const report = rest.onError ?? logErrors(rest.logger ?? silentLogger);
  app.use("*", async (c, next) => {
    let ok: boolean;
    try {
      ok = typeof auth === "string" ? await verifyBearer(c.req.raw, auth) : await auth(c.req.raw, c.env);
    } catch (error) {
      // The caller is not authenticated yet: what the verifier threw (a key
      // lookup's URL, a token fragment) is logged, never sent back.
      report(error, { context: `cron auth ${c.req.path}` });
      return c.json({ error: "internal error" }, 500);
    }
    if (ok !== true) {
      return c.json({ error: "unauthorized" }, 401, { "WWW-Authenticate": 'Bearer realm="edgekiq"' });
    }
    await next();
  });
  app.onError((error, c) => {
    report(error, { context: `cron ${c.req.path}` });
    return c.json({ error: error instanceof Error ? error.message : String(error) }, 500);
  });
  app.post("/poll", async (c) => {
    const t = resolve(c.env);
    return c.json({ poll: await pollWith(clients(t, rest), rest) });
  });
  app.post("/drain", async (c) => c.json({ drain: await drain({ ...rest, transport: resolve(c.env), budgetMs }) }));
  const onTick = async (c: Context<{ Bindings: E }>) => {
    const t = resolve(c.env);
    return c.json(await tick(clients(t, rest), { ...rest, transport: t, budgetMs }));
  };
  app.post("/tick", onTick);
  app.get("/tick", onTick); // Vercel Cron sends GET

  return app;
}
