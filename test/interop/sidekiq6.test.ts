/**
 * Interoperability with the real Ruby Sidekiq (Debian's ruby-sidekiq 6.4),
 * both directions, on one private redis-server: the issue's matrix, items
 * 0-8. Ruby runs as child processes (test/interop/ruby/*.rb) that get the
 * server's URL as REDIS_URL.
 */
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import process from "node:process";
import { createClient, defineJob, pollOnce, type Transport, type Worker } from "../../mod.ts";
import { batchJobs } from "../../src/features/batches/mod.ts";
import { flowLimits } from "../../src/features/limits/mod.ts";
import { DeadSet, ProcessSet, RetrySet, Stats, Workers } from "../../src/api/mod.ts";
import { parsePayload, toEpochMs } from "../../src/payload.ts";
import { decompressBacktrace } from "../../src/server/backtrace_codec.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { redisAvailable, waitFor } from "../support/matrix.ts";
import { type TestRedis, testRedis } from "../support/redis.ts";
import { rubyJson, type RubyProcess, rubySkip, spawnRuby } from "../support/ruby.ts";
import { testWorker } from "../support/worker.ts";

const activeJobFixture = JSON.parse(
  readFileSync(new URL("./fixtures/activejob.json", import.meta.url), "utf8"),
) as { serialized: Record<string, unknown> };

/** What test/interop/ruby/common.rb's `record` prints for one job. */
interface RubyJob {
  class: string;
  display_class: string;
  display_args: unknown[];
  args: unknown[];
  jid: string;
  queue: string;
  enqueued_at: number | null;
  created_at: number | null;
  enqueued_at_type: string;
  created_at_type: string;
  error_class: string | null;
  error_message: string | null;
  retry_count: number | null;
  latency: number;
  failed_at_type: string;
  error_backtrace: string[] | string | null;
  at: number | null;
  item: Record<string, unknown>;
}

/** One Sidekiq::ProcessSet entry (processes.rb). */
interface RubyProcessEntry {
  identity: string;
  hostname: string;
  pid: number;
  concurrency: number;
  queues: string[];
  busy: number;
  quiet: string;
  tag: string;
  labels: string[];
  api_queues: string[];
  api_stopping: boolean;
}

/** One job recorded by the Ruby launcher (launcher.rb) or an edgekiq job below. */
interface Ran {
  runner: "ruby" | "edgekiq";
  jid: string;
  class?: string;
  args?: unknown[];
  queue?: string;
  at?: number;
}

const skip = rubySkip() || (!redisAvailable() && "no redis-server and no REDIS_URL");
const SLOW = { timeout: 45_000 };

