/**
 * Redis Cluster under faults and load, with a ledger outside Redis:
 *
 *   npx tsx test/chaos/cluster.ts failover --durability replicated   # SIGKILL a primary mid-drain
 *   npx tsx test/chaos/cluster.ts failover --durability fast
 *   npx tsx test/chaos/cluster.ts reshard                            # move every slot of one primary mid-drain
 *   npx tsx test/chaos/cluster.ts spread                             # 12 namespaces: Redis CPU per primary
 *   npx tsx test/chaos/cluster.ts shards                             # one namespace, 12 shards: the same
 *   options: --jobs 20000 (failover/reshard), --seconds 6 (spread, shards), --shards 6 (failover/reshard
 *   on a sharded namespace: the producer and workers use that many shards, the fault hits shard 0's primary)
 *
 * Each starts its own six-node cluster on free loopback ports (never 6379)
 * and prints one JSON line. failover/reshard: a producer pushes half the
 * jobs while three workers (each its own cluster transport, concurrency 10)
 * drain them; `lost` counts jobs whose push was acknowledged and which never
 * ran, `duplicates` the extra runs, `unconfirmed` pushes that rejected (not
 * acknowledged, so not counted as lost). Exits 1 when `lost` > 0 under
 * "replicated" or for reshard, or duplicates exceed the jobs in flight.
 * Too slow for CI (20-40 s each); see docs/cluster.md for the numbers.
 */
import process from "node:process";
import { createClient, createWorker, defineJob, silentLogger, type Transport, type Worker } from "../../mod.ts";
import { keys } from "../../src/keys.ts";
import { clusterTransport } from "../../src/transport/adapters/cluster/cluster_transport.ts";
import { keySlot } from "../../src/key_slot.ts";
import { shardNamespaces } from "../../src/shards.ts";
import { killNode, startCluster, type TestCluster } from "../support/cluster.ts";

