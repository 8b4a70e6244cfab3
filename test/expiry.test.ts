/**
 * Expiring jobs (Sidekiq Pro's `expires_in`, issue 29): the client writes an
 * absolute expiry (`expires_at`, epoch seconds) counted from the job's run
 * time; a job fetched after it is dropped before its arguments are checked
 * or `perform` runs, by a worker and by a drain, as `discarded` with the
 * code "expired"; counted per class, logged once per class per interval,
 * and counted apart (`x`) in the execution metrics. A job that started in
 * time runs to the end. Options are checked at definition and at push.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ConfigError,
  createClient,
  createLogger,
  defineJob,
  drain,
  type Feature,
  memoryTransport,
  PayloadError,
  pollOnce,
  type Transport,
} from "../mod.ts";
import { expiringJobs } from "../src/features/mod.ts";
import { Metrics } from "../src/features/mod.ts";
import type { JobOutcome } from "../src/server/worker_feature.ts";
import { matrix, waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const Digest = defineJob({ name: "Digest", expiresIn: 3600, perform: (_ctx, _user: number) => {} });

/** A job as another process pushed it earlier: raw, with its expiry already past. */
function expiredRaw(className: string, jid: string, expiresAt = Date.now() / 1000 - 5): string {
  return JSON.stringify({
    class: className,
    args: [1],
    queue: "default",
    jid,
    retry: true,
    created_at: Date.now() / 1000 - 60,
    enqueued_at: Date.now() / 1000 - 60,
    expires_at: expiresAt,
  });
}

/** A feature recording every outcome. */
function outcomes(): Feature & { seen: JobOutcome[] } {
  const seen: JobOutcome[] = [];
  return { name: "outcomes", seen, observe: (o) => void seen.push(o) };
}

describe("expiring jobs: options", () => {
  it("checks expiresIn at definition, and expiresIn/expiresAt at push", async () => {
    assert.throws(
      () => defineJob({ name: "Bad", expiresIn: -1, perform() {} }),
      (e: unknown) =>
        e instanceof ConfigError && /'expiresIn' must be > 0 seconds.*current value is -1/.test(e.message),
    );
    const client = createClient({ features: [expiringJobs()], transport: memoryTransport() });
    await assert.rejects(
      client.push(Digest, [1], { expiresAt: Date.now() - 1000 }),
      (e: unknown) => e instanceof PayloadError && /'expiresAt' must be in the future/.test(e.message),
    );
    await assert.rejects(
      client.push(Digest, [1], { expiresAt: "tomorrow" as unknown as Date }),
      (e: unknown) => e instanceof PayloadError && /'expiresAt' must be a Date or epoch milliseconds/.test(e.message),
    );
    await assert.rejects(
      client.push(Digest, [1], { extra: { expires_at: 1 } }),
      (e: unknown) => e instanceof Error && /expires_at/.test(e.message),
    );
    assert.throws(() => expiringJobs({ logInterval: 0 }), /'logInterval' must be > 0 seconds/);
  });

  it("a client without the feature refuses a job that expires, naming the feature", async () => {
    const client = createClient({ transport: memoryTransport() });
    await assert.rejects(
      client.push(Digest, [1]),
      (e: unknown) => e instanceof ConfigError && /sets 'expiresIn'.*add expiringJobs\(\)/.test(e.message),
    );
  });
});