describe("interop with Ruby Sidekiq 6.4", { skip }, () => {
  let server: TestRedis | null = null;
  let redis: Transport;
  let url: string;
  const workers: Worker[] = [];
  const rubies: RubyProcess[] = [];

  const ruby = <T>(script: string, ...args: string[]) => rubyJson<T>(script, { env: { REDIS_URL: url }, args });
  const launch = async (env: Record<string, string>) => {
    const proc = spawnRuby("launcher", { env: { REDIS_URL: url, ...env }, timeoutMs: 60_000 });
    rubies.push(proc);
    const line = await proc.waitForLine('"ready":true');
    return { proc, identity: (JSON.parse(line) as { identity: string }).identity };
  };
  const worker = (options: Parameters<typeof testWorker>[1]) => {
    const w = testWorker(redis, options);
    workers.push(w);
    return w;
  };
  const ranList = async (key = "ran"): Promise<Ran[]> =>
    ((await redis.call("LRANGE", key, 0, -1)) as string[]).map((r) => JSON.parse(r));

  before(async () => {
    server = await testRedis();
    url = server!.url;
    redis = ioredisTransport({ url });
  });
  after(async () => {
    await Promise.allSettled(workers.map((w) => w.stop()));
    await Promise.allSettled(rubies.map((r) => r.stop()));
    await redis?.close();
    await server?.stop();
  });
  beforeEach(async () => {
    await Promise.allSettled(workers.splice(0).map((w) => w.stop()));
    await Promise.allSettled(rubies.splice(0).map((r) => r.stop()));
    await redis.call("FLUSHDB");
  });

  // 0. (issue 3) Payload smoke test, both directions.
  it("0: Ruby reads edgekiq's jobs (Float times, whole seconds too); edgekiq parses Ruby's", SLOW, async () => {
    const client = createClient({ transport: redis });
    const jid = await client.push("HardJob", ["bob", 5, { nested: [1, "two"] }, null, 1.5]);
    // A push at a whole second: enqueued_at/created_at are whole numbers and
    // must still reach Ruby as Floats ("1700000000.0"), or Sidekiq 8 reads
    // them as milliseconds (1970).
    const realNow = Date.now;
    const wholeMs = Math.floor(realNow() / 1000) * 1000;
    Date.now = () => wholeMs;
    let pushed: Promise<string | null>;
    try {
      pushed = client.push("HardJob", ["whole"], { queue: "whole" });
    } finally {
      Date.now = realNow;
    }
    const wholeJid = await pushed;
    const raw = ((await redis.call("LRANGE", "queue:whole", 0, -1)) as string[])[0];
    assert.match(raw, new RegExp(`"enqueued_at":${wholeMs / 1000}\\.0\\b`), raw);

    const [job] = await ruby<RubyJob[]>("queue_jobs", "default");
    assert.equal(job.class, "HardJob");
    assert.equal(job.display_class, "HardJob");
    assert.deepEqual(job.args, ["bob", 5, { nested: [1, "two"] }, null, 1.5]);
    assert.equal(job.jid, jid);
    assert.equal(job.queue, "default");
    assert.equal(job.item.retry, true);
    assert.equal(job.enqueued_at_type, "Float");
    assert.equal(job.created_at_type, "Float");
    assert.ok(Math.abs(job.enqueued_at! - Date.now() / 1000) < 10, `enqueued_at ${job.enqueued_at}`);
    assert.ok(job.latency >= 0 && job.latency < 10, `Sidekiq::JobRecord#latency ${job.latency}`);

    const [whole] = await ruby<RubyJob[]>("queue_jobs", "whole");
    assert.equal(whole.jid, wholeJid);
    assert.equal(whole.enqueued_at_type, "Float", "a whole-second time reaches Ruby as a Float");
    assert.equal(whole.created_at_type, "Float");
    assert.equal(whole.enqueued_at, wholeMs / 1000);
    assert.ok(Math.abs(whole.enqueued_at! - Date.now() / 1000) < 10);

    // Sidekiq 8's reader (transcribed) puts both formats at the right time.
    await createClient({ transport: redis, timeFormat: "millis" }).push("HardJob", ["ms"], { queue: "whole" });
    const read8 = await ruby<Array<{ jid: string; enqueued_at: number; created_at: number }>>(
      "sidekiq8_times",
      "whole",
    );
    assert.equal(read8.length, 2);
    for (const r of read8) {
      assert.ok(Math.abs(r.enqueued_at - Date.now() / 1000) < 10, `Sidekiq 8 reads ${r.jid} at ${r.enqueued_at}`);
      assert.ok(Math.abs(r.created_at - Date.now() / 1000) < 10);
    }

    // Ruby -> edgekiq.
    const [rubyJid] = await ruby<string[]>(
      "client_push",
      JSON.stringify([{ class: "FromRuby", args: [1, "x", null, true, { a: [2] }], queue: "in" }]),
    );
    const fromRuby = parsePayload((await redis.call("RPOP", "queue:in")) as string);
    assert.equal(fromRuby.class, "FromRuby");
    assert.equal(fromRuby.jid, rubyJid);
    assert.equal(fromRuby.queue, "in");
    assert.deepEqual(fromRuby.args, [1, "x", null, true, { a: [2] }]);
    assert.equal(fromRuby.retry, true);
    assert.ok(Math.abs(toEpochMs(fromRuby.enqueued_at!) - Date.now()) < 10_000);
    assert.ok(Math.abs(toEpochMs(fromRuby.created_at!) - Date.now()) < 10_000);
    assert.deepEqual(await redis.call("SMEMBERS", "queues").then((q) => (q as string[]).sort()), [
      "default",
      "in",
      "whole",
    ]);
  });

  // 1. Ruby pushes, edgekiq runs (scheduled ones through edgekiq's poller).
  it("1: an edgekiq worker runs Ruby's perform_async, perform_in and Client.push jobs", SLOW, async () => {
    const ran: Array<{ jid: string; args: unknown[]; at: number }> = [];
    const RubyMade = defineJob({
      name: "RubyMade",
      perform(ctx, ...args: unknown[]) {
        ran.push({ jid: ctx.jid, args, at: Date.now() });
      },
    });
    const asyncJid = await ruby<string>("perform", "RubyMade", JSON.stringify(["now", 1, { k: "v" }]));
    const inJid = await ruby<string>("perform", "RubyMade", JSON.stringify(["later", 2]), "1");
    const [pushJid] = await ruby<string[]>(
      "client_push",
      JSON.stringify([{ class: "RubyMade", args: ["at", 3], at: Date.now() / 1000 + 0.5 }]),
    );
    assert.equal(await redis.call("ZCARD", "schedule"), 2);
    const scheduled = (await redis.call("ZRANGE", "schedule", 0, -1, "WITHSCORES")) as string[];
    const inScore = Number(scheduled[scheduled.findIndex((raw) => raw.includes(inJid)) + 1]);
    assert.ok(inScore > Date.now() / 1000 - 5, `perform_in scheduled at ${inScore}`);

    const w = worker({ jobs: [RubyMade], poller: true, pollIntervalAverage: 0.2 });
    await w.run();
    await waitFor(() => ran.length === 3, "three jobs", 15_000);
    const byJid = Object.fromEntries(ran.map((r) => [r.jid, r]));
    assert.deepEqual(byJid[asyncJid].args, ["now", 1, { k: "v" }]);
    assert.deepEqual(byJid[inJid].args, ["later", 2]);
    assert.deepEqual(byJid[pushJid].args, ["at", 3]);
    assert.ok(byJid[inJid].at >= inScore * 1000 - 50, "perform_in did not run early");
    assert.equal(await redis.call("ZCARD", "schedule"), 0);
  });

  // 2. edgekiq pushes, Ruby runs (the `in` job promoted by Ruby's poller).
  it("2: a Ruby Sidekiq process runs edgekiq's push and push-in jobs", SLOW, async () => {
    const client = createClient({ transport: redis });
    const now = await client.push("HardJob", ["from ts", 1, { deep: [true] }]);
    const later = await client.push("HardJob", ["in 1s", 2], { in: 1 });
    const critical = await client.push("HardJob", ["critical"], { queue: "critical" });
    const laterScore = Number(
      await redis.call("ZSCORE", "schedule", ((await redis.call("ZRANGE", "schedule", 0, 0)) as string[])[0]),
    );
    const { proc } = await launch({ QUEUES: "critical,default", JOB_CLASSES: "HardJob", RESULT_KEY: "ran" });
    await waitFor(async () => Number(await redis.call("LLEN", "ran")) === 3, "Ruby ran all three", 20_000);
    assert.equal(await proc.stop(), 0, proc.stderr());
    const ran = await ranList();
    const byJid = Object.fromEntries(ran.map((r) => [r.jid, r]));
    const { at: _at, ...first } = byJid[now!];
    assert.deepEqual(first, {
      runner: "ruby",
      jid: now,
      class: "HardJob",
      args: ["from ts", 1, { deep: [true] }],
      queue: "default",
    });
    assert.deepEqual(byJid[later!].args, ["in 1s", 2]);
    assert.ok(byJid[later!].at! >= laterScore - 0.05, "the `in` job did not run early");
    assert.deepEqual(byJid[critical!].queue, "critical");
    assert.equal(await redis.call("ZCARD", "schedule"), 0, "Ruby's poller promoted the `in` job");
    assert.doesNotMatch(proc.stderr(), /ERROR|Exception/, proc.stderr());
  });

  // Issue 27: a batch's jobs carry Sidekiq Pro's `bid`; Sidekiq OSS ignores it.
  it("2b: a Ruby Sidekiq process runs an edgekiq batch's job, `bid` and all, without error", SLOW, async () => {
    const batches = batchJobs();
    const client = createClient({ transport: redis, features: [batches] });
    const batch = batches.open(client, { description: "interop" });
    let jid: string | null = null;
    await batch.add(async (b) => void (jid = await b.push("HardJob", ["in a batch", 3])));
    const raw = ((await redis.call("LRANGE", "queue:default", 0, -1)) as string[])[0];
    assert.equal(JSON.parse(raw).bid, batch.bid, "the job carries its batch id");
    const { proc } = await launch({ QUEUES: "default", JOB_CLASSES: "HardJob", RESULT_KEY: "ran" });
    await waitFor(async () => Number(await redis.call("LLEN", "ran")) === 1, "Ruby ran the batch job", 20_000);
    assert.equal(await proc.stop(), 0, proc.stderr());
    const [ran] = await ranList();
    assert.equal(ran.jid, jid);
    assert.deepEqual(ran.args, ["in a batch", 3]);
    assert.doesNotMatch(proc.stderr(), /ERROR|Exception|WARN/, proc.stderr());
    assert.equal(await redis.call("ZCARD", "retry"), 0);
    assert.equal(await redis.call("ZCARD", "dead"), 0);
  });

  // Issue 26: flow limits leave a plain queue as it was; a grouped job moved to its queue is a plain job to Ruby.
  it(
    "2c: a Ruby Sidekiq process runs plain jobs pushed with flowLimits() and grouped jobs once moved",
    SLOW,
    async () => {
      const limits = flowLimits();
      const client = createClient({ transport: redis, features: [limits] });
      const plain = await client.push("HardJob", ["plain", 1]);
      const grouped = await client.push("HardJob", ["grouped", 2], { group: "acme" });
      assert.equal(await redis.call("LLEN", "queue:default"), 1, "the grouped job waits on its group's list");
      await pollOnce({ client, features: [limits] });
      assert.equal(await redis.call("LLEN", "queue:default"), 2, "moved to the plain queue");
      const { proc } = await launch({ QUEUES: "default", JOB_CLASSES: "HardJob", RESULT_KEY: "ran" });
      await waitFor(async () => Number(await redis.call("LLEN", "ran")) === 2, "Ruby ran both", 20_000);
      assert.equal(await proc.stop(), 0, proc.stderr());
      const ran = Object.fromEntries((await ranList()).map((r) => [r.jid, r.args]));
      assert.deepEqual(ran, { [plain!]: ["plain", 1], [grouped!]: ["grouped", 2] });
      assert.doesNotMatch(proc.stderr(), /ERROR|Exception|WARN/, proc.stderr());
    },
  );

  // 3. Retries: edgekiq writes, Ruby reads and retries; and the other way.
  it("3: Ruby's RetrySet reads edgekiq's retry; retry_all makes edgekiq run it again", SLOW, async () => {
    const attempts: Array<{ retryCount: number; errorClass: unknown }> = [];
    const Flaky = defineJob({
      name: "Flaky",
      backtrace: 5,
      perform(ctx, ..._args: unknown[]) {
        attempts.push({ retryCount: ctx.retryCount, errorClass: ctx.payload.error_class });
        if (attempts.length === 1) throw new RangeError("first attempt fails");
      },
    });
    const jid = await createClient({ transport: redis }).push(Flaky, [7, "x"]);
    const w = worker({ jobs: [Flaky] });
    await w.run();
    await waitFor(async () => Number(await redis.call("ZCARD", "retry")) === 1, "retry entry");

    const [entry] = await ruby<RubyJob[]>("retry_set");
    assert.equal(entry.class, "Flaky");
    assert.deepEqual(entry.args, [7, "x"]);
    assert.equal(entry.jid, jid);
    assert.equal(entry.error_class, "RangeError");
    assert.equal(entry.error_message, "first attempt fails");
    assert.equal(entry.retry_count, 0);
    assert.equal(entry.failed_at_type, "Float");
    const failedAt = entry.item.failed_at as number;
    assert.ok(Math.abs(failedAt - Date.now() / 1000) < 10);
    // First retry: 0**4 + 15 + rand(10) * 1 seconds after the failure.
    const delay = entry.at! - failedAt;
    assert.ok(delay >= 14.9 && delay < 25, `retry scheduled ${delay} s after the failure`);
    assert.ok(Array.isArray(entry.error_backtrace), `Ruby decodes the backtrace: ${entry.error_backtrace}`);
    assert.ok(entry.error_backtrace.length > 0 && entry.error_backtrace.length <= 5);
    assert.deepEqual(entry.error_backtrace, await decompressBacktrace(entry.item.error_backtrace));

    assert.equal(await ruby<number>("retry_all"), 1);
    await waitFor(() => attempts.length === 2, "the retried attempt", 10_000);
    assert.equal(attempts[1].errorClass, "RangeError");
    await waitFor(async () => Number(await redis.call("ZCARD", "retry")) === 0, "retry set empty");
    assert.equal(await redis.call("ZCARD", "dead"), 0);

    await w.stop(); // it does not know RubyFlaky, and would bury it

    // Ruby writes a retry (through its own JobRetry); edgekiq reads and retries it.
    const ran: unknown[][] = [];
    const RubyFlaky = defineJob({
      name: "RubyFlaky",
      perform(_ctx, ...args: unknown[]) {
        ran.push(args);
      },
    });
    const rubyPayload = {
      class: "RubyFlaky",
      args: [1, { a: "b" }],
      queue: "default",
      jid: "0123456789abcdef01234567",
      retry: 3,
    };
    await ruby("job_failure", JSON.stringify(rubyPayload), "ruby says no");
    const retries = new RetrySet(w.client);
    const [rubyEntry] = await retries.page(0, 10);
    assert.equal(rubyEntry.jid, rubyPayload.jid);
    assert.equal(rubyEntry.errorClass, "ArgumentError");
    assert.equal(rubyEntry.errorMessage, "ruby says no");
    assert.equal(rubyEntry.retryCount, 0);
    assert.ok(Math.abs(rubyEntry.failedAt!.getTime() - Date.now()) < 10_000);
    assert.ok(rubyEntry.at.getTime() - Date.now() > 10_000, "Ruby scheduled it >= 15 s ahead");
    const w2 = worker({ jobs: [RubyFlaky] });
    await w2.run();
    await retries.retryAll();
    await waitFor(() => ran.length === 1, "edgekiq ran Ruby's retry");
    assert.deepEqual(ran[0], [1, { a: "b" }]);
  });

  // 4. Dead jobs both ways, compressed backtraces included.
  it("4: Ruby's DeadSet reads edgekiq's dead jobs; edgekiq's DeadSet reads Ruby's", SLOW, async () => {
    function explode(): never {
      throw new TypeError("no hope");
    }
    const Doomed = defineJob({
      name: "Doomed",
      retry: 0,
      backtrace: true,
      perform: (_ctx, ..._args: unknown[]) => explode(),
    });
    const jid = await createClient({ transport: redis }).push(Doomed, ["x", 1]);
    const w = worker({ jobs: [Doomed] });
    await w.run();
    await waitFor(async () => Number(await redis.call("ZCARD", "dead")) === 1, "dead entry");

    const [dead] = await ruby<RubyJob[]>("dead_set");
    assert.equal(dead.jid, jid);
    assert.equal(dead.class, "Doomed");
    assert.deepEqual(dead.args, ["x", 1]);
    assert.equal(dead.error_class, "TypeError");
    assert.equal(dead.error_message, "no hope");
    assert.ok(Math.abs(dead.at! - Date.now() / 1000) < 10, "scored by death time");
    assert.ok(Array.isArray(dead.error_backtrace), `Ruby decodes the backtrace: ${dead.error_backtrace}`);
    assert.ok(dead.error_backtrace.some((l) => l.includes("explode")), dead.error_backtrace.join("\n"));
    assert.deepEqual(dead.error_backtrace, await decompressBacktrace(dead.item.error_backtrace));

    // Ruby's: one through DeadSet#kill, one through Sidekiq's own JobRetry
    // (retry: 0), whose backtrace is Base64.encode64 with line breaks.
    const killed = {
      class: "RubyDead",
      args: [1],
      jid: "aaaaaaaaaaaaaaaaaaaaaaaa",
      queue: "default",
      error_message: "ruby says no",
      custom: { kept: true },
    };
    assert.equal(await ruby("dead_kill", JSON.stringify(killed)), true);
    const failing = {
      class: "RubyDoomed",
      args: ["y"],
      queue: "low",
      jid: "bbbbbbbbbbbbbbbbbbbbbbbb",
      retry: 0,
      backtrace: true,
    };
    assert.equal(await ruby("job_failure", JSON.stringify(failing), "ruby gives up"), true);

    const set = new DeadSet(w.client);
    assert.equal(await set.size(), 3);
    const a = await set.findJob(killed.jid);
    assert.equal(a?.klass, "RubyDead");
    assert.deepEqual(a?.args, [1]);
    assert.equal(a?.errorMessage, "ruby says no");
    assert.deepEqual(a?.get("custom"), { kept: true });
    assert.ok(Math.abs(a!.at.getTime() - Date.now()) < 10_000);
    const b = await set.findJob(failing.jid);
    assert.equal(b?.klass, "RubyDoomed");
    assert.equal(b?.queue, "low");
    assert.equal(b?.errorClass, "ArgumentError");
    assert.equal(b?.errorMessage, "ruby gives up");
    assert.equal(b?.retryCount, 0);
    assert.match(String(b?.get("error_backtrace")), /\n/, "Sidekiq 6.4 writes base64 with line breaks");
    const lines = await decompressBacktrace(b?.get("error_backtrace"));
    assert.ok(lines.some((l) => l.includes("fail_deeply")), lines.join("\n"));

    // edgekiq's retry of Ruby's dead job puts it where Ruby sees it.
    assert.equal(await b!.retry(), true);
    const [requeued] = await ruby<RubyJob[]>("queue_jobs", "low");
    assert.equal(requeued.jid, failing.jid);
    assert.deepEqual(requeued.args, ["y"]);
  });

  // 5. Processes and in-flight work, and remote control from Ruby.
  it("5: Ruby's ProcessSet and Workers see an edgekiq worker; quiet! and stop! reach it", SLOW, async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const Busy = defineJob({
      name: "Busy",
      async perform(_ctx, ..._args: unknown[]) {
        await gate;
      },
    });
    const client = createClient({ transport: redis });
    const jid = await client.push(Busy, [1, "two"]);
    const w = worker({
      jobs: [Busy],
      concurrency: 4,
      queues: ["default,2", "low,1"],
      heartbeatInterval: 0.2,
      tag: "interop",
      labels: ["ts"],
    });
    try {
      await w.run();
      await waitFor(async () => (await redis.call("HGET", w.identity, "busy")) === "1", "a beat with the busy job");

      const procs = await ruby<RubyProcessEntry[]>("processes");
      assert.equal(procs.length, 1);
      const [p] = procs;
      assert.equal(p.identity, w.identity);
      assert.equal(p.hostname, hostname());
      assert.equal(p.pid, process.pid);
      assert.equal(p.concurrency, 4);
      assert.deepEqual(p.queues, ["default", "low"]);
      assert.deepEqual(p.api_queues, ["default", "low"]);
      assert.equal(p.tag, "interop");
      assert.deepEqual(p.labels, ["ts"]);
      assert.equal(p.busy, 1);
      assert.equal(p.api_stopping, false);

      // Sidekiq 8.1 (its ProcessSet and Process readers, transcribed) reads the same heartbeat.
      const [p8] = await ruby<Array<Record<string, unknown>>>("sidekiq8_processes");
      assert.equal(p8.identity, w.identity);
      assert.equal(p8.concurrency, 4, "8.1.2+ reads the `concurrency` hash field");
      assert.equal(p8.busy, 1);
      assert.ok(Math.abs((p8.beat as number) - Date.now() / 1000) < 10);
      assert.deepEqual(p8.queues, ["default", "low"], "8.0.8+ derives queues from info.capsules");
      assert.deepEqual(p8.weights, { default: 2, low: 1 });
      assert.deepEqual(p8.capsules, { default: { concurrency: 4, mode: "weighted", weights: { default: 2, low: 1 } } });
      assert.equal(p8.stopping, false);

      const works = await ruby<Array<{ process: string; tid: string; work: Record<string, unknown> }>>("workers");
      assert.equal(works.length, 1);
      assert.equal(works[0].process, w.identity);
      assert.equal(works[0].work.queue, "default");
      const payload = works[0].work.payload as Record<string, unknown>;
      assert.equal(payload.jid, jid);
      assert.equal(payload.class, "Busy");
      assert.deepEqual(payload.args, [1, "two"]);
      assert.ok(Number.isInteger(works[0].work.run_at));
      assert.ok(Math.abs((works[0].work.run_at as number) - Date.now() / 1000) < 10);

      assert.equal(await ruby("process_signal", w.identity, "quiet"), true);
      await waitFor(async () => (await redis.call("HGET", w.identity, "quiet")) === "true", "quiet from Ruby");
      const [quieted] = await ruby<RubyProcessEntry[]>("processes");
      assert.equal(quieted.api_stopping, true);
      const afterQuiet = await client.push(Busy, [2]);
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(await redis.call("LLEN", "queue:default"), 1, `a quiet worker fetched ${afterQuiet}`);

      release();
      assert.equal(await ruby("process_signal", w.identity, "stop"), true);
      await Promise.race([
        w.stopped,
        new Promise((_, reject) => setTimeout(() => reject(new Error("stop! from Ruby did not stop it")), 10_000)),
      ]);
      assert.deepEqual(await ruby("processes"), []);
    } finally {
      release();
    }
  });

  // 6. Stats written by edgekiq's heartbeat, read by Ruby.
  it("6: Ruby's Stats and Stats::History include edgekiq's counts after a heartbeat", SLOW, async () => {
    const today = new Date().toISOString().slice(0, 10);
    await redis.pipeline([["SET", "stat:processed", 10], ["SET", "stat:failed", 2], [
      "SET",
      `stat:processed:${today}`,
      10,
    ]]);
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
    const w = worker({ jobs: [Ok, Bad], heartbeatInterval: 0.2 });
    await w.run();
    await waitFor(async () => Number(await redis.call("GET", "stat:processed")) === 14, "heartbeat flushed stats");
    const stats = await ruby<{
      processed: number;
      failed: number;
      processes_size: number;
      history_processed: Record<string, number>;
      history_failed: Record<string, number>;
    }>("stats");
    assert.equal(stats.processed, 14);
    assert.equal(stats.failed, 3);
    assert.equal(stats.processes_size, 1);
    assert.deepEqual(stats.history_processed, { [today]: 14 });
    assert.deepEqual(stats.history_failed, { [today]: 1 });
    const history = await new Stats(client).history(1);
    assert.deepEqual(history.processed, stats.history_processed);
    assert.deepEqual(history.failed, stats.history_failed);
  });

  // 7. A mixed fleet on one queue.
  it("7: mixed fleet: Ruby and edgekiq consume one queue at once, every job exactly once", SLOW, async () => {
    const N = 500, SCHEDULED = 50;
    const errors: unknown[] = [];
    const SharedJob = defineJob({
      name: "SharedJob",
      async perform(ctx, _i: number) {
        await new Promise((r) => setTimeout(r, 2));
        await redis.call("RPUSH", "ran", JSON.stringify({ runner: "edgekiq", jid: ctx.jid }));
      },
    });
    const ruby7 = await launch({
      QUEUES: "shared",
      CONCURRENCY: "5",
      JOB_CLASSES: "SharedJob",
      RESULT_KEY: "ran",
      JOB_SLEEP_MS: "2",
      POLL_INTERVAL: "0.3",
    });
    const w = worker({
      jobs: [SharedJob],
      queues: ["shared"],
      concurrency: 5,
      poller: true,
      pollIntervalAverage: 0.3,
      heartbeatInterval: 0.5,
      onError: (error) => errors.push(error),
    });
    await w.run();

    // Both processes see each other (Ruby's first heartbeat runs in a thread, so poll).
    const both = [ruby7.identity, w.identity].sort();
    await waitFor(async () => {
      const seen = (await ruby<RubyProcessEntry[]>("processes")).map((p) => p.identity).sort();
      return JSON.stringify(seen) === JSON.stringify(both);
    }, "Ruby's ProcessSet lists both processes");
    const mine = (await new ProcessSet(w.client).list()).map((p) => p.identity).sort();
    assert.deepEqual(mine, both);

    const client = createClient({ transport: redis });
    const now = await client.pushBulk(SharedJob, Array.from({ length: N - SCHEDULED }, (_, i) => [i]), {
      queue: "shared",
    });
    const later = await client.pushBulk(SharedJob, Array.from({ length: SCHEDULED }, (_, i) => [i]), {
      queue: "shared",
      in: 1,
    });
    await waitFor(async () => Number(await redis.call("LLEN", "ran")) >= N, `${N} jobs`, 30_000);
    await new Promise((r) => setTimeout(r, 500)); // time for any duplicate to show up
    await w.stop();
    assert.equal(await ruby7.proc.stop(), 0, ruby7.proc.stderr());

    const ran = await ranList();
    const jids = ran.map((r) => r.jid);
    assert.equal(ran.length, N, `${ran.length} runs for ${N} jobs`);
    assert.deepEqual(new Set(jids), new Set([...now, ...later]));
    const byRuby = ran.filter((r) => r.runner === "ruby").length;
    assert.ok(byRuby > 0 && byRuby < N, `both sides worked (ruby ${byRuby}, edgekiq ${N - byRuby})`);
    for (const key of ["queue:shared", "schedule", "retry", "dead"]) {
      const n = key.startsWith("queue") ? await redis.call("LLEN", key) : await redis.call("ZCARD", key);
      assert.equal(n, 0, `${key} is empty`);
    }
    assert.deepEqual(errors, []);
    assert.doesNotMatch(ruby7.proc.stderr(), /ERROR|Exception|heartbeat:/, ruby7.proc.stderr());
  });

  // 8. ActiveJob payloads routed by `wrapped`.
  it(
    "8: ActiveJob wrappers pushed as Rails does run the edgekiq job named by `wrapped`, with ActiveJob's arguments",
    SLOW,
    async () => {
      const seen: Array<{ args: unknown[]; class: string; wrapped: unknown; queue: string }> = [];
      const Welcome = defineJob({
        name: "WelcomeMailerJob",
        queue: "mailers",
        perform(ctx, ...args: unknown[]) {
          seen.push({ args, class: ctx.payload.class, wrapped: ctx.payload.wrapped, queue: ctx.queue });
        },
      });
      const serialized = activeJobFixture.serialized;
      const jid = await ruby<string>("activejob_push", "WelcomeMailerJob", JSON.stringify(serialized));
      const laterJid = await ruby<string>(
        "activejob_push",
        "WelcomeMailerJob",
        JSON.stringify(serialized),
        String(Date.now() / 1000 + 0.5),
      );
      const w = worker({
        jobs: [Welcome],
        queues: ["mailers"],
        activeJob: true,
        poller: true,
        pollIntervalAverage: 0.2,
      });
      await w.run();
      await waitFor(() => seen.length === 2, "both wrapped jobs ran", 10_000);
      for (const s of seen) {
        assert.equal(s.class, "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper");
        assert.equal(s.wrapped, "WelcomeMailerJob");
        assert.equal(s.queue, "mailers");
        // ActiveJob's own serialisation undone: a GlobalID as its string, a symbol as a string.
        assert.deepEqual(s.args, ["gid://app/User/42", "ada@example.com", { greeting: "warm" }]);
      }
      assert.notEqual(jid, laterJid);
      assert.equal(await redis.call("ZCARD", "dead"), 0);
    },
  );

  it("edgekiq's ProcessSet and Stats read a genuine Sidekiq 6.4 heartbeat", SLOW, async () => {
    const payload = { class: "RailsJob", args: [1, "a"], queue: "default", jid: "e".repeat(24), retry: true };
    const beat = await ruby<{ identity: string; tid: string; run_at: number; pid: number }>(
      "heartbeat",
      JSON.stringify(payload),
      "default",
    );
    const client = createClient({ transport: redis });
    const [p] = await new ProcessSet(client).list();
    assert.equal(p.identity, beat.identity);
    assert.equal(p.pid, beat.pid);
    assert.equal(p.hostname, hostname());
    assert.equal(p.concurrency, 7);
    assert.deepEqual(p.queues, ["default", "low"]);
    assert.equal(p.tag, "rails-app");
    assert.deepEqual(p.labels, ["ruby"]);
    assert.equal(p.busy, 1);
    assert.equal(p.isQuiet, false);
    assert.ok(Math.abs(p.beat.getTime() - Date.now()) < 10_000);
    const stats = await new Stats(client).fetch();
    assert.equal(stats.processesSize, 1);
    assert.equal(stats.workersSize, 1);
  });

  it(
    "edgekiq's Workers lists a Sidekiq 6.4 process's in-flight job (its `<identity>:workers` hash)",
    SLOW,
    async () => {
      const payload = { class: "RailsJob", args: [1, "a"], queue: "default", jid: "f".repeat(24), retry: true };
      const beat = await ruby<{ identity: string; tid: string; run_at: number }>(
        "heartbeat",
        JSON.stringify(payload),
        "default",
      );
      const work = await new Workers(createClient({ transport: redis })).list();
      assert.equal(work.length, 1, "the Ruby process's running job is listed");
      assert.equal(work[0].process, beat.identity);
      assert.equal(work[0].slot, beat.tid);
      assert.equal(work[0].queue, "default");
      assert.equal(work[0].runAt.getTime(), beat.run_at * 1000);
      assert.equal(work[0].payload.jid, payload.jid);
    },
  );

  it("Workers (edgekiq's API) reads the work hash edgekiq writes for Sidekiq 6 too", SLOW, async () => {
    // Sanity link between 5 and the API: the same heartbeat serves both readers.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const Busy = defineJob({
      name: "Busy",
      async perform() {
        await gate;
      },
    });
    const jid = await createClient({ transport: redis }).push(Busy, []);
    const w = worker({ jobs: [Busy], heartbeatInterval: 0.2 });
    await w.run();
    try {
      await waitFor(async () => (await redis.call("HGET", w.identity, "busy")) === "1", "busy beat");
      const [mine] = await new Workers(w.client).list();
      const [theirs] = await ruby<Array<{ process: string; tid: string; work: { payload: { jid: string } } }>>(
        "workers",
      );
      assert.equal(mine.payload.jid, jid);
      assert.equal(theirs.work.payload.jid, jid);
      assert.equal(theirs.tid, mine.slot);
    } finally {
      release();
    }
  });
});
