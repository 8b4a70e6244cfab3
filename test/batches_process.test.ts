/**
 * Batches across worker processes on a real redis-server (issue 27): 1,000
 * batches of 10 whose jobs finish on a shared clock tick on 4 processes
 * fire 1,000 callbacks, none twice; a batch nested three deep by its own
 * jobs, reopened by a job, with a job that dies and is then retried from the
 * dead set, fires each callback once, in order, and succeeds. Callback runs
 * are counted in ledger files outside Redis.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "../mod.ts";
import { batchJobs } from "../src/features/batches/mod.ts";
import { DeadSet } from "../src/api/mod.ts";
import { BatchSet } from "../src/features/batches/mod.ts";
import { type Child, spawnFixture } from "./support/child.ts";
import { redisAvailable, waitFor } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";

const batches = batchJobs();

describe("batches on worker processes", { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();
  const dir = mkdtempSync(join(tmpdir(), "edgekiq-batches-"));
  let children: Child[] = [];
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function fleet(size: number, concurrency: number): Promise<void> {
    children = Array.from({ length: size }, (_, i) =>
      spawnFixture("batch-worker.ts", {
        EDGEKIQ_TEST_URL: suite.url,
        LEDGER: join(dir, `w${i}-${Date.now()}.ledger`),
        CONCURRENCY: String(concurrency),
      }));
    await Promise.all(children.map((c) => c.waitFor(/ready \S+/, 60_000)));
  }

  async function stop(): Promise<void> {
    for (const child of children) child.signal("SIGTERM");
    await Promise.all(children.map((c) => c.exited));
    children = [];
  }

  /** Every callback run in the ledgers, in the order they ran: [jid, bid, event, tag]. */
  function callbacks(): string[][] {
    const lines = readdirSync(dir).filter((f) => f.endsWith(".ledger")).flatMap((f) =>
      readFileSync(join(dir, f), "utf8").split("\n").filter((l) => l.startsWith("callback ")).map((l) => l.split(" "))
    );
    // Ordered by the time each was written (epoch ms to the µs, the same clock in every process).
    return lines.sort((a, b) => Number(a[1]) - Number(b[1])).map((l) => l.slice(2));
  }

  it("1,000 batches of 10 finishing together on 4 processes: 1,000 callbacks, none twice", async () => {
    await suite.redis.call("FLUSHDB");
    const client = createClient({ transport: suite.redis, features: [batches] });
    const bids: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const batch = batches.open(client, { callbacks: { success: ["Callback", [`b${i}`]] } });
      await batch.add((b) => b.pushBulk("Meet", Array.from({ length: 10 }, () => [50])));
      bids.push(batch.bid);
    }
    await fleet(4, 60);
    try {
      await waitFor(() => callbacks().length >= 1000, "1,000 callbacks", 120_000);
      // Anything fired twice would be on its way by now.
      await waitFor(
        async () => Number(await suite.redis.call("LLEN", "queue:default")) === 0,
        "an empty queue",
        10_000,
      );
    } finally {
      await stop();
    }
    const runs = callbacks();
    const byBid = new Map<string, number>();
    for (const [, bid] of runs) byBid.set(bid, (byBid.get(bid) ?? 0) + 1);
    assert.equal(runs.length, 1000, "one callback run per batch");
    assert.deepEqual([...byBid.values()].filter((n) => n !== 1), [], "no batch's callback twice");
    assert.deepEqual(bids.filter((b) => !byBid.has(b)), [], "every batch's callback");
    const statuses = await new BatchSet(client).page({ count: 100 });
    assert.ok(statuses.every((s) => s.pending === 0 && s.total === 10 && s.succeededAt));
  });

  it("nested three deep by its jobs, reopened by a job, a job dead then retried: each callback once, in order", async () => {
    await suite.redis.call("FLUSHDB");
    rmSync(dir, { recursive: true, force: true });
    const { mkdirSync } = await import("node:fs");
    mkdirSync(dir, { recursive: true });
    const client = createClient({ transport: suite.redis, features: [batches] });
    await suite.redis.call("SET", "doomed:d1", "1");
    const root = batches.open(client, {
      description: "root",
      callbacks: { complete: ["Callback", ["root"]], success: ["Callback", ["root"]], death: ["Callback", ["root"]] },
    });
    await root.add(async (b) => {
      await b.push("Nest", [3]);
      await b.push("Reopen", [25]);
      await b.push("Doomed", ["d1"], { retry: 0 });
    });
    await fleet(2, 10);
    try {
      await waitFor(
        () => callbacks().some(([, , event, tag]) => event === "complete" && tag === "root"),
        "the root to complete (the doomed job dead)",
        60_000,
      );
      const mid = await root.status();
      assert.equal(mid?.failures, 1);
      assert.equal(mid?.succeededAt, undefined);
      assert.equal(await new DeadSet(client).size(), 1);
      await suite.redis.call("DEL", "doomed:d1");
      await new DeadSet(client).retryAll();
      await waitFor(
        () => callbacks().some(([, , event, tag]) => event === "success" && tag === "root"),
        "the root to succeed",
        60_000,
      );
      await waitFor(
        async () => Number(await suite.redis.call("LLEN", "queue:default")) === 0,
        "an empty queue",
        10_000,
      );
    } finally {
      await stop();
    }
    const runs = callbacks().map(([, , event, ...tag]) => `${event} ${tag.join(" ")}`);
    assert.deepEqual(runs.filter((r) => r.startsWith("success level")), [
      "success level 1",
      "success level 2",
      "success level 3",
    ]);
    const root3 = runs.filter((r) => r.endsWith("root"));
    assert.deepEqual([...root3].sort(), ["complete root", "death root", "success root"], "each of root's once");
    assert.equal(root3.at(-1), "success root", "success after the retried job, so after the others");
    const done = await root.status();
    assert.equal(done?.total, 3 + 25 + 1, "Nest, Reopen, Doomed, the 25 reopened jobs, level 3's callback");
    assert.equal(done?.pending, 0);
    assert.equal(done?.failures, 0);
  });
});
