/**
 * The Prometheus endpoint (`metricsHandler()` in edgekiq/web): what a scrape
 * reports, parsed as Prometheus text by a real parser (and by Prometheus's
 * own `promtool check metrics` where it is installed); the dashboard's auth
 * rules; a constant number of Redis commands per scrape whatever the fleet;
 * the seam through which a feature adds its series; hostile names escaped.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { Hono } from "hono";
import parsePrometheus from "parse-prometheus-text-format";
import { ConfigError, createClient, defineJob, drain, type Feature, silentLogger, type Transport } from "../mod.ts";
import { metricsHandler, renderExposition, verifyBasic } from "../src/web/mod.ts";
import { memoryTransport } from "../src/transport/adapters/memory/memory_transport.ts";
import { matrix } from "./support/matrix.ts";

interface Parsed {
  name: string;
  type: string;
  help: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}

const Fine = defineJob({ name: "Fine", perform: (_ctx, _n: number) => {} });
const Flaky = defineJob({
  name: "Flaky",
  retry: 0,
  perform: (_ctx, _n: number) => {
    throw new Error("nope");
  },
});

/** Fake heartbeats: `n` live processes with `busy` jobs each, as a worker writes them. */
async function fakeFleet(transport: Transport, n: number, busy: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const id = `fake-${i}:1${i}:abcdef`;
    await transport.pipeline([
      ["SADD", "processes", id],
      ["HSET", id, "info", JSON.stringify({ hostname: `fake-${i}`, concurrency: 5 }), "busy", busy, "beat", 1],
    ]);
  }
}

async function scrape(app: Hono, init?: RequestInit): Promise<{ status: number; text: string; type: string | null }> {
  const res = await app.request("/metrics", init);
  return { status: res.status, text: await res.text(), type: res.headers.get("content-type") };
}

function family(parsed: Parsed[], name: string): Parsed {
  const found = parsed.find((f) => f.name === name);
  assert.ok(found, `no family ${name} in ${parsed.map((f) => f.name).join(", ")}`);
  return found;
}

function value(parsed: Parsed[], name: string, labels: Record<string, string> = {}): number {
  const sample = family(parsed, name).metrics.find((m) =>
    Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)
  );
  assert.ok(sample, `no ${name}${JSON.stringify(labels)}`);
  return Number(sample.value);
}

let promtoolSkipPrinted = false;

/**
 * Checks a page with Prometheus's own parser and linter, `promtool check
 * metrics` (Debian's `prometheus` package; CI installs it and must have it).
 */
function promtoolCheck(text: string): void {
  if (spawnSync("sh", ["-c", "command -v promtool"]).status !== 0) {
    if (process.env.CI === "true") throw new Error("CI=true but promtool is not on PATH (apt-get install prometheus)");
    if (!promtoolSkipPrinted) {
      console.error("SKIP: promtool not installed; pages checked by parse-prometheus-text-format only");
    }
    promtoolSkipPrinted = true;
    return;
  }
  const run = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  assert.equal(run.status, 0, `promtool check metrics:\n${run.stdout}${run.stderr}\n${text}`);
}

/**
 * A labelled histogram's samples, read from the lines (the npm parser folds
 * every labelled histogram into one unlabelled sample): `le` to count, sum, count.
 */
function histogramOf(
  text: string,
  name: string,
  labels: string,
): { buckets: [string, number][]; sum: number; count: number } {
  const buckets: [string, number][] = [];
  let sum = NaN;
  let count = NaN;
  for (const line of text.split("\n")) {
    const bucket = new RegExp(`^${name}_bucket\\{${labels},le="([^"]+)"\\} (\\S+)$`).exec(line);
    if (bucket) buckets.push([bucket[1], Number(bucket[2])]);
    if (line.startsWith(`${name}_sum{${labels}} `)) sum = Number(line.split(" ")[1]);
    if (line.startsWith(`${name}_count{${labels}} `)) count = Number(line.split(" ")[1]);
  }
  return { buckets, sum, count };
}

