/**
 * Serverless entry points: hono routes a cron service (Cloudflare Cron
 * Triggers, Vercel Cron, Deno Deploy cron, QStash schedules, GitHub Actions)
 * can hit to promote scheduled jobs and drain the queues within a time
 * budget, answering JSON counts.
 *
 * - `POST /poll`: promote due scheduled and retry jobs, enqueue due
 *   periodic jobs, prune dead processes, recover orphans (`pollOnce`);
 * - `POST /drain`: run queued jobs until empty or out of budget (`drain`);
 * - `POST /tick`: both, poll first: the handler to point a cron at (also
 *   `GET /tick`, since Vercel Cron sends GET).
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { ConfigError } from "../../errors.ts";
import { silentLogger } from "../../logger.ts";
import { describeValue } from "../../describe_value.ts";
import { ticker, type TickOptions } from "./serverless.ts";
import { logErrors } from "../../server/identity.ts";
import type { Transport } from "../../transport/transport.ts";
import { type CronAuth, verifyBearer } from "../../web/bearer_auth.ts";

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
        describeValue(auth)
      }`,
    );
  }
  if (!transport) throw new ConfigError("Cannot build cron routes as 'transport' is required");
  if (!rest.jobs) throw new ConfigError("Cannot build cron routes as 'jobs' is required");
  if (rest.budgetMs !== undefined && !(typeof rest.budgetMs === "number" && rest.budgetMs > 0)) {
    throw new ConfigError(
      `Cannot build cron routes as 'budgetMs' must be > 0: current value is ${describeValue(rest.budgetMs)}`,
    );
  }
  const resolve = (env: E): Transport => typeof transport === "function" ? transport(env) : transport;
  // Features and a client per transport, made once for this instance, not per request.
  const tick = ticker(rest);

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
  app.post("/poll", async (c) => c.json({ poll: await tick.poll(resolve(c.env)) }));
  app.post("/drain", async (c) => c.json({ drain: await tick.drain(resolve(c.env)) }));
  const onTick = async (c: Context<{ Bindings: E }>) => c.json(await tick(resolve(c.env)));
  app.post("/tick", onTick);
  app.get("/tick", onTick); // Vercel Cron sends GET

  return app;
}
