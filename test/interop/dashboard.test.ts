/**
 * The dashboard over a Redis shared with a real Ruby Sidekiq 6.4 process
 * (Debian's ruby-sidekiq, embedded Sidekiq::Launcher in
 * test/interop/ruby/launcher.rb): the Busy page lists the Ruby process next
 * to an edgekiq worker, with the Ruby job it is running; Quiet on the page
 * reaches the Ruby process through its `<identity>-signals` list; Ruby's
 * own failures show on Retries with their backtraces.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { Hono } from "hono";
import { createClient, defineJob, type Transport, type Worker } from "../../mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { dashboard } from "../../src/web/mod.ts";
import { redisAvailable, waitFor } from "../support/matrix.ts";
import { type TestRedis, testRedis } from "../support/redis.ts";
import { type RubyProcess, rubySkip, spawnRuby } from "../support/ruby.ts";
import { testWorker } from "../support/worker.ts";

const skip = rubySkip() || (!redisAvailable() && "no redis-server and no REDIS_URL");

describe("dashboard with Ruby Sidekiq 6.4 on the same Redis", { skip }, () => {
  let server: TestRedis | null = null;
  let redis: Transport;
  let app: Hono;
  let ruby: RubyProcess | undefined;
  let worker: Worker | undefined;
  let release!: () => void;

  before(async () => {
    server = await testRedis();
    redis = ioredisTransport({ url: server!.url });
    app = new Hono().route("/jobs", dashboard({ transport: redis, auth: () => true }));
  });
  after(async () => {
    release?.();
    await worker?.stop();
    await ruby?.stop();
    await redis?.close();
    await server?.stop();
  });

  it("Busy lists the Ruby process and its running job beside an edgekiq worker; Quiet reaches Ruby", {
    timeout: 60_000,
  }, async () => {
    ruby = spawnRuby("launcher", {
      env: {
        REDIS_URL: server!.url,
        QUEUES: "ruby",
        CONCURRENCY: "3",
        JOB_CLASSES: "RubyReport",
        JOB_SLEEP_MS: "20000",
      },
      timeoutMs: 60_000,
    });
    const { identity, pid } = JSON.parse(await ruby.waitForLine('"ready":true', 30_000)) as {
      identity: string;
      pid: number;
    };
    const gate = new Promise<void>((r) => (release = r));
    const Local = defineJob({ name: "LocalExport", perform: (_ctx, _label: string) => gate });
    worker = testWorker(redis, { jobs: [Local], heartbeatInterval: 0.2, tag: "ts-side" });
    await worker.run();
    const client = createClient({ transport: redis });
    await client.push("RubyReport", ["from-edgekiq", 7], { queue: "ruby" });
    await client.push(Local, ["local"]);
    // Sidekiq 6.4 beats every 5 s; its work hash names the running job.
    await waitFor(async () => (await redis.call("HGET", identity, "busy")) === "1", "Ruby's busy beat", 20_000);
    await waitFor(async () => (await redis.call("HGET", worker!.identity, "busy")) === "1", "edgekiq's busy beat");

    const res = await app.request("/jobs/busy");
    assert.equal(res.status, 200);
    const page = await res.text();
    assert.ok(page.includes(identity), "the Ruby process is listed");
    assert.ok(page.includes(worker.identity), "the edgekiq worker too");
    assert.ok(page.includes(`${hostname()}:${pid}`), "by host and pid");
    assert.match(page, /<b>RubyReport<\/b>/, "with the Ruby job it runs");
    assert.match(page, /&quot;from-edgekiq&quot;, 7/);
    assert.match(page, /<b>LocalExport<\/b>/);
    assert.match(page, /queues: ruby/);
    const stats = await (await app.request("/jobs/stats")).json();
    assert.equal(stats.sidekiq.processes, 2);
    assert.equal(stats.sidekiq.busy, 2);

    const quiet = await app.request("/jobs/busy", {
      method: "POST",
      headers: { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ identity, action: "quiet" }),
    });
    // Marked so the page shows "quiet requested" until Ruby's next beat confirms it (issue 30).
    assert.match(
      quiet.headers.get("location")!,
      /^\/jobs\/busy\?notice=quieted&n=1&pending=quiet&target=[^&]+&at=\d+$/,
    );
    await waitFor(async () => (await redis.call("HGET", identity, "quiet")) === "true", "Ruby quiets", 20_000);
    const row = (await (await app.request("/jobs/busy")).text()).split("<tr>").find((r) => r.includes(identity))!;
    assert.match(row, /<span class="status quiet">quiet<\/span>/, "the page shows it quiet");
  });
});
