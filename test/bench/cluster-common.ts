/**
 * What the Redis Cluster benchmarks share: one process's push and drain on
 * a single redis-server and on a cluster (cluster.ts), and a fleet of
 * worker processes on a cluster, by namespaces or by shards of one
 * namespace (cluster-fleet.ts). `npm run bench -- --only cluster`
 * (cluster-scenario.ts) runs both scripts' measurements on one cluster.
 *
 * Everything here reaches the cluster through its seeds, so a child process
 * and the harness that started the cluster measure the same way.
 */
import process from "node:process";
import { createInterface } from "node:readline";
import {
  type Client,
  createClient,
  createWorker,
  defineJob,
  type Job,
  silentLogger,
  type Transport,
  type Worker,
} from "../../mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { clusterTransport } from "../../src/transport/adapters/cluster/cluster_transport.ts";
import { keys } from "../../src/keys.ts";
import { keySlot } from "../../src/key_slot.ts";
import { shardNamespaces } from "../../src/shards.ts";
import { costBetween, redisSnapshot } from "./redis-snapshot.ts";
import { flushRedis, killTree, redisCommand, sleep, startLongChild } from "./support.ts";
import { cpuWindow, round, rssMB } from "./child.ts";

/** A cluster's seed nodes, as `clusterTransport({ nodes })` and ioredis take them. */
export type Seeds = { host: string; port: number }[];

/** The URL of one node (for the harness's own INFO and FLUSHALL). */
const nodeUrl = (seeds: Seeds, port: number) => `redis://${seeds[0].host}:${port}`;

/**
 * The primaries serving slots (ports, ascending) and the primary of any
 * slot, from one CLUSTER SLOTS: cheaper than redis-cli per lookup, which a
 * spread over a dozen namespaces would spawn dozens of times.
 */
export async function slotMap(seeds: Seeds): Promise<{ primaries: number[]; ownerOf(slot: number): number }> {
  const ranges = (await redisCommand(nodeUrl(seeds, seeds[0].port), ["CLUSTER", "SLOTS"])) as [
    number,
    number,
    [string, number, ...unknown[]],
  ][];
  const primaries = [...new Set(ranges.map((r) => Number(r[2][1])))].sort((a, b) => a - b);
  return {
    primaries,
    ownerOf(slot) {
      const range = ranges.find(([lo, hi]) => slot >= lo && slot <= hi);
      if (!range) throw new Error(`no primary serves slot ${slot}`);
      return Number(range[2][1]);
    },
  };
}

/** Empties every primary (its replicas follow) and its script cache. */
export async function flushCluster(seeds: Seeds): Promise<void> {
  // FLUSHDB is FLUSHALL on a cluster node: it has one database.
  for (const port of (await slotMap(seeds)).primaries) await flushRedis(nodeUrl(seeds, port));
}

// ---------------------------------------------------------------------------
// One process: single redis-server against the cluster

/** One process's figures on one target. */
export interface OneProcessResult {
  /** `pushBulk` in calls of 1,000: jobs/s. */
  pushPerS: number;
  /** One worker (concurrency 10) draining the bulk and the single pushes: jobs/s from `run()` to the last job. */
  drainPerS: number;
  /** One push at a time, µs each: what a request handler waits for (WAIT included under "replicated"). */
  onePushUs: number;
  /** Jobs drained: the bulk and the single pushes. */
  drained: number;
  drainSeconds: number;
}

/** A Redis the one-process comparison runs on: how to open a transport to it, and how to empty it. */
export interface OneProcessTarget {
  name: "single" | "clusterFast" | "clusterReplicated";
  open(): Transport;
  flush(): Promise<void>;
}

/**
 * The three targets: a single redis-server through the ioredis transport
 * (Sidekiq layout), and the cluster with `durability: "fast"` and
 * `"replicated"` (WAIT 1 after every write).
 */
export function oneProcessTargets(singleUrl: string, seeds: Seeds): OneProcessTarget[] {
  return [
    { name: "single", open: () => ioredisTransport({ url: singleUrl }), flush: () => flushRedis(singleUrl) },
    { name: "clusterFast", open: () => clusterTransport({ nodes: seeds }), flush: () => flushCluster(seeds) },
    {
      name: "clusterReplicated",
      open: () => clusterTransport({ nodes: seeds, durability: "replicated" }),
      flush: () => flushCluster(seeds),
    },
  ];
}