describe("renderExposition", () => {
  it("escapes label values and help text, writes +Inf, and adds a histogram's +Inf bucket", () => {
    const text = renderExposition([
      { name: "x_total", help: 'a \\ "quoted"\nhelp', type: "counter", samples: [{ value: 1 }] },
      { name: "y", help: "y", type: "gauge", samples: [{ labels: { q: 'a"b\\c\nd' }, value: Infinity }] },
      {
        name: "z_seconds",
        help: "z",
        type: "histogram",
        samples: [{ labels: { c: "x" }, buckets: [[0.5, 1], [1, 2]], sum: 1.25, count: 3 }],
      },
    ]);
    assert.equal(
      text,
      [
        '# HELP x_total a \\\\ "quoted"\\nhelp',
        "# TYPE x_total counter",
        "x_total 1",
        "# HELP y y",
        "# TYPE y gauge",
        'y{q="a\\"b\\\\c\\nd"} +Inf',
        "# HELP z_seconds z",
        "# TYPE z_seconds histogram",
        'z_seconds_bucket{c="x",le="0.5"} 1',
        'z_seconds_bucket{c="x",le="1"} 2',
        'z_seconds_bucket{c="x",le="+Inf"} 3',
        'z_seconds_sum{c="x"} 1.25',
        'z_seconds_count{c="x"} 3',
        "",
      ].join("\n"),
    );
    const parsed = parsePrometheus(text) as Parsed[];
    assert.equal(parsed[1].metrics[0].labels?.q, 'a"b\\c\nd');
    promtoolCheck(text);
  });

  it("refuses what a scraper would reject the whole page for", () => {
    const gauge = (name: string, labels?: Record<string, string>) => ({
      name,
      help: "h",
      type: "gauge" as const,
      samples: [{ labels, value: 1 }],
    });
    assert.throws(() => renderExposition([gauge("bad-name")]), /is not a metric name: "bad-name"/);
    assert.throws(() => renderExposition([gauge("a"), gauge("a")]), /the family a is given twice/);
    assert.throws(() => renderExposition([gauge("a", { "bad label": "x" })]), /is not a label name/);
    assert.throws(
      () => renderExposition([{ name: "a", help: "h", type: "counter", samples: [{ value: 1 }] }]),
      /the counter a does not end in _total/,
    );
    assert.throws(() => renderExposition([gauge("a")], new Set(["a"])), /given twice/);
  });
});