const argv = process.argv.slice(2);
const scenario = argv[0] ?? "failover";
const opt = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const durability = opt("durability", "replicated") as "fast" | "replicated";
const total = Number(opt("jobs", "20000"));
const shardCount = Number(opt("shards", "1"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function drainUnderFault(cluster: TestCluster, fault: () => Promise<string>) {
  const ran = new Int32Array(total);
  const Work = defineJob({
    name: "Work",
    perform(_ctx, id: number) {
      ran[id]++;
    },
  });
  const transports: Transport[] = [];
  const open = () => {
    const t = clusterTransport({ nodes: cluster.seeds, durability });
    transports.push(t);
    return t;
  };
  const producer = createClient({ transport: open(), shards: shardCount });
  const acked = new Uint8Array(total);
  let unconfirmed = 0;
  const push = async (from: number, to: number) => {
    for (let i = from; i < to; i += 100) {
      const ids = Array.from({ length: Math.min(100, to - i) }, (_, j) => [i + j] as [number]);
      try {
        await producer.pushBulk(Work, ids);
        for (const [id] of ids) acked[id] = 1;
      } catch {
        unconfirmed += ids.length;
      }
    }
  };
  await push(0, total / 2);
  const started = Date.now();
  const concurrency = Math.max(10, shardCount);
  const workers: Worker[] = Array.from({ length: 3 }, () =>
    createWorker({
      transport: open(),
      jobs: [Work],
      concurrency,
      shards: shardCount,
      logger: silentLogger,
      handleSignals: false,
      blockSeconds: 0.5,
      timeout: 5,
    }));
  for (const w of workers) await w.run();
  const producing = push(total / 2, total);
  await sleep(500);
  const what = await fault();
  await producing;
  const deadline = Date.now() + 60_000;
  const done = () => acked.every((a, i) => !a || ran[i] > 0);
  while (!done() && Date.now() < deadline) await sleep(100);
  const drainMs = Date.now() - started;
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(transports.map((t) => t.close()));
  let lost = 0, duplicates = 0, ackedCount = 0;
  for (let i = 0; i < total; i++) {
    if (acked[i]) ackedCount++;
    if (acked[i] && ran[i] === 0) lost++;
    if (ran[i] > 1) duplicates += ran[i] - 1;
  }
  const inFlight = 3 * concurrency;
  return { fault: what, jobs: total, acked: ackedCount, unconfirmed, lost, duplicates, inFlight, drainMs };
}

async function failover(cluster: TestCluster) {
  return await drainUnderFault(cluster, async () => {
    const { primary, replicas } = await cluster.owner(keySlot(keys("", "cluster").queue("default")));
    const started = Date.now();
    await killNode(cluster.nodes.find((n) => n.port === primary)!);
    // The replica takes over once cluster-node-timeout (1 s) has passed.
    while (!(await cluster.primaries().catch((): number[] => [])).includes(replicas[0])) {
      if (Date.now() - started > 20_000) throw new Error("no replica was promoted in 20 s");
      await sleep(50);
    }
    const promoted = Date.now() - started;
    // The old primary comes back (as a restarted host would) and rejoins as the new primary's replica, so
    // "replicated" writes can be confirmed again; until then they reject as unconfirmed.
    const dead = cluster.nodes.find((n) => n.port === primary)!;
    await dead.restart();
    await cluster.waitOk();
    return `SIGKILL primary :${primary}, replica :${
      replicas[0]
    } promoted after ${promoted} ms, old primary back as replica after ${Date.now() - started} ms`;
  });
}

async function reshard(cluster: TestCluster) {
  return await drainUnderFault(cluster, async () => {
    const slot = keySlot(keys("", "cluster").queue("default"));
    const { primary } = await cluster.owner(slot);
    const nodes = (await cluster.cli(primary, "CLUSTER", "NODES")).trim().split("\n").map((l) => l.split(" "));
    const from = nodes.find((f) => f[1].startsWith(`127.0.0.1:${primary}@`))!;
    const to = nodes.find((f) => f[2].includes("master") && f[0] !== from[0])!;
    const count = from.slice(8).reduce((n, range) => {
      const [lo, hi = lo] = range.split("-").map(Number);
      return n + hi - lo + 1;
    }, 0);
    const started = Date.now();
    await cluster.cli(
      primary,
      "--cluster",
      "reshard",
      `127.0.0.1:${primary}`,
      "--cluster-from",
      from[0],
      "--cluster-to",
      to[0],
      "--cluster-slots",
      String(count),
      "--cluster-yes",
    );
    const owner = await cluster.owner(slot);
    return `moved ${count} slots (edgekiq's slot ${slot} now on :${owner.primary}) in ${Date.now() - started} ms`;
  });
}

/** Redis CPU seconds used so far by each primary (`used_cpu_sys + used_cpu_user`). */
async function primaryCpu(cluster: TestCluster, primaries: number[]): Promise<Record<number, number>> {
  const used: Record<number, number> = {};
  for (const port of primaries) {
    const info = await cluster.cli(port, "INFO", "cpu");
    const sys = Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]);
    const user = Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]);
    used[port] = sys + user;
  }
  return used;
}

/** One worker and one producer, each with its own transport: where they work and how the producer pushes. */
interface Load {
  worker: { prefix?: string; shards?: number; concurrency: number };
  client: { prefix?: string; shards?: number };
  /** Jobs per pushBulk call, and per batch (MULTI) within it. */
  bulk: number;
  batchSize: number;
}

/**
 * Runs every load side by side for `--seconds` (default 6) and measures each
 * primary's Redis CPU over the window: its share of the total, and Redis CPU
 * per job run. `ok` when every primary carries 20-47%.
 */