for (const target of matrix(["memory", "ioredis"])) {
  describe(`expiring jobs on ${target.name}`, () => {
    let transport: Transport;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
    });

    it("the client writes the expiry from the run time: now, or a scheduled job's time", async () => {
      const client = createClient({ transport, features: [expiringJobs()] });
      const before = Date.now() / 1000;
      await client.push(Digest, [1]);
      await client.push(Digest, [2], { in: 7200 });
      await client.push(Digest, [3], { expiresIn: 60 });
      const at = new Date(Date.now() + 90_000);
      await client.push(Digest, [4], { expiresAt: at });
      const queued = ((await transport.call("LRANGE", "queue:default", 0, -1)) as string[]).map((r) => JSON.parse(r))
        .reverse();
      const [[scheduledRaw]] = [(await transport.call("ZRANGE", "schedule", 0, -1)) as string[]];
      const scheduled = JSON.parse(scheduledRaw);
      const near = (actual: number, want: number) => assert.ok(Math.abs(actual - want) < 5, `${actual} ~ ${want}`);
      near(queued[0].expires_at, before + 3600);
      near(scheduled.expires_at, before + 7200 + 3600); // scheduled two hours ahead: expires in three
      near(queued[1].expires_at, before + 60);
      assert.equal(queued[2].expires_at, at.getTime() / 1000);
    });

    it("a worker drops an expired job before perform: counted, logged once per class, distinct in metrics", async () => {
      const ran: number[] = [];
      const Report = defineJob({ name: "Report", perform: (_ctx, n: number) => void ran.push(n) });
      const Digest2 = defineJob({ name: "Digest", perform: (_ctx, n: number) => void ran.push(100 + n) });
      const lines: string[] = [];
      const logger = createLogger({ json: true, write: (line) => lines.push(line) });
      for (let i = 0; i < 30; i++) await transport.call("LPUSH", "queue:default", expiredRaw("Report", `r${i}`));
      for (let i = 0; i < 3; i++) await transport.call("LPUSH", "queue:default", expiredRaw("Digest", `d${i}`));
      // One still in time: it runs.
      await transport.call("LPUSH", "queue:default", expiredRaw("Report", "fresh", Date.now() / 1000 + 3600));
      const expiry = expiringJobs({ logInterval: 3600 });
      const seen = outcomes();
      const worker = testWorker(transport, {
        jobs: [Report, Digest2],
        features: [expiry, seen],
        logger,
        jobLogging: false,
      });
      await worker.run();
      try {
        await waitFor(() => seen.seen.length === 34, "every job's outcome");
        assert.deepEqual(ran, [1], "only the job still in time ran");
        assert.deepEqual(expiry.counts(), { Report: 30, Digest: 3 });
        const expired = seen.seen.filter((o) => o.code === "expired");
        assert.equal(expired.length, 33);
        assert.ok(expired.every((o) => o.kind === "discarded" && o.ms === 0));
        assert.equal(await transport.call("ZCARD", "retry"), 0);
        assert.equal(await transport.call("ZCARD", "dead"), 0);
        const logged = lines.map((l) => JSON.parse(l)).filter((l) => /expired jobs dropped/.test(l.msg ?? l.message));
        assert.deepEqual(logged.map((l) => [l.class, l.count]), [["Report", 1], ["Digest", 1]], "one line per class");
      } finally {
        await worker.stop();
      }
      // At stop, what was counted but not logged yet is logged once.
      const last = lines.map((l) => JSON.parse(l)).filter((l) => /expired jobs dropped/.test(l.msg ?? l.message));
      assert.deepEqual(last.slice(2).map((l) => [l.class, l.count]), [["Report", 29], ["Digest", 2]]);
      // The execution metrics: an expired job is `x`, not a run.
      const { jobs } = await new Metrics(createClient({ transport })).topJobs({ period: "1h" });
      const report = jobs.find((j) => j.name === "Report")!;
      assert.equal(report.totals.x, 30);
      assert.equal(report.totals.p, 1);
      assert.equal(jobs.find((j) => j.name === "Digest")!.totals.x, 3);
    });

    it("without the feature, the same jobs run (the check is the feature's)", async () => {
      const ran: string[] = [];
      const Report = defineJob({ name: "Report", perform: (ctx, _n: number) => void ran.push(ctx.jid) });
      await transport.call("LPUSH", "queue:default", expiredRaw("Report", "late"));
      const result = await drain({ transport, jobs: [Report], budgetMs: 5000, reserveMs: 0 });
      assert.equal(result.processed, 1);
      assert.deepEqual(ran, ["late"]);
    });

    it("a drain drops expired jobs too; a job that started in time runs to its end", async () => {
      const ran: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const Slow = defineJob({
        name: "Slow",
        async perform(ctx, _n: number) {
          ran.push(`start ${ctx.jid}`);
          await gate;
          ran.push(`end ${ctx.jid}`);
        },
      });
      const expiry = expiringJobs();
      const client = createClient({ transport, features: [expiry] });
      const expiresAt = Date.now() + 400;
      const jid = (await client.push(Slow, [1], { expiresAt }))!;
      await transport.call("LPUSH", "queue:default", expiredRaw("Slow", "gone"));
      const running = drain({ transport, jobs: [Slow], features: [expiry], budgetMs: 10_000, reserveMs: 0 });
      await waitFor(() => ran.includes(`start ${jid}`), "the job in time starts");
      await waitFor(() => Date.now() > expiresAt + 50, "its expiry passes while it runs");
      release();
      const result = await running;
      assert.deepEqual(ran, [`start ${jid}`, `end ${jid}`]);
      assert.equal(result.processed, 2, "the expired one counts as processed (discarded), as in Sidekiq");
      assert.deepEqual(expiry.counts(), { Slow: 1 });
    });

    it("a scheduled job promoted after its expiry is dropped when fetched", async () => {
      const ran: string[] = [];
      const Late = defineJob({ name: "Late", perform: (ctx) => void ran.push(ctx.jid) });
      const expiry = expiringJobs();
      const client = createClient({ transport, features: [expiry] });
      const runAt = Date.now() + 100;
      await client.push(Late, [], { at: new Date(runAt), expiresIn: 0.2 });
      await waitFor(() => Date.now() > runAt + 300, "past its run time and its expiry");
      await pollOnce({ client });
      assert.equal(await transport.call("LLEN", "queue:default"), 1, "promoted");
      const result = await drain({ transport, jobs: [Late], features: [expiry], budgetMs: 5000, reserveMs: 0 });
      assert.equal(result.processed, 1);
      assert.deepEqual(ran, []);
      assert.deepEqual(expiry.counts(), { Late: 1 });
    });
  });
}