for (const target of matrix(["memory", "ioredis", "upstash"])) {
  describe(`metricsHandler on ${target.name}`, () => {
    let transport: Transport;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
    });

    it("reports counters, queues with latency, sets, processes, busy and per-class windows, as Prometheus parses them", async () => {
      const client = createClient({ transport });
      await client.pushBulk(Fine, [[1], [2], [3]]);
      await client.push(Flaky, [1]);
      await drain({ transport, jobs: [Fine, Flaky], budgetMs: 5_000, logger: silentLogger });
      const old = JSON.stringify({
        class: "Fine",
        args: [9],
        jid: "0ld",
        queue: "mail",
        enqueued_at: Date.now() / 1000 - 30,
      });
      await transport.pipeline([["SADD", "queues", "mail"], ["LPUSH", "queue:mail", old]]);
      await client.push(Fine, [4], { queue: "bulk" });
      await client.push(Fine, [5], { in: 600 });
      await transport.call("ZADD", "retry", Date.now() / 1000 + 60, JSON.stringify({ class: "X", jid: "r1" }));
      await fakeFleet(transport, 2, 3);

      const app = new Hono().route("/metrics", metricsHandler({ transport, auth: () => true }));
      const { status, text, type } = await scrape(app);
      assert.equal(status, 200, text);
      assert.equal(type, "text/plain; version=0.0.4; charset=utf-8");
      const parsed = parsePrometheus(text) as Parsed[];
      assert.equal(family(parsed, "edgekiq_processed_total").type, "COUNTER");
      assert.equal(value(parsed, "edgekiq_processed_total"), 4);
      assert.equal(value(parsed, "edgekiq_failed_total"), 1);
      assert.equal(value(parsed, "edgekiq_queue_size", { queue: "mail" }), 1);
      assert.equal(value(parsed, "edgekiq_queue_size", { queue: "bulk" }), 1);
      assert.equal(value(parsed, "edgekiq_queue_size", { queue: "default" }), 0);
      const latency = value(parsed, "edgekiq_queue_latency_seconds", { queue: "mail" });
      assert.ok(latency >= 29 && latency < 120, `latency ${latency}`);
      assert.equal(value(parsed, "edgekiq_queue_latency_seconds", { queue: "default" }), 0);
      assert.equal(value(parsed, "edgekiq_scheduled_size"), 1);
      assert.equal(value(parsed, "edgekiq_retry_size"), 1);
      assert.equal(value(parsed, "edgekiq_dead_size"), 1);
      assert.equal(value(parsed, "edgekiq_processes"), 2);
      assert.equal(value(parsed, "edgekiq_busy"), 6);
      // Per class, over the last minutes, from Sidekiq's metrics keys the drain wrote.
      assert.equal(value(parsed, "edgekiq_job_runs_window", { class: "Fine" }), 3);
      assert.equal(value(parsed, "edgekiq_job_runs_window", { class: "Flaky" }), 1);
      assert.equal(value(parsed, "edgekiq_job_failures_window", { class: "Flaky" }), 1);
      assert.equal(value(parsed, "edgekiq_job_failures_window", { class: "Fine" }), 0);
      const histogram = family(parsed, "edgekiq_job_runtime_window_seconds");
      assert.equal(histogram.type, "HISTOGRAM");
      const fine = histogramOf(text, "edgekiq_job_runtime_window_seconds", 'class="Fine"');
      assert.equal(fine.buckets.length, 26);
      assert.equal(fine.buckets[0][0], "0.02");
      assert.equal(fine.buckets.at(-1)![0], "+Inf");
      assert.equal(fine.buckets.at(-1)![1], 3, "every successful run is counted at +Inf");
      assert.equal(fine.count, 3);
      assert.ok(fine.sum >= 0 && fine.sum < 0.06, `sum ${fine.sum}`);
      assert.equal(
        histogramOf(text, "edgekiq_job_runtime_window_seconds", 'class="Flaky"').count,
        0,
        "failures are not timed",
      );
      assert.equal(value(parsed, "edgekiq_scrape_source_up", { source: "metrics" }), 1);
      promtoolCheck(text);
    });

    it("costs the same commands per scrape whatever the number of queues, processes and job classes", async () => {
      const app = new Hono().route("/metrics", metricsHandler({ transport, auth: () => true }));
      const client = createClient({ transport });
      await client.push(Fine, [1]);
      await drain({ transport, jobs: [Fine], budgetMs: 5_000, logger: silentLogger });
      await fakeFleet(transport, 1, 0);
      const measure = async () => {
        await scrape(app); // warm: the first script call may load the script
        const { commands, roundTrips } = transport.counters;
        const { status } = await scrape(app);
        assert.equal(status, 200);
        return [transport.counters.commands - commands, transport.counters.roundTrips - roundTrips];
      };
      const small = await measure();
      await fakeFleet(transport, 20, 1);
      const many = Array.from({ length: 20 }, (_, i) => defineJob({ name: `Job${i}`, perform: () => {} }));
      for (const [i, job] of many.entries()) await client.push(job, [], { queue: `q${i}` });
      await drain({
        transport,
        jobs: many,
        queues: many.map((_, i) => `q${i}`),
        budgetMs: 5_000,
        logger: silentLogger,
      });
      for (let q = 0; q < 20; q++) await client.push(Fine, [q], { queue: `r${q}` });
      const parsed = parsePrometheus((await scrape(app)).text) as Parsed[];
      assert.equal(family(parsed, "edgekiq_job_runs_window").metrics.length, 21, "21 classes reported");
      assert.equal(family(parsed, "edgekiq_queue_size").metrics.length, 41, "41 queues reported");
      const large = await measure();
      assert.deepEqual(large, small, "20 more processes, 40 more queues and 20 more classes cost the same");
      // Core: a pipeline of 2 SMEMBERS, then one read script; metrics: one read of the window's hashes, one of the histograms.
      assert.equal(small[0], 5);
      console.log(`metrics scrape on ${target.name}: ${small[0]} commands, ${small[1]} round trips`);
    });
  });
}