async function runLoads(cluster: TestCluster, loads: Load[]) {
  const seconds = Number(opt("seconds", "6"));
  const primaries = await cluster.primaries();
  let ran = 0, pushed = 0, stop = false;
  const Work = defineJob({ name: "Work", perform: (_ctx, _n: number) => void ran++ });
  const transports: Transport[] = [];
  const workers: Worker[] = [];
  const producers: Promise<void>[] = [];
  for (const load of loads) {
    const t = clusterTransport({ nodes: cluster.seeds });
    transports.push(t);
    const w = createWorker({ transport: t, jobs: [Work], logger: silentLogger, handleSignals: false, ...load.worker });
    workers.push(w);
    await w.run();
    const client = createClient({ transport: t, ...load.client });
    producers.push((async () => {
      while (!stop) {
        await client.pushBulk(Work, Array.from({ length: load.bulk }, (_, i) => [i]), { batchSize: load.batchSize });
        pushed += load.bulk;
      }
    })());
  }
  const before = await primaryCpu(cluster, primaries);
  const ranBefore = ran;
  await sleep(seconds * 1000);
  const after = await primaryCpu(cluster, primaries);
  const ranIn = ran - ranBefore;
  stop = true;
  await Promise.all(producers);
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(transports.map((t) => t.close()));
  const used = primaries.map((p) => after[p] - before[p]);
  const sum = used.reduce((a, b) => a + b, 0);
  const shares = used.map((u) => Math.round((u / sum) * 1000) / 10);
  return {
    pushed,
    jobsPerSecond: Math.round(ranIn / seconds),
    cpuSeconds: used.map((u) => Math.round(u * 100) / 100),
    sharePercent: shares,
    redisCpuMicrosPerJob: Math.round((sum / Math.max(ranIn, 1)) * 1e8) / 100,
    ok: shares.every((share) => share >= 20 && share <= 47),
  };
}

/** 12 namespaces, four on each primary; a producer and a worker per namespace; Redis CPU per primary. */
async function spread(cluster: TestCluster) {
  const owners = new Map<number, string[]>();
  for (let i = 0; owners.size < 3 || [...owners.values()].some((names) => names.length < 4); i++) {
    const name = `app${i}`;
    const { primary } = await cluster.owner(keySlot(keys(name, "cluster").queues));
    const names = owners.get(primary) ?? [];
    if (names.length < 4) owners.set(primary, [...names, name]);
  }
  const loads = [...owners.values()].flat().map((prefix): Load => ({
    worker: { prefix, concurrency: 5 },
    client: { prefix },
    bulk: 50,
    batchSize: 50,
  }));
  return { namespaces: Object.fromEntries(owners), ...(await runLoads(cluster, loads)) };
}

/**
 * One namespace sharded 12 ways (four shards per primary): four workers (each
 * its own transport, serving every shard) and four producers pushing with
 * sharded clients; Redis CPU per primary, and jobs run.
 */
async function shards(cluster: TestCluster) {
  const count = 12;
  const shardsPerPrimary: Record<number, number> = {};
  for (const namespace of shardNamespaces("", count)) {
    const { primary } = await cluster.owner(keySlot(keys(namespace, "cluster").queues));
    shardsPerPrimary[primary] = (shardsPerPrimary[primary] ?? 0) + 1;
  }
  const load: Load = {
    worker: { shards: count, concurrency: count * 2 },
    client: { shards: count },
    bulk: 600,
    batchSize: 50,
  };
  return { shardsPerPrimary, ...(await runLoads(cluster, [load, load, load, load])) };
}

const cluster = await startCluster({ nodeTimeoutMs: 1000 });
let result: Record<string, unknown>;
try {
  if (scenario === "failover") result = { scenario, durability, shards: shardCount, ...(await failover(cluster)) };
  else if (scenario === "reshard") result = { scenario, durability, shards: shardCount, ...(await reshard(cluster)) };
  else if (scenario === "spread") result = { scenario, ...(await spread(cluster)) };
  else if (scenario === "shards") result = { scenario, ...(await shards(cluster)) };
  else throw new Error(`unknown scenario '${scenario}': failover, reshard, spread or shards`);
} finally {
  await cluster.stop();
}
console.log(JSON.stringify(result));
const failed = result.ok === false ||
  (typeof result.lost === "number" && result.lost > 0 && (scenario === "reshard" || durability === "replicated")) ||
  (typeof result.duplicates === "number" && result.duplicates > (result.inFlight as number));
process.exit(failed ? 1 : 0);