/** Bulk push of `jobs` no-op jobs, 1,000 single pushes, then one worker (concurrency 10) drains them all. */
async function measureOnce(target: OneProcessTarget, jobs: number): Promise<OneProcessResult> {
  await target.flush();
  const transport = target.open();
  let done = 0;
  const Work = defineJob({
    name: "Work",
    perform(_ctx, _n: number) {
      done++;
    },
  });
  const client = createClient({ transport });
  const pushStart = performance.now();
  for (let i = 0; i < jobs; i += 1000) {
    await client.pushBulk(Work, Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => [i + j]));
  }
  const pushMs = performance.now() - pushStart;
  const singles = 1000;
  const oneStart = performance.now();
  for (let i = 0; i < singles; i++) await client.push(Work, [-1]);
  const onePushUs = Math.round(((performance.now() - oneStart) * 1000) / singles);
  const worker = createWorker({ transport, jobs: [Work], concurrency: 10, logger: silentLogger, handleSignals: false });
  const drainStart = performance.now();
  await worker.run();
  while (done < jobs + singles) await sleep(5);
  const drainMs = performance.now() - drainStart;
  await worker.stop();
  await transport.close();
  return {
    pushPerS: Math.round(jobs / (pushMs / 1000)),
    drainPerS: Math.round((jobs + singles) / (drainMs / 1000)),
    onePushUs,
    drained: jobs + singles,
    drainSeconds: round(drainMs / 1000, 3),
  };
}

/**
 * Each target's best of `runs` (by drain rate). Rounds interleave the
 * targets, so JIT warm-up and the machine's load fall on all of them alike.
 */
export async function compareOneProcess(
  targets: OneProcessTarget[],
  jobs: number,
  runs: number,
): Promise<Record<OneProcessTarget["name"], OneProcessResult>> {
  const best: Partial<Record<OneProcessTarget["name"], OneProcessResult>> = {};
  for (let run = 0; run < runs; run++) {
    for (const target of targets) {
      const result = await measureOnce(target, jobs);
      if (result.drainPerS > (best[target.name]?.drainPerS ?? -1)) best[target.name] = result;
    }
  }
  return best as Record<OneProcessTarget["name"], OneProcessResult>;
}

// ---------------------------------------------------------------------------
// A fleet: N processes on a cluster

/** The queue depth (per queue) a fleet producer keeps up: enough that no worker waits on a push. */
const BACKLOG = 2000;
/** Jobs per pushed batch (each batch to the next shard of a sharded client). */
const BATCH = 200;

/**
 * A fleet's load split: several namespaces (`prefix`), or one namespace in
 * shards (`createClient({ shards })`, `createWorker({ shards })`).
 */
export type FleetLayout =
  /** K namespaces spread evenly over the first M primaries, dealt out to the processes: each gets a worker (concurrency 10) and a producer per namespace. */
  | { namespaces: number; primaries: number }
  /** One namespace in N shards: every process runs one sharded worker (`concurrency`, an equal share per shard) and one sharded producer. */
  | { shards: number; concurrency: number };

/** What a cluster fleet run is asked for. */
export interface ClusterFleetOptions {
  processes: number;
  layout: FleetLayout;
  /** Time from every process being ready to the window (workers and producers already running). */
  warmupMs: number;
  /** The measured window. */
  windowMs: number;
}

/** A cluster fleet's figures over the measured window. */
export interface ClusterFleetResult {
  processes: number;
  /** Primaries the namespaces or shards landed on. */
  primaries: number;
  namespaces?: number;
  shards?: number;
  /** Each worker process's concurrency, all its workers together. */
  concurrency: number;
  seconds: number;
  jobsPerSec: number;
  /** Each primary's share of the cluster's Redis CPU (every primary, by port). */
  redisCpuSharePercent: number[];
  /** The busiest primary's main-thread CPU over the window, % of one core: the first to run out. */
  redisCpuPct: number;
  /** Each primary's Redis CPU µs per job (by port). */
  redisCpuUsPerJob: number[];
  /** Redis CPU µs per job, all primaries together. */
  redisCpuUsPerJobTotal: number;
  /** Commands per job, all primaries together (Lua's inner ones included). */
  redisCommandsPerJob: number;
  /** The worker processes' own CPU per job, µs (workers and producers). */
  cpuUsPerJob: number;
  /** The largest worker process's RSS, MB. */
  rssMB: number;
  /** Jobs each process performed in the window. */
  perProcess: number[];
}

