/**
 * The engine, client, admin API and dashboard on a real six-node Redis
 * Cluster through the cluster transport, in the cluster key layout: jobs run,
 * retry, die, get scheduled and promoted; the API and the dashboard read
 * them; and every script and MULTI stays in one slot (Redis Cluster itself
 * refuses anything else with CROSSSLOT).
 */
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { Redis } from "ioredis";
import { createClient, defineJob, memoryTransport, type Transport, type Worker } from "../mod.ts";
import { DeadSet, ProcessSet, Queue, RetrySet, ScheduledSet, Stats } from "../src/api/mod.ts";
import { Client } from "../src/client.ts";
import { ConfigError } from "../src/errors.ts";
import { keys } from "../src/keys.ts";
import { keySlot } from "../src/key_slot.ts";
import { clusterTransport } from "../src/transport/adapters/cluster/cluster_transport.ts";
import { dashboard } from "../src/web/mod.ts";
import { uniqueJobs } from "../src/features/unique/mod.ts";
import { clusterAvailable, killNode, startCluster, type TestCluster } from "./support/cluster.ts";
import { waitFor } from "./support/matrix.ts";
import { spawnCli } from "./fixtures/cli-spawn.ts";
import { testWorker } from "./support/worker.ts";

describe("edgekiq on a Redis Cluster", () => {
  let cluster: TestCluster | undefined;
  let t: Transport;
  let worker: Worker | undefined;
  before(async () => {
    if (!clusterAvailable()) return;
    cluster = await startCluster();
    t = clusterTransport({ nodes: cluster.seeds });
  });
  beforeEach(async () => {
    await worker?.stop();
    worker = undefined;
    await cluster?.flush();
  });
  after(async () => {
    await worker?.stop();
    await t?.close();
    await cluster?.stop();
  });
  const test = (title: string, fn: () => void | Promise<void>) =>
    it(title, async () => {
      if (!cluster) return; // no redis-server/redis-cli: one loud SKIP line was printed
      await fn();
    });

  test("uses the cluster layout on a cluster transport, and refuses Sidekiq's there", () => {
    const client = createClient({ transport: t });
    assert.equal(client.keys.keyspace, "cluster");
    assert.equal(client.keys.queue("default"), "{edgekiq}:queue:default");
    assert.equal(new Client({ transport: t, prefix: "app" }).keys.retry, "{app}:retry");
    assert.throws(() => new Client({ transport: t, keyspace: "sidekiq" }), ConfigError);
    assert.throws(() => new Client({ transport: t, prefix: "{x}" }), /must not contain \{ or \}/);
    assert.throws(() => new Client({ transport: t, keyspace: "shards" as "cluster" }), /'keyspace' must be/);
  });

  test("runs, retries, schedules and buries jobs; the API and dashboard read them", async () => {
    const ran: number[] = [];
    const failures = new Map<number, number>();
    const Work = defineJob({
      name: "Work",
      retry: 1,
      retryIn: () => 0.1,
      perform(_ctx, n: number) {
        // n < 0: fails twice (once on its run, once on its retry) and dies; n % 10 === 1: fails once.
        const seen = failures.get(n) ?? 0;
        if (n < 0 || (n % 10 === 1 && seen === 0)) {
          failures.set(n, seen + 1);
          throw new Error(`boom ${n}`);
        }
        ran.push(n);
      },
    });
    const client = createClient({ transport: t });
    await client.pushBulk(Work, Array.from({ length: 200 }, (_, i) => [i]));
    await client.push(Work, [-1]);
    await client.push(Work, [1000], { in: 0.3 });
    await client.push(Work, [2000], { queue: "critical" });
    const scheduled = new ScheduledSet(client);
    assert.equal(await scheduled.size(), 1);
    assert.equal(await new Queue(client, "default").size(), 201);

    worker = testWorker(t, { jobs: [Work], queues: ["critical", "default"], concurrency: 8, poller: true });
    await worker.run();
    await waitFor(() => ran.length === 202, "every job but the dying one ran", 20_000);
    await waitFor(async () => (await new DeadSet(client).size()) === 1, "the failing job dead", 20_000);
    assert.deepEqual([...ran].sort((a, b) => a - b), [...Array.from({ length: 200 }, (_, i) => i), 1000, 2000]);
    assert.equal(await new RetrySet(client).size(), 0);
    assert.equal(await scheduled.size(), 0);
    const [dead] = await new DeadSet(client).page(0, 1);
    assert.deepEqual(dead.args, [-1]);

    const stats = await new Stats(client).fetch();
    assert.equal(stats.deadSize, 1);
    assert.equal(stats.enqueued, 0);
    assert.deepEqual(Object.keys(stats.queues).sort(), ["critical", "default"]);
    assert.deepEqual((await Queue.all(client)).map((q) => q.name).sort(), ["critical", "default"]);
    await waitFor(async () => (await new ProcessSet(client).size()) === 1, "the worker's heartbeat");

    // The dashboard, on the same transport, shows the dead job and the queues.
    const app = new Hono().route("/jobs", dashboard({ transport: t, auth: () => true }));
    const home = await (await app.request("/jobs/queues")).text();
    assert.match(home, /critical/);
    const morgue = await app.request("/jobs/dead");
    assert.equal(morgue.status, 200);
    assert.match(await morgue.text(), /boom -1/);
  });

  test("the dashboard's Redis panel is the cluster's: every primary listed, memory and connections summed", async () => {
    const replies = await t.eachPrimary!(["INFO"]);
    assert.equal(replies.length, 3, "three primaries, in address order");
    assert.deepEqual(replies.map((r) => r.node), [...replies.map((r) => r.node)].sort());
    assert.ok(replies.every((r) => typeof r.reply === "string" && r.reply.includes("redis_version")));
    const app = new Hono().route("/jobs", dashboard({ transport: t, auth: () => true }));
    const html = await (await app.request("/jobs")).text();
    const panel = html.slice(html.indexOf('id="primaries"'));
    assert.ok(html.includes('id="primaries"'), "a row per primary");
    for (const { node } of replies) assert.ok(panel.includes(`<code>${node}</code>`), node);
    // Connections are the primaries' sum (this test's own connections alone are one per primary or more).
    const connections = Number(/<th>Connections<\/th>\s*<td>([\d,]+)<\/td>/.exec(html)?.[1].replaceAll(",", ""));
    assert.ok(connections >= 3, `connections summed over the primaries: ${connections}`);
    // One server: no such panel.
    const single = new Hono().route("/jobs", dashboard({ transport: memoryTransport(), auth: () => true }));
    const one = await (await single.request("/jobs")).text();
    assert.match(one, /Redis version/);
    assert.ok(!one.includes('id="primaries"'));
  });

  test("the CLI reaches a cluster through one seed: enqueue, then stats sees the job", async () => {
    const seed = `redis-cluster://${cluster!.seeds[0].host}:${cluster!.seeds[0].port}`;
    const push = spawnCli(["enqueue", "EchoJob", "--args", "[1]", "--queue", "low", "--redis-url", seed]);
    assert.equal(await push.exited, 0, push.output());
    const jid = push.stdout().trim();
    const [raw] = (await t.call("LRANGE", "{edgekiq}:queue:low", 0, -1)) as string[];
    assert.equal(JSON.parse(raw).jid, jid, "pushed in the cluster layout");
    const stats = spawnCli(["stats", "--json", "--redis-url", seed]);
    assert.equal(await stats.exited, 0, stats.output());
    const counts = JSON.parse(stats.stdout());
    assert.deepEqual([counts.queues, counts.enqueued], [{ low: 1 }, 1]);
  });

  test("the CLI on a sharded namespace: enqueue spreads over the shards, stats and queue pause read them all", async () => {
    const seed = `redis-cluster://${cluster!.seeds[0].host}:${cluster!.seeds[0].port}`;
    // Each CLI process starts at a random shard: with 6 pushes all landed on one shard 1 time in 243 (CI saw "6,0,0"
    // once); with 12, 1 in 177,147.
    const pushes = 12;
    for (let i = 0; i < pushes; i++) {
      const push = spawnCli(["enqueue", "EchoJob", "--args", `[${i}]`, "--shards", "3", "--redis-url", seed]);
      assert.equal(await push.exited, 0, push.output());
    }
    const sharded = createClient({ transport: t, shards: 3 });
    const lengths = await Promise.all(sharded.shards.map((s) => t.call("LLEN", s.keys.queue("default"))));
    assert.equal(lengths.map(Number).reduce((a, b) => a + b, 0), pushes);
    assert.ok(lengths.filter((n) => Number(n) > 0).length >= 2, `spread over the shards: ${lengths}`);
    const stats = spawnCli(["stats", "--json", "--shards", "3", "--redis-url", seed]);
    assert.equal(await stats.exited, 0, stats.output());
    assert.equal(JSON.parse(stats.stdout()).enqueued, pushes);
    const pause = spawnCli(["queue", "pause", "default", "--shards", "3", "--redis-url", seed]);
    assert.equal(await pause.exited, 0, pause.output());
    for (const shard of sharded.shards) assert.ok(await new Queue(shard, "default").isPaused());
    const bad = spawnCli(["stats", "--shards", "0", "--redis-url", seed]);
    assert.equal(await bad.exited, 2);
    assert.match(bad.output(), /--shards/);
  });

  test("unique locks are found by SCAN across every primary", async () => {
    const Once = defineJob({ name: "Once", unique: { for: 60 }, perform(_ctx, _n: number) {} });
    const client = createClient({ transport: t, features: [uniqueJobs()] });
    const first = await client.push(Once, [1]);
    const second = await client.push(Once, [1]);
    assert.ok(first);
    assert.equal(second, null, "the second push is refused by the lock");
    const locks: string[] = [];
    let cursor = "0";
    do {
      const [next, found] = (await t.call("SCAN", cursor, "MATCH", `${client.keys.uniqueLockPrefix}*`)) as [
        string,
        string[],
      ];
      locks.push(...found);
      cursor = next;
    } while (cursor !== "0");
    assert.equal(locks.length, 1);
  });

  test("a sharded namespace spreads one queue over every primary: pushes, a worker, retries and Stats", async () => {
    const ran = new Set<number>();
    let failedOnce = false;
    const Work = defineJob({
      name: "Work",
      retry: 1,
      retryIn: () => 0.1,
      perform(_ctx, n: number) {
        if (n === 7 && !failedOnce) {
          failedOnce = true;
          throw new Error("once");
        }
        ran.add(n);
      },
    });
    const client = createClient({ transport: t, shards: 6 });
    await client.pushBulk(Work, Array.from({ length: 600 }, (_, i) => [i]), { batchSize: 20 });
    // Two shards per primary, each holding a sixth of the queue.
    const perPrimary = new Map<number, number>();
    for (const shard of client.shards) {
      const { primary } = await cluster!.owner(keySlot(shard.keys.queue("default")));
      perPrimary.set(primary, (perPrimary.get(primary) ?? 0) + 1);
    }
    assert.deepEqual([...perPrimary.values()], [2, 2, 2], `shards per primary: ${[...perPrimary]}`);
    const lengths = await Promise.all(client.shards.map((s) => t.call("LLEN", s.keys.queue("default"))));
    assert.deepEqual(lengths.map(Number), [100, 100, 100, 100, 100, 100]);
    assert.equal((await new Stats(client).fetch()).enqueued, 600);

    // The work is spread: each primary serves a third of the commands of the drain (the 20-47% band).
    const primaries = await cluster!.primaries();
    const served = async () => {
      const out: number[] = [];
      for (const port of primaries) {
        out.push(Number(/total_commands_processed:(\d+)/.exec(await cluster!.cli(port, "INFO", "stats"))?.[1]));
      }
      return out;
    };
    const before = await served();
    worker = testWorker(t, { jobs: [Work], shards: 6, concurrency: 12, poller: true, pollIntervalAverage: 0.2 });
    await worker.run();
    await waitFor(() => ran.size === 600, "every job of every shard ran (one after a retry)", 20_000);
    const spent = (await served()).map((n, i) => n - before[i]);
    const total = spent.reduce((a, b) => a + b, 0);
    for (const n of spent) assert.ok(n / total >= 0.2 && n / total <= 0.47, `commands per primary: ${spent}`);
    assert.equal((await new Stats(client).fetch()).processesSize, 6, "one process entry per shard");
    await worker.stop();
    worker = undefined;
    await waitFor(async () => (await new Stats(client).fetch()).processesSize === 0, "every entry removed");
    const stats = await new Stats(client).fetch();
    assert.equal(stats.enqueued, 0);
    assert.equal(stats.retrySize, 0);
    assert.equal(stats.processed, 601);
    assert.equal(stats.failed, 1);
  });

  test("two namespaces land on different slots, each wholly in its own", () => {
    const a = keys("orders", "cluster"), b = keys("mail", "cluster");
    const slotsOf = (k: ReturnType<typeof keys>) =>
      new Set([k.queue("x"), k.retry, k.dead, k.schedule, k.processes, k.stat("processed"), k.held("h", "c")].map(
        keySlot,
      ));
    assert.equal(slotsOf(a).size, 1);
    assert.equal(slotsOf(b).size, 1);
    assert.notEqual([...slotsOf(a)][0], [...slotsOf(b)][0]);
  });
});

