/**
 * Sharded namespaces (`shards: N`): the shards' names and slots, pushes
 * spread over them, a worker and a drain serving all, the snapshot summing
 * them, and features that cannot be split refused. On the memory transport
 * in the cluster layout (the same key names a cluster gets); the real
 * cluster runs are in test/cluster.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, createWorker, defineJob, drain, memoryTransport, silentLogger } from "../mod.ts";
import { Stats } from "../src/api/mod.ts";
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
    const worker = testWorker(transport, { jobs: [Job], keyspace: "cluster", shards: 3, concurrency: 7 });
    const events: string[] = [];
    worker.on("startup", () => events.push("startup"));
    worker.on("exit", () => events.push("exit"));
    await worker.run();
    await waitFor(() => ran.length === 300, "every job of every shard ran");
    assert.deepEqual([...ran].sort((a, b) => a - b), Array.from({ length: 300 }, (_, i) => i));
    const snapshot = await loadSnapshot(client, { processes: true });
    assert.equal(snapshot.stats.processesSize, 3);
    assert.deepEqual(snapshot.processes.map((p) => p.concurrency).sort(), [2, 2, 3]);
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
