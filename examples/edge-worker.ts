/**
 * One file for every edge: define jobs, push them over HTTP, run them from a
 * cron, all over Upstash's REST API (no TCP, no long-lived process).
 *
 * - `POST /enqueue` `{"name": "Ada", "in": 5}`: pushes a Greet job (`in`: seconds from now);
 * - `POST /cron/tick` (or `GET`, for Vercel Cron): promotes due jobs, then drains the queue;
 *   `/cron/poll` and `/cron/drain` do one half each;
 * - `scheduled`: the same tick from a Cloudflare Cron Trigger;
 * - `/jobs`: the dashboard (queues, retries, busy processes, live charts), behind basic auth
 *   as user `admin` with $DASHBOARD_PASSWORD.
 *
 * The other routes want `Authorization: Bearer $CRON_SECRET`. Configuration comes from env
 * bindings on Cloudflare and from the environment elsewhere:
 * UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN, CRON_SECRET, DASHBOARD_PASSWORD.
 *
 * Entry points: edge-cloudflare.ts, edge-deno.ts, edge-bun.ts, edge-vercel.ts.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { createClient, defineJob, pollAndDrain, type Transport } from "../mod.ts";
import { upstashTransport } from "../src/transport/adapters/upstash/upstash_transport.ts"; // "edgekiq/upstash" in your app
import { cronRoutes, dashboard, verifyBasic, verifyBearer } from "../src/web/mod.ts"; // "edgekiq/web"

/** The settings, as Cloudflare bindings or environment variables. */
export interface Env {
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  CRON_SECRET?: string;
  DASHBOARD_PASSWORD?: string;
}

/** Cloudflare passes bindings per request; Node, Bun, Deno and Vercel have `process.env`. */
function settings(bindings?: Env): Env {
  if (bindings?.UPSTASH_REDIS_REST_URL) return bindings;
  return (globalThis as { process?: { env: Env } }).process?.env ?? {};
}

let transport: Transport | undefined;
/** One HTTP transport per isolate, made on first use. */
export function redis(bindings?: Env): Transport {
  if (transport) return transport;
  const { UPSTASH_REDIS_REST_URL: url, UPSTASH_REDIS_REST_TOKEN: token } = settings(bindings);
  if (!url || !token) throw new Error("set UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN");
  return (transport = upstashTransport({ url, token }));
}

/** The job: greets someone and records the greeting in the `greetings` hash. */
export const Greet = defineJob({
  name: "Greet",
  args: v.tuple([v.pipe(v.string(), v.minLength(1))]),
  async perform(ctx, name) {
    await redis().call("HSET", "greetings", name, `hello ${name} (job ${ctx.jid})`);
  },
});
const jobs = [Greet];
const budgetMs = 20_000; // keep well inside the platform's time limit

const auth = (req: Request, env?: Env) => verifyBearer(req, settings(env).CRON_SECRET);

/** The HTTP app. */
export const app = new Hono<{ Bindings: Env }>();

app.post("/enqueue", async (c) => {
  if (!(await auth(c.req.raw, c.env))) return c.json({ error: "unauthorized" }, 401);
  const body = v.safeParse(
    v.object({ name: v.string(), in: v.optional(v.number()) }),
    await c.req.json().catch(() => null),
  );
  if (!body.success) return c.json({ error: 'expected {"name": string, "in"?: seconds}' }, 400);
  const jid = await createClient({ transport: redis(c.env) }).push(Greet, [body.output.name], { in: body.output.in });
  return c.json({ jid });
});

app.route("/cron", cronRoutes<Env>({ transport: redis, jobs, budgetMs, auth }));

// The dashboard: every page costs a few billed commands (a /stats poll, 3), whatever the fleet.
app.route(
  "/jobs",
  dashboard<Env>({
    transport: redis,
    auth: (c) => verifyBasic(c.req.raw, "admin", settings(c.env).DASHBOARD_PASSWORD),
  }),
);

/** A Cloudflare Cron Trigger (`[triggers] crons = ["* * * * *"]` in wrangler.toml). */
export async function scheduled(_event: unknown, env?: Env, ctx?: { waitUntil(p: Promise<unknown>): void }) {
  const tick = pollAndDrain({ transport: redis(env), jobs, budgetMs });
  ctx?.waitUntil(tick);
  const { poll, drain } = await tick;
  console.log(
    `edgekiq tick: promoted ${poll.promoted}, processed ${drain.processed}, failed ${drain.failed}, ` +
      `remaining ${drain.remaining}, ${drain.commandsPerJob.toFixed(1)} commands/job`,
  );
}

export default { fetch: app.fetch, scheduled };
