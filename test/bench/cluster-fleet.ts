/**
 * A fleet on a Redis Cluster: N worker processes × M primaries, for the
 * scaling curve on a machine with the cores for it (this 2-core VM only shows
 * its shape). Each process runs, for each namespace it is given, a worker
 * (concurrency 10) and a producer that keeps that namespace's queue topped
 * up; namespaces (`prefix`) are spread evenly over the primaries, since one
 * namespace lives on one primary (docs/cluster.md).
 *
 *   npx tsx test/bench/cluster-fleet.ts                                  # 2 processes × 3 primaries, 6 namespaces, 8 s
 *   npx tsx test/bench/cluster-fleet.ts --processes 12 --primaries 3 --namespaces 12 --seconds 20
 *   npx tsx test/bench/cluster-fleet.ts --primaries 1 ...                # every namespace on one primary, to compare
 *
 * Prints jobs/s over the measured window and, per primary, its share of the
 * Redis CPU and Redis CPU µs per job (INFO cpu deltas). One JSON line.
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { keys } from "../../src/keys.ts";
import { clusterTransport } from "../../src/transport/adapters/cluster/cluster_transport.ts";
import { keySlot } from "../../src/key_slot.ts";
import { startCluster } from "../support/cluster.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (argv.includes("--child")) await child();
else await parent();

/** One fleet process: a worker and a producer per namespace; reports jobs performed inside the window. */
async function child(): Promise<void> {
  const seeds = JSON.parse(opt("seeds", "[]")) as { host: string; port: number }[];
  const names = opt("names", "").split(",");
  const warmupMs = Number(opt("warmup-ms", "2000"));
  const windowMs = Number(opt("window-ms", "8000"));
  const transport = clusterTransport({ nodes: seeds });
  let performed = 0, counting = false, stop = false;
  const Work = defineJob({
    name: "Work",
    perform(_ctx, _n: number) {
      if (counting) performed++;
    },
  });
  const workers = [];
  const producers: Promise<void>[] = [];
  for (const name of names) {
    const worker = createWorker({
      transport,
      prefix: name,
      jobs: [Work],
      concurrency: 10,
      logger: silentLogger,
      jobLogging: false,
      handleSignals: false,
    });
    await worker.run();
    workers.push(worker);
    const client = createClient({ transport, prefix: name });
    const queue = client.keys.queue("default");
    producers.push((async () => {
      while (!stop) {
        if (Number(await transport.call("LLEN", queue)) > 2000) await sleep(2);
        else await client.pushBulk(Work, Array.from({ length: 200 }, (_, i) => [i]));
      }
    })());
  }
  await sleep(warmupMs);
  counting = true;
  await sleep(windowMs);
  counting = false;
  stop = true;
  await Promise.all(producers);
  await Promise.all(workers.map((w) => w.stop()));
  await transport.close();
  process.stdout.write(JSON.stringify({ performed }) + "\n");
  process.exit(0);
}

async function parent(): Promise<void> {
  const processes = Number(opt("processes", "2"));
  const primaryCount = Number(opt("primaries", "3"));
  const namespaces = Number(opt("namespaces", String(primaryCount * 2)));
  const seconds = Number(opt("seconds", "8"));
  const warmupMs = 2000;
  // Redis Cluster needs at least 3 primaries: with --primaries 1 or 2 the namespaces use only that many of them.
  const cluster = await startCluster({ primaries: Math.max(3, primaryCount) });
  try {
    const primaries = (await cluster.primaries()).slice(0, primaryCount);
    // Namespaces spread evenly over the primaries: app0, app1, ... each taken if its primary still has room.
    const perPrimary = Math.ceil(namespaces / primaries.length);
    const byPrimary = new Map<number, string[]>(primaries.map((p) => [p, []]));
    const chosen: string[] = [];
    for (let i = 0; chosen.length < namespaces; i++) {
      const name = `app${i}`;
      const { primary } = await cluster.owner(keySlot(keys(name, "cluster").queues));
      const list = byPrimary.get(primary);
      if (list && list.length < perPrimary) {
        list.push(name);
        chosen.push(name);
      }
    }
    const cpu = async () =>
      await Promise.all(primaries.map(async (port) => {
        const info = await cluster.cli(port, "INFO", "cpu");
        const field = (f: string) => Number(new RegExp(`${f}:([\\d.]+)`).exec(info)?.[1] ?? 0);
        return field("used_cpu_sys") + field("used_cpu_user");
      }));
    const self = fileURLToPath(import.meta.url);
    const children = Array.from({ length: processes }, (_, i) => {
      const names = chosen.filter((_, j) => j % processes === i);
      const proc = spawn(process.execPath, [
        ...process.execArgv,
        self,
        "--child",
        "--seeds",
        JSON.stringify(cluster.seeds),
        "--names",
        names.join(","),
        "--warmup-ms",
        String(warmupMs),
        "--window-ms",
        String(seconds * 1000),
      ], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      proc.stdout.on("data", (d) => (out += d));
      return new Promise<number>((resolve, reject) =>
        proc.on("exit", (code) => {
          try {
            resolve(code === 0 ? (JSON.parse(out.trim().split("\n").pop()!) as { performed: number }).performed : 0);
          } catch (error) {
            reject(error);
          }
        })
      );
    });
    await sleep(warmupMs);
    const before = await cpu();
    await sleep(seconds * 1000);
    const after = await cpu();
    const performed = (await Promise.all(children)).reduce((a, b) => a + b, 0);
    const used = after.map((a, i) => a - before[i]);
    const total = used.reduce((a, b) => a + b, 0);
    const result = {
      processes,
      primaries: primaries.length,
      namespaces,
      seconds,
      jobsPerSec: Math.round(performed / seconds),
      redisCpuSharePercent: used.map((u) => Math.round((u / total) * 1000) / 10),
      redisCpuUsPerJob: used.map((u) => Math.round(((u * 1e6) / Math.max(performed, 1)) * 100) / 100),
      redisCpuUsPerJobTotal: Math.round(((total * 1e6) / Math.max(performed, 1)) * 100) / 100,
    };
    console.log(
      `${processes} processes × ${primaries.length} primaries, ${namespaces} namespaces: ${result.jobsPerSec} jobs/s; ` +
        `Redis CPU share per primary ${result.redisCpuSharePercent.join("/")}%, ` +
        `${result.redisCpuUsPerJobTotal} µs of Redis CPU per job in all`,
    );
    console.log(JSON.stringify(result));
  } finally {
    await cluster.stop();
  }
  process.exit(0);
}