/**
 * Runs a fleet on a cluster: flushes it, starts `processes` children of
 * `command` (cluster-fleet.ts in `--child` mode, see {@link fleetChild}),
 * waits until all are ready plus the warm-up, then measures jobs performed
 * and each primary's main-thread CPU and commands (INFO) over the window.
 * The window opens and closes on the children's stdin ("go", "stop"), so
 * their counts and Redis's counters cover the same time.
 */
export async function runClusterFleet(
  seeds: Seeds,
  options: ClusterFleetOptions,
  command: { command: string; args: string[] },
): Promise<ClusterFleetResult> {
  const { processes, layout } = options;
  await flushCluster(seeds);
  const map = await slotMap(seeds);
  const owner = (namespace: string) => map.ownerOf(keySlot(keys(namespace, "cluster").queues));
  let perChild: string[][];
  let used: Set<number>;
  let concurrency: number;
  if ("shards" in layout) {
    used = new Set(shardNamespaces("", layout.shards).map(owner));
    concurrency = layout.concurrency;
    perChild = Array.from(
      { length: processes },
      () => ["--shards", String(layout.shards), "--concurrency", String(concurrency)],
    );
  } else {
    if (processes > layout.namespaces) {
      throw new Error(`${processes} processes for ${layout.namespaces} namespaces: some would idle`);
    }
    // Namespaces spread evenly over the primaries: app0, app1, ... each taken if its primary still has room.
    const primaries = map.primaries.slice(0, layout.primaries);
    const perPrimary = Math.ceil(layout.namespaces / primaries.length);
    const byPrimary = new Map<number, string[]>(primaries.map((p) => [p, []]));
    const chosen: string[] = [];
    for (let i = 0; chosen.length < layout.namespaces; i++) {
      const list = byPrimary.get(owner(`app${i}`));
      if (list && list.length < perPrimary) {
        list.push(`app${i}`);
        chosen.push(`app${i}`);
      }
    }
    used = new Set(chosen.map(owner));
    perChild = Array.from(
      { length: processes },
      (_, i) => ["--names", chosen.filter((_, j) => j % processes === i).join(",")],
    );
    concurrency = 10 * Math.ceil(layout.namespaces / processes);
  }
  const deadline = String(Math.ceil((options.warmupMs + options.windowMs) / 1000) + 90);
  const children = perChild.map((args) =>
    startLongChild(command, ["--child", "--seeds", JSON.stringify(seeds), ...args, "--deadline", deadline])
  );
  try {
    const ready = await Promise.race([Promise.all(children.map((c) => c.ready)), sleep(60_000)]);
    if (!Array.isArray(ready) || !ready.every(Boolean)) throw new Error("fleet processes not ready within 60 s");
    await sleep(options.warmupMs);
    const urls = map.primaries.map((port) => nodeUrl(seeds, port));
    const before = await Promise.all(urls.map(redisSnapshot));
    const t0 = performance.now();
    for (const c of children) c.proc.stdin!.write("go\n");
    await sleep(options.windowMs);
    for (const c of children) c.proc.stdin!.write("stop\n");
    const seconds = (performance.now() - t0) / 1000;
    const costs = (await Promise.all(urls.map(redisSnapshot))).map((after, i) => costBetween(before[i], after));
    const results = await Promise.race([Promise.all(children.map((c) => c.result)), sleep(60_000)]);
    if (!Array.isArray(results)) throw new Error("fleet processes did not stop within 60 s");
    const failed = results.find((r) => "error" in r);
    if (failed) throw new Error(String(failed.error));
    const perProcess = results.map((r) => Number(r.performed));
    const performed = Math.max(1, perProcess.reduce((a, b) => a + b, 0));
    const cpuUs = costs.reduce((s, c) => s + c.cpuUs, 0);
    return {
      processes,
      primaries: used.size,
      ...("shards" in layout ? { shards: layout.shards } : { namespaces: layout.namespaces }),
      concurrency,
      seconds: round(seconds, 3),
      jobsPerSec: Math.round(performed / seconds),
      redisCpuSharePercent: costs.map((c) => round((c.cpuUs / cpuUs) * 100, 1)),
      redisCpuPct: Math.max(...costs.map((c) => round((c.cpuUs / 1e6 / c.seconds) * 100, 1))),
      redisCpuUsPerJob: costs.map((c) => round(c.cpuUs / performed)),
      redisCpuUsPerJobTotal: round(cpuUs / performed),
      redisCommandsPerJob: round(costs.reduce((s, c) => s + c.commands, 0) / performed, 3),
      cpuUsPerJob: round((results.reduce((s, r) => s + Number(r.cpuSeconds), 0) * 1e6) / performed, 1),
      rssMB: Math.max(...results.map((r) => Number(r.rssMB))),
      perProcess,
    };
  } finally {
    for (const c of children) killTree(c.proc);
  }
}