describe("metricsHandler", () => {
  it("has the dashboard's auth rules: required, 401 with a challenge, a hook that throws gets a generic 500", async () => {
    const transport = memoryTransport();
    assert.throws(
      () => metricsHandler({ transport, auth: undefined as never }),
      (e: unknown) => e instanceof ConfigError && /'auth' must be a function/.test(e.message),
    );
    const errors: unknown[] = [];
    const app = new Hono().route(
      "/metrics",
      metricsHandler({ transport, auth: (c) => verifyBasic(c.req.raw, "prom", "s3cret") }),
    );
    const denied = await scrape(app);
    assert.equal(denied.status, 401);
    assert.doesNotMatch(denied.text, /edgekiq_/);
    const res = await app.request("/metrics");
    assert.match(res.headers.get("www-authenticate") ?? "", /^Basic/);
    const ok = await scrape(app, { headers: { authorization: `Basic ${btoa("prom:s3cret")}` } });
    assert.equal(ok.status, 200);
    assert.match(ok.text, /^edgekiq_processed_total 0$/m);
    const throwing = new Hono().route(
      "/metrics",
      metricsHandler({
        transport,
        auth: () => {
          throw new Error("token store at https://secret.example down");
        },
        onError: (e) => errors.push(e),
      }),
    );
    const failed = await scrape(throwing);
    assert.equal(failed.status, 500);
    assert.doesNotMatch(failed.text, /secret\.example/);
    assert.equal(errors.length, 1);
  });

  it("adds a feature's series through its dashboard.metrics part; a failing or clashing source is left out alone", async () => {
    const transport = memoryTransport();
    const reads: number[] = [];
    const limiter: Feature = {
      name: "limiter",
      dashboard: {
        metrics: {
          async collect({ client }) {
            reads.push(1);
            const waiting = Number(await client.transport.call("ZCARD", "edgekiq:limiter:waiting"));
            return [{
              name: "edgekiq_limiter_waiting",
              help: "Jobs waiting.",
              type: "gauge",
              samples: [{ value: waiting }],
            }];
          },
        },
      },
    };
    const broken: Feature = {
      name: "broken",
      dashboard: { metrics: { collect: () => Promise.reject(new Error("x")) } },
    };
    const clash: Feature = {
      name: "clash",
      dashboard: {
        metrics: {
          collect: () =>
            Promise.resolve([{ name: "edgekiq_busy", help: "again", type: "gauge" as const, samples: [{ value: 9 }] }]),
        },
      },
    };
    await transport.call("ZADD", "edgekiq:limiter:waiting", 1, "a", 2, "b");
    const errors: unknown[] = [];
    const app = new Hono().route(
      "/metrics",
      metricsHandler({
        transport,
        auth: () => true,
        features: [limiter, broken, clash],
        onError: (e) => errors.push(e),
      }),
    );
    const { status, text } = await scrape(app);
    assert.equal(status, 200);
    const parsed = parsePrometheus(text) as Parsed[];
    assert.equal(value(parsed, "edgekiq_limiter_waiting"), 2);
    assert.equal(value(parsed, "edgekiq_busy"), 0, "the core's series, not the clashing source's");
    assert.equal(value(parsed, "edgekiq_scrape_source_up", { source: "limiter" }), 1);
    assert.equal(value(parsed, "edgekiq_scrape_source_up", { source: "broken" }), 0);
    assert.equal(value(parsed, "edgekiq_scrape_source_up", { source: "clash" }), 0);
    assert.equal(value(parsed, "edgekiq_scrape_source_up", { source: "metrics" }), 1, "the default feature is added");
    assert.equal(errors.length, 2);
    assert.equal(reads.length, 1);
  });

  it("escapes hostile queue and class names written by anyone sharing the Redis", async () => {
    const transport = memoryTransport();
    const now = new Date();
    const minute = `${String(now.getUTCFullYear() % 100).padStart(2, "0")}${
      String(now.getUTCMonth() + 1).padStart(2, "0")
    }${String(now.getUTCDate()).padStart(2, "0")}|${now.getUTCHours()}:${String(now.getUTCMinutes()).padStart(2, "0")}`;
    const evil = 'Evil"} 1\nedgekiq_busy 99 #\\';
    await transport.pipeline([
      ["SADD", "queues", 'q"}\nedgekiq_busy 42'],
      ["HSET", `j|${minute}`, `${evil}|p`, 7, `${evil}|f`, 0, `${evil}|ms`, 70],
    ]);
    const app = new Hono().route("/metrics", metricsHandler({ transport, auth: () => true }));
    const { text } = await scrape(app);
    const parsed = parsePrometheus(text) as Parsed[];
    assert.equal(value(parsed, "edgekiq_busy"), 0);
    assert.equal(family(parsed, "edgekiq_busy").metrics.length, 1);
    assert.equal(value(parsed, "edgekiq_queue_size", { queue: 'q"}\nedgekiq_busy 42' }), 0);
    assert.equal(value(parsed, "edgekiq_job_runs_window", { class: evil }), 7);
    promtoolCheck(text);
  });

  it("answers 503 when Redis cannot be read, and reports why to onError only", async () => {
    const transport = memoryTransport();
    const errors: unknown[] = [];
    const down: Transport = Object.create(transport, {
      pipeline: { value: () => Promise.reject(new Error("connect ECONNREFUSED 10.0.0.1:6379 password=hunter2")) },
    });
    const app = new Hono().route(
      "/metrics",
      metricsHandler({ transport: down, auth: () => true, onError: (e) => errors.push(e) }),
    );
    const { status, text } = await scrape(app);
    assert.equal(status, 503);
    assert.doesNotMatch(text, /hunter2|ECONNREFUSED/);
    assert.equal(errors.length, 1);
  });

  it("checks the window and class bound of the per-class series", () => {
    const transport = memoryTransport();
    assert.throws(
      () => metricsHandler({ transport, auth: () => true, windowMinutes: 0 }),
      /'windowMinutes' must be a whole number from 1 to 60: current value is 0/,
    );
    assert.throws(
      () => metricsHandler({ transport, auth: () => true, windowMinutes: 1.5 }),
      /'windowMinutes' must be a whole number from 1 to 60/,
    );
  });
});
