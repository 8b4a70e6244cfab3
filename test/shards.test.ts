/**
 * Sharded namespaces (`shards: N`): the shards' names and slots, pushes
 * spread over them, a worker and a drain serving all, the snapshot summing
 * them, and features that cannot be split refused. On the memory transport
 * in the cluster layout (the same key names a cluster gets); the real
 * cluster runs are in test/cluster.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, createLogger, createWorker, defineJob, drain, memoryTransport, silentLogger } from "../mod.ts";
import { DeadSet, ProcessSet, Queue, RetrySet, ScheduledSet, Stats } from "../src/api/mod.ts";
import { dashboard } from "../src/web/mod.ts";
import { loadSnapshot } from "../src/api/snapshot.ts";
import { ConfigError } from "../src/errors.ts";
import { keySlot } from "../src/key_slot.ts";
import { MAX_SHARDS, shardCount, shardNamespaces } from "../src/shards.ts";
import { splitSlots } from "../src/server/sharded_worker.ts";
import { uniqueJobs } from "../src/features/unique/mod.ts";
import { expiringJobs } from "../src/features/expiry/mod.ts";
import { waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const Noop = defineJob({ name: "Noop", perform(_ctx, _n: number) {} });

describe("shard names", () => {
  it("shard 0 is the namespace itself; the others take one arc each of the slot ring", () => {
    for (const [namespace, count] of [["", 3], ["orders", 12], ["x", 64]] as const) {
      const names = shardNamespaces(namespace, count);
      assert.equal(names.length, count);
      assert.equal(names[0], namespace || "edgekiq");
      assert.equal(new Set(names).size, count, "every shard its own namespace");
      // One shard in each of `count` equal arcs of the slot ring.
      const arcs = names.map((name) => Math.floor((keySlot(`{${name}}`) * count) / 16384));
      assert.equal(new Set(arcs).size, count, `arcs ${arcs}`);
      assert.deepEqual(shardNamespaces(namespace, count), names, "the same names every time");
    }
    // Three shards on a cluster split in thirds: one per primary wherever shard 0 lands.
    const slots = shardNamespaces("", 3).map((n) => keySlot(`{${n}}`));
    const thirds = slots.map((s) => Math.floor(s / (16384 / 3)));
    assert.equal(new Set(thirds).size, 3, `slots ${slots} are in three different thirds`);
  });

  it("refuses a bad count, and shards in Sidekiq's layout", () => {
    assert.equal(shardCount(undefined, "sidekiq", "x"), 1);
    assert.equal(shardCount(8, "cluster", "x"), 8);
    for (const bad of [0, -1, 1.5, MAX_SHARDS + 1, "4"]) {
      assert.throws(
        () => shardCount(bad, "cluster", "create client"),
        (e: Error) => e instanceof ConfigError && /'shards' must be a whole number from 1 to 256/.test(e.message),
      );
    }
    assert.throws(
      () => createClient({ transport: memoryTransport(), shards: 4 }),
      /'shards' needs the cluster key layout .*current layout is "sidekiq"/,
    );
  });

  it("splits a capsule's slots evenly", () => {
    assert.deepEqual(splitSlots(10, 4), [3, 3, 2, 2]);
    assert.deepEqual(splitSlots(4, 4), [1, 1, 1, 1]);
  });
});

describe("a sharded client", () => {
  it("spreads pushes over the shards in turn, a bulk push batch by batch, order kept within each", async () => {
    const transport = memoryTransport();
    const client = createClient({ transport, keyspace: "cluster", shards: 4 });
    const jids = await client.pushBulk(Noop, Array.from({ length: 1000 }, (_, i) => [i]), { batchSize: 50 });
    assert.equal(jids.length, 1000);
    const shards = client.shards;
    assert.equal(shards.length, 4);
    assert.deepEqual(shards.map((s) => s.keys.prefix), shardNamespaces("", 4).map((n) => `{${n}}`));
    const lengths = await Promise.all(shards.map((s) => transport.call("LLEN", s.keys.queue("default"))));
    assert.deepEqual(lengths.map(Number), [250, 250, 250, 250]);
    for (const shard of shards) {
      // Oldest at the tail (RPOP end): within a shard, in push order.
      const raw = (await transport.call("LRANGE", shard.keys.queue("default"), 0, -1)) as string[];
      const ns = raw.reverse().map((p) => JSON.parse(p).args[0] as number);
      assert.deepEqual(ns, [...ns].sort((a, b) => a - b));
      assert.ok(await transport.call("SISMEMBER", shard.keys.queues, "default"));
    }
    // Single pushes and scheduled ones go round too.
    for (let i = 0; i < 8; i++) await client.push(Noop, [i], { in: 60 });
    const scheduled = await Promise.all(shards.map((s) => transport.call("ZCARD", s.keys.schedule)));
    assert.deepEqual(scheduled.map(Number), [2, 2, 2, 2]);
    const stats = await new Stats(client).fetch();
    assert.equal(stats.enqueued, 1000);
    assert.equal(stats.scheduledSize, 8);
    assert.deepEqual(stats.queues, { default: 1000 });
  });

  it("refuses features that keep state across the namespace, by name, and takes those that do not", () => {
    const transport = memoryTransport();
    assert.throws(
      () => createClient({ transport, keyspace: "cluster", shards: 2, features: [uniqueJobs()] }),
      (e: Error) =>
        e instanceof ConfigError &&
        /'shards' is 2 and the feature 'unique' keeps state that must be one across the namespace/.test(e.message),
    );
    createClient({ transport, keyspace: "cluster", shards: 2, features: [expiringJobs()] });
    assert.throws(
      () => createWorker({ transport, jobs: [Noop], keyspace: "cluster", shards: 2, metrics: true }),
      /feature 'metrics'/,
    );
    assert.throws(
      () =>
        createWorker({
          transport,
          jobs: [Noop],
          keyspace: "cluster",
          shards: 2,
          periodic: [{ every: 60, job: Noop, args: [1] }],
        }),
      /feature 'periodic'/,
    );
  });

  it("one shard is the unsharded namespace: what was there stays reachable", async () => {
    const transport = memoryTransport();
    await createClient({ transport, keyspace: "cluster" }).push(Noop, [1]);
    const sharded = createClient({ transport, keyspace: "cluster", shards: 3 });
    assert.equal(sharded.shards[0].keys.queue("default"), "{edgekiq}:queue:default");
    assert.equal((await new Stats(sharded).fetch()).enqueued, 1);
  });
});

describe("a sharded worker", () => {
  it("serves every shard with an equal share of its slots, one process entry each, and stops as one", async () => {
    const transport = memoryTransport();
    const ran: number[] = [];
    const Job = defineJob({ name: "Job", perform: (_ctx, n: number) => void ran.push(n) });
    const client = createClient({ transport, keyspace: "cluster", shards: 3 });
    await client.pushBulk(Job, Array.from({ length: 300 }, (_, i) => [i]), { batchSize: 10 });
    assert.throws(
      () => testWorker(transport, { jobs: [Job], keyspace: "cluster", shards: 3, concurrency: 2 }),
      /capsule 'default' needs at least one slot per shard \('shards' is 3\): its concurrency is 2/,
    );
    const lines: string[] = [];
    const logger = createLogger({ json: true, write: (line) => void lines.push(line) });
    const worker = testWorker(transport, { jobs: [Job], keyspace: "cluster", shards: 3, concurrency: 7, logger });
    const events: string[] = [];
    worker.on("startup", () => events.push("startup"));
    worker.on("exit", () => events.push("exit"));
    await worker.run();
    await waitFor(() => ran.length === 300, "every job of every shard ran");
    assert.deepEqual([...ran].sort((a, b) => a - b), Array.from({ length: 300 }, (_, i) => i));
    const snapshot = await loadSnapshot(client, { processes: true });
    assert.equal(snapshot.stats.processesSize, 3);
    assert.deepEqual(snapshot.processes.map((p) => p.concurrency).sort(), [2, 2, 3]);
    assert.deepEqual(snapshot.processes.map((p) => p.labels.at(-1)).sort(), ["shard 0/3", "shard 1/3", "shard 2/3"]);
    // One OS process, one RSS: only shard 0's entry reports it, so the Busy page's total counts it once.
    assert.deepEqual(snapshot.processes.filter((p) => p.rss > 0).map((p) => p.labels.at(-1)), ["shard 0/3"]);
    await worker.flushStats();
    assert.equal((await new Stats(client).fetch()).processed, 300);
    const today = new Date().toISOString().slice(0, 10);
    assert.equal((await new Stats(client).history(1)).processed[today], 300);
    // A quiet of one shard's process (the dashboard's button) quiets the whole worker.
    const [one] = snapshot.processes;
    await one.quiet();
    await worker.beat();
    await waitFor(() => worker.running().length === 0, "quiet");
    await worker.stop();
    await worker.stopped;
    assert.deepEqual(events, ["startup", "exit"]);
    // Each shard's lines say which shard wrote them.
    const started = lines.map((l) => JSON.parse(l)).filter((l) => /worker started/.test(l.msg ?? l.message ?? ""));
    assert.deepEqual(started.map((l) => l.shard).sort(), ["0/3", "1/3", "2/3"]);
    assert.equal((await new Stats(client).fetch()).processesSize, 0, "every shard's entry removed");
    await new Stats(client).reset();
    assert.equal((await new Stats(client).fetch()).processed, 0, "every shard's counter reset");
  });

  it("drain() drains every shard within one budget", async () => {
    const transport = memoryTransport();
    const ran: number[] = [];
    const Job = defineJob({ name: "Job", perform: (_ctx, n: number) => void ran.push(n) });
    const client = createClient({ transport, keyspace: "cluster", shards: 4 });
    await client.pushBulk(Job, Array.from({ length: 200 }, (_, i) => [i]), { batchSize: 25 });
    const result = await drain({
      transport,
      jobs: [Job],
      budgetMs: 10_000,
      keyspace: "cluster",
      shards: 4,
      logger: silentLogger,
    });
    assert.equal(result.processed, 200);
    assert.equal(result.remaining, 0);
    assert.equal(ran.length, 200);
    assert.ok(result.commands > 0 && result.commandsPerJob < 1, `${result.commandsPerJob} commands per job`);
  });
});

describe("the admin API and the dashboard on a sharded namespace", () => {
  /** Four shards, each holding retries, scheduled jobs and waiting jobs: `n` of each per shard. */
  async function seeded(n: number) {
    const transport = memoryTransport();
    const client = createClient({ transport, keyspace: "cluster", shards: 4 });
    const now = Date.now() / 1000;
    let i = 0;
    for (const shard of client.shards) {
      for (let j = 0; j < n; j++, i++) {
        const job = JSON.stringify({ class: "Noop", args: [i], jid: `jid${String(i).padStart(21, "0")}`, queue: "q" });
        // Scores interleave across shards: a merged page is not one shard's.
        await transport.call("ZADD", shard.keys.retry, now + 100 + j * 4 + client.shards.indexOf(shard), job);
      }
      await createClient({ transport, prefix: shard.keys.prefix.slice(1, -1), keyspace: "cluster" })
        .pushBulk(Noop, Array.from({ length: n }, (_, j) => [j]), { queue: "q" });
    }
    return { transport, client };
  }

  it("job sets: sizes summed, pages merged by score, scans over every shard, entries acted on in their shard", async () => {
    const { client } = await seeded(5);
    const retries = new RetrySet(client);
    assert.equal(await retries.size(), 20);
    const all = await retries.page(0, 20);
    assert.deepEqual(all.map((e) => e.score), [...all.map((e) => e.score)].sort((a, b) => a - b));
    const second = await retries.page(5, 5);
    assert.deepEqual(second.map((e) => e.jid), all.slice(5, 10).map((e) => e.jid), "a page is a slice of the merge");
    const newest = await retries.page(0, 3, { reverse: true });
    assert.deepEqual(newest.map((e) => e.jid), all.slice(-3).reverse().map((e) => e.jid));
    // A scan a step at a time reaches every shard; the cursor names the shard.
    const seen = new Set<string>();
    let cursor = "0";
    do {
      const step = await retries.scanStep("Noop", cursor, 100);
      for (const e of step.entries) seen.add(e.value);
      cursor = step.cursor;
    } while (cursor !== "0");
    assert.equal(seen.size, 20);
    assert.equal((await retries.findJob(all[13].jid!))?.jid, all[13].jid);
    const picked = await retries.entriesAt([all[0], all[7], all[19]].map((e) => ({ score: e.score, jid: e.jid! })));
    assert.equal(picked.length, 3);
    // Killed where each was read: each shard's dead set gets its own (through another instance of the set too).
    assert.deepEqual(await new RetrySet(client).killEntries(picked), [true, true, true]);
    assert.equal(await new DeadSet(client).size(), 3);
    assert.equal(await retries.removeEntries(await retries.page(0, 2)), 2);
    assert.equal(await retries.retryAll(), 15);
    assert.equal(await retries.size(), 0);
    assert.equal(await new Queue(client, "q").size(), 20 + 15);
    await new ScheduledSet(client).clear();
    await new DeadSet(client).clear();
    assert.equal(await new DeadSet(client).size(), 0);
  });

  it("queues: one name over every shard, sizes summed, paged shard by shard, paused and cleared in all", async () => {
    const { transport, client } = await seeded(3);
    assert.deepEqual((await Queue.all(client)).map((q) => q.name), ["q"]);
    const q = new Queue(client, "q");
    assert.equal(await q.size(), 12);
    const pages = [...await q.page(0, 5), ...await q.page(5, 5), ...await q.page(10, 5)];
    assert.equal(pages.length, 12);
    assert.equal(new Set(pages.map((r) => r.value)).size, 12, "every job once, none skipped");
    let walked = 0;
    for await (const _ of q) walked++;
    assert.equal(walked, 12);
    assert.equal(await q.delete(pages[7]), true);
    assert.equal(await q.size(), 11);
    assert.equal(await q.pause(), true);
    for (const shard of client.shards) assert.ok(await transport.call("SISMEMBER", shard.keys.paused, "q"));
    assert.deepEqual(await Queue.paused(client), ["q"]);
    assert.equal(await q.resume(), true);
    assert.equal(await q.isPaused(), false);
    await q.clear();
    assert.equal(await q.size(), 0);
  });

  it("the dashboard counts every shard, lists every shard's retries and acts on them", async () => {
    const { transport, client } = await seeded(2);
    const app = dashboard({ transport, keyspace: "cluster", shards: 4, auth: () => true });
    const home = await (await app.request("/stats")).json() as { sidekiq: Record<string, number> };
    assert.equal(home.sidekiq.retries, 8);
    assert.equal(home.sidekiq.enqueued, 8);
    const html = await (await app.request("/retries")).text();
    const jids = (await new RetrySet(client).page(0, 8)).map((e) => e.jid);
    for (const jid of jids) assert.ok(html.includes(jid!), `${jid} listed`);
    const queue = await (await app.request("/queues/q")).text();
    for (const job of await new Queue(client, "q").page(0, 8)) assert.ok(queue.includes(job.jid!), `${job.jid} listed`);
    // Processes of every shard on the Busy page's count.
    const worker = testWorker(transport, { jobs: [Noop], keyspace: "cluster", shards: 4, concurrency: 4 });
    await worker.run();
    assert.equal((await new ProcessSet(client).list()).length, 4);
    await worker.stop();
  });
});
