/**
 * The real edge: examples/edge-worker.ts bundled by esbuild into one ES
 * module and run in workerd (Cloudflare's runtime) through miniflare, with
 * @upstash/redis talking to the Upstash REST gateway fixture in front of a
 * private redis-server. Every outbound request of the worker passes through
 * a counter, so the test reports what Upstash would bill per job.
 *
 * Node only: miniflare drives the workerd binary from Node.
 */
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Transport } from "../src/transport/transport.ts";
import { runtimeName } from "./support/child.ts";
import { forward, type WorkerdApp } from "./support/workerd.ts";
import { suiteEdge } from "./support/suite_edge.ts";
import { redisAvailable } from "./support/matrix.ts";

const TOKEN = "edge-test-token";
const SECRET = "edge-cron-secret";
const DASHBOARD_PASSWORD = "edge-dashboard-password";

const skip = runtimeName !== "node"
  ? `miniflare drives workerd from Node; the edge test runs under Node only (this is ${runtimeName})`
  : !redisAvailable() && "no redis";

describe("edge: examples/edge-worker.ts in workerd via miniflare, over the Upstash REST gateway", { skip }, () => {
  /** Redis commands the worker sent through the gateway (what Upstash bills). */
  const billed = { commands: 0, requests: 0 };
  const edge = suiteEdge({
    token: TOKEN,
    app: { file: "examples/edge-worker.ts" },
    checkBundle(code) {
      assert.doesNotMatch(
        code,
        /from\s*["']ioredis["']|require\(["']ioredis["']\)/,
        "no TCP client in the edge bundle",
      );
      console.log(`edge: bundle is ${(code.length / 1024).toFixed(0)} KiB`);
    },
    bindings: (url) => ({
      UPSTASH_REDIS_REST_URL: url,
      UPSTASH_REDIS_REST_TOKEN: TOKEN,
      CRON_SECRET: SECRET,
      DASHBOARD_PASSWORD,
    }),
    // Every fetch() the worker makes lands here, in Node: count, then forward to the gateway.
    outbound: async (request: Request) => {
      const body = await request.text();
      const url = new URL(request.url);
      if (url.origin === new URL(edge.gateway.url).origin) {
        const parsed = JSON.parse(body || "null");
        billed.requests += 1;
        billed.commands += Array.isArray(parsed) && Array.isArray(parsed[0]) ? parsed.length : 1;
        // EDGE_TRACE=1 prints each request's commands, to see where they go.
        if (process.env.EDGE_TRACE) console.log("edge trace:", url.pathname, body.slice(0, 200));
      }
      return forward(request, body);
    },
  });
  // deno-lint-ignore no-explicit-any
  let mf: any;
  let app: WorkerdApp;
  let redis: Transport;
  before(() => {
    ({ mf } = app = edge.workerd);
    redis = edge.redis;
  });

  const enqueue = async (name: string, inSeconds?: number) => {
    const res = await mf.dispatchFetch("http://edge.test/enqueue", {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ name, in: inSeconds }),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return JSON.parse(text).jid as string;
  };
  const scheduled = async () => {
    const worker = await mf.getWorker();
    const result = await worker.scheduled({ cron: "* * * * *", scheduledTime: new Date() });
    assert.equal(result.outcome, "ok", app!.output());
  };
  const greetings = async () => {
    const flat = (await redis.call("HGETALL", "greetings")) as string[] | Record<string, string>;
    return Array.isArray(flat)
      ? Object.fromEntries(flat.flatMap((_, i) => (i % 2 ? [] : [[flat[i], flat[i + 1]]])))
      : flat;
  };

  it("rejects requests without the secret", { timeout: 60_000 }, async () => {
    const res = await mf.dispatchFetch("http://edge.test/enqueue", { method: "POST", body: "{}" });
    assert.equal(res.status, 401);
    const cron = await mf.dispatchFetch("http://edge.test/cron/tick", {
      method: "POST",
      headers: { authorization: "Bearer nope" },
    });
    assert.equal(cron.status, 401);
  });

  it("enqueue over HTTP, then the scheduled handler runs the jobs", { timeout: 60_000 }, async () => {
    await redis.call("FLUSHDB");
    const names = ["Ada", "Grace", "Edsger", "Barbara", "Alan"];
    const jids = [];
    for (const name of names) jids.push(await enqueue(name));
    assert.equal(await redis.call("LLEN", "queue:default"), names.length);

    const before = { ...billed };
    await scheduled();
    const commands = billed.commands - before.commands;
    const got = await greetings();
    assert.deepEqual(Object.keys(got).sort(), [...names].sort());
    for (const [i, name] of names.entries()) assert.equal(got[name], `hello ${name} (job ${jids[i]})`);
    assert.equal(await redis.call("LLEN", "queue:default"), 0);
    assert.equal(await redis.call("GET", "stat:processed"), String(names.length));
    assert.deepEqual(await redis.call("SMEMBERS", "processes"), [], "the drain unregistered itself");
    console.log(
      `edge: tick 1 ran ${names.length} jobs with ${commands} billed commands in ${
        billed.requests - before.requests
      } HTTP requests ` +
        `(${(commands / names.length).toFixed(1)} per job, counting the poll and the first-use script loads)`,
    );
  });

  it("a job scheduled 1.5 s ahead is promoted and run by a tick after it is due", { timeout: 60_000 }, async () => {
    await redis.call("FLUSHDB");
    const jid = await enqueue("Later", 1.5);
    assert.equal(await redis.call("ZCARD", "schedule"), 1);
    await scheduled();
    assert.equal((await greetings()).Later, undefined, "not due yet: not run");
    assert.equal(await redis.call("ZCARD", "schedule"), 1);
    await new Promise((r) => setTimeout(r, 1600));
    const before = { ...billed };
    await scheduled();
    assert.equal((await greetings()).Later, `hello Later (job ${jid})`);
    assert.equal(await redis.call("ZCARD", "schedule"), 0);
    console.log(`edge: tick with 1 promoted job: ${billed.commands - before.commands} billed commands`);
  });

  it("the dashboard renders in workerd over Upstash, a few billed commands per page", { timeout: 60_000 }, async () => {
    await redis.call("FLUSHDB");
    await enqueue("Dash");
    const basic = { authorization: `Basic ${btoa(`admin:${DASHBOARD_PASSWORD}`)}` };
    const denied = await mf.dispatchFetch("http://edge.test/jobs/queues");
    assert.equal(denied.status, 401);
    await denied.text();
    const costs: string[] = [];
    await scheduled(); // runs the job: its metrics are written at the end of the drain
    await enqueue("Dash");
    for (
      const path of ["/jobs", "/jobs/queues", "/jobs/stats", "/jobs/metrics", "/jobs/metrics/Greet", "/jobs/periodic"]
    ) {
      await (await mf.dispatchFetch(`http://edge.test${path}`, { headers: basic })).text(); // loads the script once
      const before = billed.commands;
      const res = await mf.dispatchFetch(`http://edge.test${path}`, { headers: basic });
      const body = await res.text();
      assert.equal(res.status, 200, `${path}: ${body.slice(0, 300)}`);
      assert.match(res.headers.get("content-security-policy") ?? "", /script-src 'nonce-/);
      if (path === "/jobs/queues") {
        assert.match(body, /href="\/jobs\/queues\/default">default<\/a><\/td><td class="num"[^>]*>1</);
      }
      if (path === "/jobs/stats") assert.equal(JSON.parse(body).sidekiq.enqueued, 1);
      if (path === "/jobs/metrics") {
        assert.match(body, /<a class="mono" href="\/jobs\/metrics\/Greet\?period=1h">Greet</);
      }
      if (path === "/jobs/metrics/Greet") assert.match(body, /<span>Runs<\/span><b>1<\/b>/);
      if (path === "/jobs/periodic") assert.match(body, /No periodic schedules/);
      costs.push(`${path} ${billed.commands - before}`);
    }
    const asset = /src="(\/jobs\/assets\/uplot-[\w]+\.js)"/.exec(
      await (await mf.dispatchFetch("http://edge.test/jobs", { headers: basic })).text(),
    )![1];
    const script = await mf.dispatchFetch(`http://edge.test${asset}`, { headers: basic });
    assert.equal(script.status, 200);
    assert.match(await script.text(), /uPlot/);
    console.log(`edge: dashboard billed commands per load: ${costs.join(", ")}`);
  });

  it("steady state: billed commands per job for a batch of 20", { timeout: 60_000 }, async () => {
    await redis.call("FLUSHDB");
    for (let i = 0; i < 20; i++) await enqueue(`n${i}`);
    const before = { ...billed };
    const gatewayBefore = edge.gateway.commands;
    const res = await mf.dispatchFetch("http://edge.test/cron/tick", {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}` },
    });
    assert.equal(res.status, 200);
    const { poll, drain } = await res.json();
    const commands = billed.commands - before.commands;
    assert.equal(poll.promoted, 0);
    assert.equal(drain.processed, 20);
    assert.equal(Object.keys(await greetings()).length, 20);
    assert.equal(edge.gateway.commands - gatewayBefore, commands, "the gateway's own count agrees");
    // Each job's own HSET is one command; the rest is edgekiq's overhead.
    console.log(
      `edge: POST /cron/tick ran 20 jobs: ${commands} billed commands through the gateway = ${
        (commands / 20).toFixed(2)
      } per job ` +
        `(${
          ((commands - 20) / 20).toFixed(2)
        } edgekiq overhead + 1 HSET by the job); drain counted ${drain.commands} ` +
        `(${drain.commandsPerJob.toFixed(2)}/job, poll excluded)`,
    );
    assert.ok(commands / 20 < 6, `commands per job stay small: ${commands / 20}`);
  });
});

// The cron routes with periodic schedules in one warm workerd isolate over Upstash: the routes build their Client
// once, so the schedules' registration is sent on the first tick only, and each tick reports what it enqueued.
const cronEntry = `
import { Hono } from "hono";
import { upstashTransport } from "./src/transport/adapters/upstash/upstash_transport.ts";
import { cronRoutes } from "./src/web/mod.ts";
const scripts = [];
let transport;
function redis(env) {
  if (transport) return transport;
  const inner = upstashTransport({ url: env.URL, token: env.TOKEN });
  transport = {
    kind: inner.kind,
    blocking: inner.blocking,
    get counters() { return inner.counters; },
    call: (command, ...args) => inner.call(command, ...args),
    pipeline: (commands, options) => inner.pipeline(commands, options),
    script: (script, keys, args) => { scripts.push(script.name); return inner.script(script, keys, args); },
    close: () => inner.close(),
  };
  return transport;
}
const app = new Hono();
app.route("/cron", cronRoutes({
  transport: redis,
  jobs: [],
  queues: ["nothing"],
  budgetMs: 2000,
  periodic: [{ every: 1, job: "Beat", name: "beat", queue: "beats" }],
  periodicOwner: "edge-test",
  auth: "${SECRET}",
}));
app.get("/scripts", (c) => c.json(scripts));
export default app;
`;

describe("edge: cron routes with periodic schedules in workerd, over the Upstash REST gateway", { skip }, () => {
  const edge = suiteEdge({ token: TOKEN, app: { contents: cronEntry } });
  // deno-lint-ignore no-explicit-any
  let mf: any;
  let redis: Transport;
  const gateway = {
    get commands() {
      return edge.gateway.commands;
    },
  };
  before(() => {
    mf = edge.workerd.mf;
    redis = edge.redis;
  });

  it(
    "/cron/tick enqueues due periodic ticks and registers the schedules once per isolate",
    { timeout: 60_000 },
    async () => {
      const tick = async () => {
        const before = gateway!.commands;
        const res = await mf.dispatchFetch("http://edge.test/cron/tick", {
          method: "POST",
          headers: { authorization: `Bearer ${SECRET}` },
        });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        return { ...JSON.parse(text), billed: gateway!.commands - before };
      };
      const first = await tick();
      assert.equal(first.poll.features.periodic, 1, "the new schedule's latest tick, within grace");
      await new Promise((r) => setTimeout(r, 1_100));
      const second = await tick();
      assert.ok(second.poll.features.periodic >= 1, `a tick later: ${second.poll.features.periodic}`);
      await new Promise((r) => setTimeout(r, 1_100));
      const third = await tick();
      const enqueued = first.poll.features.periodic + second.poll.features.periodic + third.poll.features.periodic;
      assert.equal(await redis.call("LLEN", "queue:beats"), enqueued);
      const scripts: string[] = await (await mf.dispatchFetch("http://edge.test/scripts")).json();
      assert.equal(scripts.filter((s) => s === "periodicRegister").length, 1, scripts.join(", "));
      console.log(
        `edge: /cron/tick with one periodic schedule, billed commands: first ${first.billed} (registers), then ` +
          `${second.billed} and ${third.billed} (each claims a tick)`,
      );
    },
  );
});
