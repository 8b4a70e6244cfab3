/**
 * Cancelling a job by jid (issue 29): `cancelJob(client, jid)` aborts the
 * running job's `ctx.stopping` on whichever process runs it, within one
 * heartbeat, and what it throws then ends it as discarded (not retried);
 * its queued, scheduled and retrying copies are skipped when fetched, by a
 * worker and by a drain; an iterable job sees the same cancel itself (it
 * runs `onCancel`, as Ruby's `cancel!` makes it). Learning of cancels costs
 * no command while nothing is cancelled (the heartbeat's own script reads
 * the set's highest score) and one per worker per new cancel. The CLI's
 * `edgekiq cancel` and the Busy page's Cancel button do the same.
 */
import { after, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  cancelJob,
  createClient,
  defineIterableJob,
  defineJob,
  drain,
  type Feature,
  Interrupt,
  iterateRange,
  type Transport,
  type Worker,
} from "../mod.ts";
import { jobCancellation } from "../src/features/mod.ts";
import { runCli } from "../src/cli/main.ts";
import { keys } from "../src/extend.ts";
import { Heartbeat } from "../src/server/heartbeat.ts";
import { JobCounters } from "../src/server/job_counters.ts";
import type { JobOutcome } from "../src/server/worker_feature.ts";
import { dashboard } from "../src/web/mod.ts";
import { fakeHost } from "./fixtures/cli-host.ts";
import { matrix, waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const same = { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" };

/** A feature recording every outcome. */
function outcomes(): Feature & { seen: JobOutcome[] } {
  const seen: JobOutcome[] = [];
  return { name: "outcomes", seen, observe: (o) => void seen.push(o) };
}

/** Wraps a transport, recording the name of every command and script it sends. */
function spying(target: Transport): { transport: Transport; sent: string[] } {
  const sent: string[] = [];
  const transport = new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === "call") return (c: string, ...a: never[]) => (sent.push(c), t.call(c, ...a));
      if (prop === "pipeline") {
        return (cmds: [string][], o?: never) => (sent.push(...cmds.map((c) => c[0])), t.pipeline(cmds as never, o));
      }
      if (prop === "script") {
        return (s: { name: string }, k: never, a: never) => (sent.push(s.name), t.script(s as never, k, a));
      }
      const value = Reflect.get(t, prop, receiver);
      return typeof value === "function" ? value.bind(t) : value;
    },
  }) as Transport;
  return { transport, sent };
}

/** A job that waits for its `ctx.stopping`, then does what a well-behaved job does: stops where it is. */
function waiter(name: string) {
  const started: string[] = [];
  const reasons: string[] = [];
  const job = defineJob({
    name,
    async perform(ctx) {
      started.push(ctx.jid);
      await new Promise((resolve) => ctx.stopping.addEventListener("abort", resolve, { once: true }));
      reasons.push(`${ctx.jid}: ${(ctx.stopping.reason as Error)?.message}`);
      throw new Interrupt();
    },
  });
  return { job, started, reasons };
}

