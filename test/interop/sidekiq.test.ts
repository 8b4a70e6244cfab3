/**
 * Interoperability with the real Ruby Sidekiq 6.4, both directions, on one
 * private redis-server.
 */
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, DeadSet, defineJob, parsePayload, serializePayload, silentLogger } from "../../mod.ts";
import { ioredisTransport } from "../../src/transport/ioredis.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { waitFor } from "../support/matrix.ts";
import { type TestRedis, testRedis } from "../support/redis.ts";
import { rubyAvailable, rubyClient, startRubyWorker } from "../support/ruby_peer.ts";
import { testWorker } from "../support/worker.ts";

interface RubyRecord {
  class: string;
  display_class: string;
  args: unknown[];
  jid: string;
  enqueued_at: number | null;
  created_at: number | null;
  enqueued_at_is_float: boolean;
  created_at_is_float: boolean;
  error_class: string | null;
  error_message: string | null;
  retry_count: number | null;
  error_backtrace: string[] | null | string;
  at: number | null;
  item: Record<string, unknown>;
}

describe("interop with Ruby Sidekiq 6.4", { skip: !rubyAvailable() && "no ruby-sidekiq" }, () => {
  let server: TestRedis | null;
  let redis: Transport;
  let url: string;
  before(async () => {
    server = await testRedis();
    url = server!.url;
    redis = ioredisTransport({ url });
  });
  after(async () => {
    await redis?.close();
    await server?.stop();
  });
  beforeEach(async () => {
    await redis.call("FLUSHDB");
  });

  it("Ruby reads what edgekiq pushed, and edgekiq decodes what Ruby pushed", async () => {
    const client = createClient({ transport: redis });
    const jid = await client.push("HardJob", ["bob", 5, { nested: [1, "two"] }]);
    // A whole-second time must still reach Ruby as a Float (Sidekiq 8 would read an Integer as ms).
    await redis.call(
      "LPUSH",
      "queue:whole",
      serializePayload({
        class: "HardJob",
        args: [],
        queue: "whole",
        jid: "w1",
        created_at: 1700000000,
        enqueued_at: 1700000000,
      }, "seconds"),
    );
    const [job] = await rubyClient<RubyRecord[]>(url, "queue", "default");
    assert.equal(job.class, "HardJob");
    assert.deepEqual(job.args, ["bob", 5, { nested: [1, "two"] }]);
    assert.equal(job.jid, jid);
    assert.ok(job.enqueued_at_is_float && Math.abs(job.enqueued_at! - Date.now() / 1000) < 10);
    const [whole] = await rubyClient<RubyRecord[]>(url, "queue", "whole");
    assert.equal(whole.created_at_is_float, true);
    assert.equal(whole.created_at, 1700000000);

    const [rubyJid] = await rubyClient<string[]>(url, "push", [{
      class: "FromRuby",
      args: [1, "x", null, true],
      queue: "in",
    }]);
    const raw = (await redis.call("RPOP", "queue:in")) as string;
    const payload = parsePayload(raw);
    assert.equal(payload.jid, rubyJid);
    assert.deepEqual(payload.args, [1, "x", null, true]);
    assert.equal(payload.retry, true);
    assert.ok(Math.abs(payload.enqueued_at! - Date.now() / 1000) < 10);
  });

  it("an edgekiq worker runs jobs Ruby pushed, including perform_in through edgekiq's poller", async () => {
    const ran: unknown[][] = [];
    const RubyMade = defineJob({
      name: "RubyMade",
      perform(_ctx, ...args: unknown[]) {
        ran.push(args);
      },
    });
    await rubyClient(url, "push", [
      { class: "RubyMade", args: ["now", 1] },
      { class: "RubyMade", args: ["later", 2], at: Date.now() / 1000 + 1 },
    ]);
    assert.equal(await redis.call("ZCARD", "schedule"), 1);
    const worker = testWorker(redis, { jobs: [RubyMade], poller: true, pollIntervalAverage: 0.2 });
    await worker.run();
    try {
      await waitFor(() => ran.length === 2, "both jobs", 15_000);
    } finally {
      await worker.stop();
    }
    assert.deepEqual(ran, [["now", 1], ["later", 2]]);
  });

  it("a Ruby worker runs jobs edgekiq pushed, and Ruby's poller promotes edgekiq's `in` job", async () => {
    const client = createClient({ transport: redis });
    const now = await client.push("HardJob", ["from ts", 1]);
    const later = await client.push("HardJob", ["in 1s", 2], { in: 1 });
    const ruby = await startRubyWorker(url, { QUEUES: "default" });
    try {
      await waitFor(async () => Number(await redis.call("LLEN", "ruby:ran")) === 2, "Ruby ran both", 25_000);
    } finally {
      await ruby.stop();
    }
    const ran = ((await redis.call("LRANGE", "ruby:ran", 0, -1)) as string[]).map((r) => JSON.parse(r));
    assert.deepEqual(ran.map((r) => [r.jid, r.class, r.args]), [[now, "HardJob", ["from ts", 1]], [later, "HardJob", [
      "in 1s",
      2,
    ]]]);
  });

  it("Ruby's RetrySet reads edgekiq's retries, and retry_all makes edgekiq run the job again", async () => {
    let attempts = 0;
    const Flaky = defineJob({
      name: "Flaky",
      backtrace: 5,
      perform() {
        if (++attempts === 1) throw new RangeError("first attempt fails");
      },
    });
    const jid = await createClient({ transport: redis }).push(Flaky, [7]);
    const worker = testWorker(redis, { jobs: [Flaky], poller: true, pollIntervalAverage: 0.2 });
    const failedAt = Date.now() / 1000;
    await worker.run();
    try {
      await waitFor(async () => Number(await redis.call("ZCARD", "retry")) === 1, "retry entry");
      const [entry] = await rubyClient<RubyRecord[]>(url, "retries");
      assert.equal(entry.class, "Flaky");
      assert.deepEqual(entry.args, [7]);
      assert.equal(entry.jid, jid);
      assert.equal(entry.error_class, "RangeError");
      assert.equal(entry.error_message, "first attempt fails");
      assert.equal(entry.retry_count, 0);
      assert.ok(entry.at! - failedAt > 10 && entry.at! - failedAt < 30, `at ${entry.at! - failedAt}s ahead`);
      assert.ok(Array.isArray(entry.error_backtrace) && entry.error_backtrace.length > 0, "Ruby decodes the backtrace");
      await rubyClient(url, "retry_all");
      await waitFor(() => attempts === 2, "second attempt", 10_000);
    } finally {
      await worker.stop();
    }
  });

  it("dead jobs: Ruby's DeadSet reads edgekiq's, and edgekiq's DeadSet reads Ruby's", async () => {
    const Doomed = defineJob({
      name: "Doomed",
      retry: 0,
      backtrace: true,
      perform() {
        throw new Error("no hope");
      },
    });
    const jid = await createClient({ transport: redis }).push(Doomed, ["x"]);
    const worker = testWorker(redis, { jobs: [Doomed] });
    await worker.run();
    await waitFor(async () => Number(await redis.call("ZCARD", "dead")) === 1, "dead entry");
    await worker.stop();
    const [dead] = await rubyClient<RubyRecord[]>(url, "dead");
    assert.equal(dead.jid, jid);
    assert.equal(dead.error_message, "no hope");
    assert.ok(
      Array.isArray(dead.error_backtrace) &&
        (dead.error_backtrace as string[]).some((l) => l.includes("sidekiq.test.ts")),
    );

    await rubyClient(url, "kill", {
      class: "RubyDead",
      args: [1],
      jid: "rubydead01",
      queue: "default",
      error_message: "ruby says no",
      custom: "kept",
    });
    const client = createClient({ transport: redis });
    const entries = [];
    for await (const entry of new DeadSet(client).scan("rubydead01")) entries.push(entry);
    assert.equal(entries.length, 1);
    assert.equal(entries[0].item?.class, "RubyDead");
    assert.equal(entries[0].item?.custom, "kept");
  });

  it("Ruby's ProcessSet and Workers see an edgekiq worker; quiet! and stop! from Ruby reach it", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const Busy = defineJob({
      name: "Busy",
      async perform() {
        await gate;
      },
    });
    const jid = await createClient({ transport: redis }).push(Busy, [1]);
    const worker = testWorker(redis, {
      jobs: [Busy],
      concurrency: 4,
      queues: ["default", "low"],
      heartbeatInterval: 0.2,
    });
    await worker.run();
    try {
      await waitFor(() => worker.capsules[0].busy.size === 1, "busy");
      await worker.beat();
      const [proc] = await rubyClient<Array<Record<string, unknown>>>(url, "processes");
      assert.equal(proc.identity, worker.identity);
      assert.equal(proc.pid, Number(worker.identity.split(":")[1]));
      assert.equal(proc.hostname, worker.identity.split(":")[0]);
      assert.equal(proc.concurrency, 4);
      assert.deepEqual(proc.queues, ["default", "low"]);
      assert.equal(proc.busy, 1);
      const [work] = await rubyClient<Array<{ process: string; work: { queue: string; payload: { jid: string } } }>>(
        url,
        "workers",
      );
      assert.equal(work.process, worker.identity);
      assert.equal(work.work.queue, "default");
      assert.equal(work.work.payload.jid, jid);
      assert.equal(await rubyClient(url, "signal", { identity: worker.identity, sig: "quiet" }), true);
      await waitFor(async () => (await redis.call("HGET", worker.identity, "quiet")) === "true", "quiet from Ruby");
      release();
      assert.equal(await rubyClient(url, "signal", { identity: worker.identity, sig: "stop" }), true);
      await Promise.race([worker.stopped, waitFor(() => false, "stop from Ruby", 5000)]);
    } finally {
      release();
      await worker.stop();
    }
  });

  it("Ruby's Stats include edgekiq's counts after a heartbeat, with matching daily history", async () => {
    const Ok = defineJob({ name: "Ok", perform() {} });
    const Bad = defineJob({
      name: "Bad",
      retry: false,
      perform() {
        throw new Error("x");
      },
    });
    const client = createClient({ transport: redis });
    await client.pushBulk(Ok, [[], [], []]);
    await client.push(Bad, []);
    const worker = testWorker(redis, { jobs: [Ok, Bad] });
    await worker.run();
    await waitFor(
      async () => Number(await redis.call("LLEN", "queue:default")) === 0 && worker.capsules[0].busy.size === 0,
      "drained",
    );
    await worker.beat();
    await worker.stop();
    const stats = await rubyClient<
      {
        processed: number;
        failed: number;
        history_processed: Record<string, number>;
        history_failed: Record<string, number>;
      }
    >(url, "stats");
    assert.equal(stats.processed, 4);
    assert.equal(stats.failed, 1);
    const today = new Date().toISOString().slice(0, 10);
    assert.equal(stats.history_processed[today], 4);
    assert.equal(stats.history_failed[today], 1);
  });

  it("mixed fleet: Ruby and edgekiq consume one queue at once, every job exactly once", async () => {
    const N = 300;
    const SharedJob = defineJob({
      name: "SharedJob",
      async perform(ctx) {
        await redis.call("RPUSH", "ts:ran", ctx.jid);
      },
    });
    const jids = await createClient({ transport: redis }).pushBulk(
      SharedJob,
      Array.from({ length: N }, (_, i) => [i]),
      { queue: "shared" },
    );
    const ruby = await startRubyWorker(url, { QUEUES: "shared", CONCURRENCY: "3" });
    const worker = testWorker(
      redis,
      {
        jobs: [SharedJob],
        queues: ["shared"],
        concurrency: 3,
        prefetch: 0,
        poller: true,
        pollIntervalAverage: 0.3,
      } as never,
    );
    await worker.run();
    try {
      await waitFor(
        async () => Number(await redis.call("LLEN", "ts:ran")) + Number(await redis.call("LLEN", "ruby:ran")) >= N,
        "all jobs",
        30_000,
      );
    } finally {
      await worker.stop();
      await ruby.stop();
    }
    const ts = (await redis.call("LRANGE", "ts:ran", 0, -1)) as string[];
    const rb = ((await redis.call("LRANGE", "ruby:ran", 0, -1)) as string[]).map((r) => JSON.parse(r).jid as string);
    const all = [...ts, ...rb];
    assert.equal(all.length, N, `ran ${all.length} times for ${N} jobs`);
    assert.deepEqual(new Set(all), new Set(jids));
    assert.ok(ts.length > 0 && rb.length > 0, `both sides worked (ts ${ts.length}, ruby ${rb.length})`);
  });

  it("routes ActiveJob wrappers to the job named by `wrapped`, when asked", async () => {
    const seen: unknown[] = [];
    const Welcome = defineJob({
      name: "WelcomeMailerJob",
      perform(_ctx, ...args: unknown[]) {
        seen.push(args);
      },
    });
    const serialized = {
      job_class: "WelcomeMailerJob",
      job_id: "aj-1",
      queue_name: "default",
      arguments: ["ada@example.com"],
    };
    await rubyClient(url, "push", [{
      class: "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
      wrapped: "WelcomeMailerJob",
      args: [serialized],
      queue: "default",
    }]);
    const worker = testWorker(redis, { jobs: [Welcome], activeJob: true, logger: silentLogger });
    await worker.run();
    try {
      await waitFor(() => seen.length === 1, "wrapped job ran");
    } finally {
      await worker.stop();
    }
    assert.deepEqual(seen, [[serialized]]);
  });
});