describe('durability: "replicated" on a Redis Cluster', () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    if (clusterAvailable()) cluster = await startCluster();
  });
  after(() => cluster?.stop());

  it("refuses bad durability settings", () => {
    assert.throws(() => clusterTransport({ nodes: ["127.0.0.1:1"], durability: "safe" as "fast" }), /'durability'/);
    assert.throws(() => clusterTransport({ nodes: ["127.0.0.1:1"], replicas: 0 }), /'replicas' must be/);
  });

  it("a MULTI block's WAIT rides its own pipeline, on the connection that ran EXEC (nothing sent between)", async () => {
    if (!cluster) return;
    const t = clusterTransport({ nodes: cluster.seeds, durability: "replicated", waitMs: 2_000 });
    const key = "{multi-wait}a";
    const { primary } = await cluster.owner(keySlot(key));
    const watcher = new Redis({ host: "127.0.0.1", port: primary });
    const monitor = await watcher.monitor();
    const seen: { command: string; client: string }[] = [];
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (/^(multi|exec|wait|exists|set|incr)$/i.test(args[0])) {
        seen.push({ command: args[0].toLowerCase(), client: source });
      }
    });
    try {
      await t.call("PING"); // connected before MONITOR starts watching
      const replies = await t.pipeline([["SET", key, "1"], ["INCR", "{multi-wait}b"]], { atomic: true });
      assert.deepEqual(replies, ["OK", 1]);
      await waitFor(() => seen.some((s) => s.command === "wait"), "the WAIT reached the primary", 5_000);
      const names = seen.map((s) => s.command);
      assert.deepEqual(names, ["multi", "set", "incr", "exec", "wait"], "no other command between EXEC and WAIT");
      assert.equal(new Set(seen.map((s) => s.client)).size, 1, "one connection");
    } finally {
      monitor.disconnect();
      watcher.disconnect();
      await t.close();
    }
  });

  it("acknowledges a push only once a replica has it, and says so when no replica answers", async () => {
    if (!cluster) return;
    // 2 s: a replica just linked has answered WAIT 1 300 with 0 under Bun (its first sync not yet done).
    const t = clusterTransport({ nodes: cluster.seeds, durability: "replicated", waitMs: 2_000 });
    try {
      const client = createClient({ transport: t });
      const Work = defineJob({ name: "Work", perform(_ctx, _n: number) {} });
      await client.push(Work, [1]);
      await client.pushBulk(Work, [[2], [3]]);
      const queueKey = client.keys.queue("default");
      const { replicas } = await cluster.owner(keySlot(queueKey));
      // The replica holds all three the moment the pushes resolve.
      const replica = cluster.nodes.find((n) => n.port === replicas[0])!;
      const reader = new Redis({ host: "127.0.0.1", port: replica.port, lazyConnect: true });
      try {
        await reader.connect();
        await reader.call("READONLY");
        assert.equal(await reader.call("LLEN", queueKey), 3);
      } finally {
        reader.disconnect();
      }
      // With its only replica gone, a push is on the primary but not confirmed: a maybe-applied connection error.
      await killNode(replica);
      await assert.rejects(client.push(Work, [4]), (e: unknown) => {
        const error = e as { message: string; maybeApplied?: boolean; cause?: { message: string } };
        return /Cannot confirm that 1 replica/.test(`${error.message} ${error.cause?.message}`);
      });
      // Reads are not followed by WAIT and still work.
      assert.equal(Number(await t.call("LLEN", queueKey)), 4);
    } finally {
      await t.close();
    }
  });
});