// Upstash too: over HTTP the heartbeat also carries the poll check, after the watched set's keys.
for (const target of matrix(["memory", "ioredis", "upstash"])) {
  describe(`cancelling jobs on ${target.name}`, () => {
    let transport: Transport;
    const workers: Worker[] = [];
    beforeEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await target.flush();
      transport ??= await target.open();
    });
    after(() => Promise.all(workers.splice(0).map((w) => w.stop())));
    const start = async (worker: Worker) => {
      workers.push(worker);
      await worker.run();
      return worker;
    };

    it("aborts the running job's ctx.stopping on whichever process runs it; it ends discarded, not retried", async () => {
      const w = waiter("Export");
      const seen = outcomes();
      const options = { jobs: [w.job], heartbeatInterval: 0.2, features: [jobCancellation(), seen] };
      await start(testWorker(transport, { ...options, queues: ["a"] }));
      await start(testWorker(transport, { ...options, queues: ["b"] }));
      const client = createClient({ transport });
      const keep = (await client.push(w.job, [], { queue: "a" }))!;
      const cancel = (await client.push(w.job, [], { queue: "b" }))!;
      await waitFor(() => w.started.length === 2, "both running, one on each worker");
      await cancelJob(client, cancel);
      await waitFor(() => seen.seen.length === 1, "the cancelled job's outcome", 10_000);
      assert.deepEqual(w.reasons, [`${cancel}: cancelled (cancelJob)`]);
      assert.equal(seen.seen[0].kind, "discarded");
      assert.equal(seen.seen[0].code, "cancelled");
      assert.equal(seen.seen[0].payload.jid, cancel);
      // Not put back, not retried; the other job runs on.
      assert.equal(await transport.call("LLEN", "queue:b"), 0);
      assert.equal(await transport.call("ZCARD", "retry"), 0);
      assert.ok(!w.reasons.some((r) => r.startsWith(keep)));
      assert.ok(await cancelJob(client, cancel) > 0, "cancelling again is harmless");
    });

    it("without the feature, a cancel does not reach a running job", async () => {
      const w = waiter("Export");
      await start(testWorker(transport, { jobs: [w.job], heartbeatInterval: 0.2 }));
      const jid = (await createClient({ transport }).push(w.job, []))!;
      await waitFor(() => w.started.length === 1, "running");
      await cancelJob(createClient({ transport }), jid);
      await assert.rejects(waitFor(() => w.reasons.length > 0, "a stop", 1_500));
    });

    it("skips queued, scheduled and retrying copies when fetched, in a worker and in a drain", async () => {
      const ran: string[] = [];
      const Work = defineJob({ name: "Work", perform: (ctx, _n: number) => void ran.push(ctx.jid) });
      const client = createClient({ transport });
      const raw = (jid: string) => JSON.stringify({ class: "Work", args: [1], queue: "default", jid, retry: true });
      await cancelJob(client, "gone0000000000000000000a");
      await transport.call("LPUSH", "queue:default", raw("gone0000000000000000000a"));
      await transport.call("LPUSH", "queue:default", raw("gone0000000000000000000a"));
      await transport.call("LPUSH", "queue:default", raw("kept0000000000000000000a"));
      const seen = outcomes();
      const result = await drain({ transport, jobs: [Work], features: [jobCancellation(), seen], budgetMs: 5000 });
      assert.deepEqual(ran, ["kept0000000000000000000a"]);
      assert.equal(result.processed, 3);
      assert.deepEqual(seen.seen.filter((o) => o.code === "cancelled").length, 2);

      // A scheduled copy and a retrying one, promoted, then fetched by a worker.
      await transport.call("ZADD", "schedule", Date.now() / 1000 - 1, raw("gone0000000000000000000a"));
      await transport.call("ZADD", "retry", Date.now() / 1000 - 1, raw("gone0000000000000000000a"));
      const worker = await start(testWorker(transport, { jobs: [Work], features: [jobCancellation(), seen] }));
      await worker.poll();
      await waitFor(() => seen.seen.length === 5, "both fetched");
      assert.deepEqual(ran, ["kept0000000000000000000a"]);
      assert.equal(await transport.call("ZCARD", "retry"), 0);
    });

    it("an iterable job sees the cancel itself: with the feature it stops at an item and runs onCancel", async () => {
      const hooks: string[] = [];
      const Backfill = defineIterableJob({
        name: "Backfill",
        each: (_ctx, cursor: number | null) => iterateRange({ from: 0, to: 1_000_000 }, cursor),
        flushInterval: 3600, // its own flush would not see the cancel in this test: the heartbeat must
        perItem: () => new Promise((r) => setTimeout(r, 5)),
        onStart: () => void hooks.push("start"),
        onCancel: () => void hooks.push("cancel"),
        onComplete: () => void hooks.push("complete"),
      });
      const client = createClient({ transport });
      const worker = await start(
        testWorker(transport, { jobs: [Backfill], heartbeatInterval: 0.2, features: [jobCancellation()] }),
      );
      const jid = (await Backfill.performAsync(client))!;
      await waitFor(() => hooks.length === 1, "started");
      await cancelJob(client, jid);
      await waitFor(() => hooks.length === 3, "cancelled through ctx.stopping, within a beat", 10_000);
      assert.deepEqual(hooks, ["start", "cancel", "complete"]);
      // A queued iterable copy is not skipped unseen: it starts and runs its hooks.
      await worker.stop();
      hooks.length = 0;
      const queued = (await Backfill.performAsync(client))!;
      await cancelJob(client, queued);
      const result = await drain({ transport, jobs: [Backfill], features: [jobCancellation()], budgetMs: 5000 });
      assert.equal(result.processed, 1);
      assert.ok(hooks.includes("cancel"), hooks.join(" "));
    });

    it("costs no command while nothing is cancelled, and one per worker per new cancel", async () => {
      const w = waiter("Export");
      const spy = spying(transport);
      const worker = await start(
        testWorker(spy.transport, { jobs: [w.job], heartbeatInterval: 0.1, features: [jobCancellation()] }),
      );
      const beats = () => spy.sent.filter((c) => c === "heartbeat").length;
      const reads = () => spy.sent.filter((c) => c === "ZRANGEBYSCORE").length;
      await waitFor(() => beats() >= 2, "two beats");
      const before = reads(); // the first fetch may read once (the copy was never loaded)
      assert.ok(before <= 1, `${before} reads at start`);
      const at = beats();
      await waitFor(() => beats() >= at + 10, "ten more beats");
      assert.equal(reads(), before, "no command of its own while nothing is cancelled");
      const jid = (await createClient({ transport }).push(w.job, []))!;
      await waitFor(() => w.started.length === 1, "running");
      await cancelJob(createClient({ transport }), jid);
      await waitFor(() => w.reasons.length === 1, "stopped");
      const after = beats();
      await waitFor(() => beats() >= after + 10, "ten more beats");
      assert.equal(reads(), before + 1, "one read for the one cancel");
      await worker.stop();
    });

    it("edgekiq cancel <jid> and the Busy page's Cancel button cancel a job, once confirmed and once per form", async () => {
      const w = waiter("Export");
      await start(testWorker(transport, { jobs: [w.job], heartbeatInterval: 0.2, features: [jobCancellation()] }));
      const client = createClient({ transport });
      const [first, second] = [(await client.push(w.job, []))!, (await client.push(w.job, []))!];
      await waitFor(() => w.started.length === 2, "running");

      const run = fakeHost(["cancel", first], { transport });
      assert.equal(await runCli(run.host), 0, run.err.join("\n"));
      assert.match(run.out.join("\n"), new RegExp(`cancelled job ${first} \\(first cancelled at `));
      await waitFor(() => w.reasons.length === 1, "the CLI's cancel reached it", 10_000);

      const app = new Hono().route(
        "/admin/jobs",
        dashboard({ transport, auth: () => true, features: [jobCancellation()] }),
      );
      const plain = new Hono().route("/admin/jobs", dashboard({ transport, auth: () => true }));
      await waitFor(async () => (await (await app.request("/admin/jobs/busy")).text()).includes(second), "on Busy");
      assert.doesNotMatch(
        await (await plain.request("/admin/jobs/busy")).text(),
        /busy\/cancel/,
        "no feature: no button",
      );
      const page = await (await app.request("/admin/jobs/busy")).text();
      const row = [...page.matchAll(/<tr>(.*?)<\/tr>/gs)].map((m) => m[1]).find((r) => r.includes(second))!;
      assert.match(row, /action="\/admin\/jobs\/busy\/cancel"/);
      assert.match(row, /data-confirm="Cancel Export [0-9a-f]{24}\? Its ctx.stopping aborts/);
      const token = /name="token" value="([\w-]{22})"/.exec(row)![1];
      const post = (fields: Record<string, string>) =>
        app.request("/admin/jobs/busy/cancel", { method: "POST", headers: same, body: new URLSearchParams(fields) });
      const ask = await post({ action: "cancel", jid: second, token, confirm: "" });
      assert.match(await ask.text(), /Are you sure\?.*Cancel job [0-9a-f]{24}\?/s);
      assert.equal(await transport.call("ZSCORE", "edgekiq:cancelled", second), null, "nothing until confirmed");
      const done = await post({ action: "cancel", jid: second, token, confirm: "1" });
      assert.match(done.headers.get("location")!, /\/admin\/jobs\/busy\?notice=job-cancelled&n=1$/);
      await waitFor(() => w.reasons.length === 2, "the button's cancel reached it", 10_000);
      const replay = await post({ action: "cancel", jid: "another000000000000000aa", token, confirm: "1" });
      assert.match(replay.headers.get("location")!, /notice=already-done/);
      assert.equal(await transport.call("ZSCORE", "edgekiq:cancelled", "another000000000000000aa"), null);
    });

    it("the Busy page marks a cancelled job that has not stopped yet as stopping", async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const Stubborn = defineJob({ name: "Stubborn", perform: () => gate }); // ignores ctx.stopping
      await start(testWorker(transport, { jobs: [Stubborn], heartbeatInterval: 0.1, features: [jobCancellation()] }));
      const jid = (await createClient({ transport }).push(Stubborn, []))!;
      const app = new Hono().route("/admin/jobs", dashboard({ transport, auth: () => true }));
      const row = async () => {
        const page = await (await app.request("/admin/jobs/busy")).text();
        return [...page.matchAll(/<tr>(.*?)<\/tr>/gs)].map((m) => m[1]).find((r) => r.includes(jid)) ?? "";
      };
      await waitFor(async () => (await row()) !== "", "on the Busy page");
      assert.doesNotMatch(await row(), /stopping/);
      await cancelJob(createClient({ transport }), jid);
      await waitFor(
        async () => /<span class="status quiet" title="cancelled \(cancelJob\)">stopping<\/span>/.test(await row()),
        "marked",
      );
      release();
    });

    it("the heartbeat reads the watched set's highest score in its own script, beside the poll check", async () => {
      const info = {
        hostname: "h",
        started_at: 0,
        pid: 1,
        tag: "",
        concurrency: 1,
        queues: ["default"],
        weights: [],
        capsules: {},
        labels: [],
        identity: "h:1:abc",
        version: "0",
        embedded: false,
      };
      const beat = (options: { watch?: string[]; pollCheck?: string[] }) =>
        new Heartbeat({
          transport,
          keys: keys(),
          info,
          capsules: [],
          stats: new JobCounters(),
          ttl: 60,
          rss: () => undefined,
          quiet: () => false,
          ...options,
        }).beat();
      const client = createClient({ transport });
      await transport.call("ZADD", "retry", 1, "due");
      assert.deepEqual((await beat({ watch: ["edgekiq:cancelled"] })).watched, [null], "no set: null");
      await cancelJob(client, "a00000000000000000000000");
      await cancelJob(client, "b00000000000000000000000");
      const top = Number(await transport.call("ZSCORE", "edgekiq:cancelled", "b00000000000000000000000"));
      await transport.call("SADD", "a-set", "x");
      const both = await beat({ watch: ["edgekiq:cancelled", "a-set"], pollCheck: [] });
      assert.deepEqual(both.watched, [top, null], "the highest score; a key of another type reads as empty");
      assert.equal(both.check?.retryDue, true, "the poll check still reads its own keys after the watched ones");
      assert.deepEqual((await beat({})).watched, []);
    });

    it("one cancel writes Ruby's iterable field and the cancelled set, keeping the first time", async () => {
      const client = createClient({ transport });
      const at = await cancelJob(client, "0a1b2c3d4e5f60718293a4b5");
      assert.equal(await transport.call("HGET", "it-0a1b2c3d4e5f60718293a4b5", "cancelled"), String(at));
      const ttl = Number(await transport.call("TTL", "it-0a1b2c3d4e5f60718293a4b5"));
      assert.ok(ttl > 29 * 86_400 && ttl <= 30 * 86_400, `${ttl}`);
      const score = Number(await transport.call("ZSCORE", "edgekiq:cancelled", "0a1b2c3d4e5f60718293a4b5"));
      await cancelJob(client, "ffffffffffffffffffffffff");
      const later = Number(await transport.call("ZSCORE", "edgekiq:cancelled", "ffffffffffffffffffffffff"));
      assert.ok(later > score, "each cancel scores above every earlier one");
      assert.equal(await cancelJob(client, "0a1b2c3d4e5f60718293a4b5"), at);
      assert.equal(
        Number(await transport.call("ZSCORE", "edgekiq:cancelled", "0a1b2c3d4e5f60718293a4b5")),
        score,
        "a second cancel changes nothing",
      );
    });
  });
}