/**
 * Keeps a client's queues (every shard's, for a sharded client) at about
 * {@link BACKLOG} jobs each until `stopped()`: one batch per shard at a time,
 * so the shards fill alike. A full backlog waits 5 ms before looking again;
 * shorter polls would add LLENs to Redis's cost per job.
 */
async function keepFull(
  transport: Transport,
  client: Client,
  job: Job<[number]>,
  stopped: () => boolean,
): Promise<void> {
  const queues = client.shards.map((shard) => shard.keys.queue("default"));
  const batch = Array.from({ length: BATCH * queues.length }, (_, i): [number] => [i]);
  while (!stopped()) {
    const lengths = await Promise.all(queues.map((queue) => transport.call("LLEN", queue)));
    if (lengths.reduce((sum: number, n) => sum + Number(n), 0) > BACKLOG * queues.length) await sleep(5);
    else await client.pushBulk(job, batch, { batchSize: BATCH });
  }
}

/**
 * One fleet process (`cluster-fleet.ts --child`): `--shards N --concurrency
 * C` runs one sharded worker and one sharded producer over the unprefixed
 * namespace; `--names a,b` runs a worker (concurrency 10) and a producer per
 * namespace. Says "ready" once all run, counts jobs performed between the
 * "go" and "stop" lines on stdin, then stops and returns its count, CPU
 * over the window and RSS.
 */
export async function fleetChild(a: Record<string, string>): Promise<Record<string, unknown>> {
  const transport = clusterTransport({ nodes: JSON.parse(a.seeds) as Seeds });
  let performed = 0, counting = false, stopped = false;
  const Work = defineJob({
    name: "Work",
    perform(_ctx, _n: number) {
      if (counting) performed++;
    },
  });
  const units = a.shards
    ? [{ prefix: undefined, shards: Number(a.shards), concurrency: Number(a.concurrency) }]
    : a.names.split(",").map((prefix) => ({ prefix, shards: 1, concurrency: 10 }));
  const workers: Worker[] = [];
  const producers: Promise<void>[] = [];
  for (const unit of units) {
    const worker = createWorker({
      transport,
      prefix: unit.prefix,
      shards: unit.shards,
      jobs: [Work],
      concurrency: unit.concurrency,
      logger: silentLogger,
      jobLogging: false,
      handleSignals: false,
    });
    await worker.run();
    workers.push(worker);
    const client = createClient({ transport, prefix: unit.prefix, shards: unit.shards });
    producers.push(keepFull(transport, client, Work, () => stopped));
  }
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write("ready\n");
  await lines.next(); // go
  const cpu = cpuWindow();
  counting = true;
  await lines.next(); // stop (or the harness gone)
  counting = false;
  const cpuSeconds = cpu.stop() / 1e6;
  const rss = rssMB();
  stopped = true;
  await Promise.all(producers);
  await Promise.all(workers.map((w) => w.stop()));
  await transport.close();
  return { performed, cpuSeconds, rssMB: rss };
}