describe("failover under load on a Redis Cluster", () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    if (clusterAvailable()) cluster = await startCluster({ nodeTimeoutMs: 1000 });
  });
  after(() => cluster?.stop());

  it('loses no acknowledged push with durability "replicated" when the primary is SIGKILLed mid-drain', async () => {
    if (!cluster) return;
    const total = 2000;
    const ran = new Int32Array(total);
    const Work = defineJob({
      name: "Work",
      perform(_ctx, id: number) {
        ran[id]++;
      },
    });
    const transports = [0, 1, 2].map(() => clusterTransport({ nodes: cluster!.seeds, durability: "replicated" }));
    const producer = createClient({ transport: transports[0] });
    const acked = new Uint8Array(total);
    const push = async (from: number, to: number) => {
      for (let i = from; i < to; i += 50) {
        const ids = Array.from({ length: Math.min(50, to - i) }, (_, j) => [i + j] as [number]);
        try {
          await producer.pushBulk(Work, ids);
          for (const [id] of ids) acked[id] = 1;
        } catch { /* not acknowledged: a real producer pushes these again */ }
      }
    };
    const workers: Worker[] = [];
    try {
      await push(0, total / 2);
      for (const t of transports.slice(1)) {
        const w = testWorker(t, { jobs: [Work], concurrency: 5, poller: true });
        workers.push(w);
        await w.run();
      }
      const producing = push(total / 2, total);
      const { primary, replicas } = await cluster.owner(keySlot(producer.keys.queue("default")));
      const dead = cluster.nodes.find((n) => n.port === primary)!;
      await killNode(dead);
      await waitFor(
        async () => (await cluster!.primaries().catch((): number[] => [])).includes(replicas[0]),
        "a promoted replica",
        20_000,
      );
      await dead.restart(); // back as the new primary's replica, so WAIT can be answered again
      await producing;
      try {
        await waitFor(() => acked.every((a, i) => !a || ran[i] > 0), "every acknowledged job ran", 30_000);
      } catch (error) {
        const missing = [...acked.keys()].filter((i) => acked[i] && !ran[i]);
        const k = producer.keys;
        const t = transports[0];
        console.error("acknowledged jobs that never ran:", missing.length, missing.slice(0, 10), {
          queued: await t.call("LLEN", k.queue("default")),
          retry: await t.call("ZCARD", k.retry),
          dead: await t.call("ZCARD", k.dead),
          schedule: await t.call("ZCARD", k.schedule),
          registry: await t.call("HGETALL", k.heldRegistry),
          workers: workers.map((w) => w.running().length),
        });
        throw error;
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(transports.map((t) => t.close()));
    }
    const acknowledged = acked.reduce((n, a) => n + a, 0);
    const duplicates = ran.reduce((n, r) => n + Math.max(0, r - 1), 0);
    assert.ok(acknowledged >= total / 2, `at least the pushes before the kill were acknowledged: ${acknowledged}`);
    assert.ok(duplicates <= 10, `duplicates ${duplicates} within the jobs in flight (2 workers × 5)`);
  });
});
