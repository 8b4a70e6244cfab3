/**
 * A fleet on a Redis Cluster: N worker processes × M primaries, for the
 * scaling curve on a machine with the cores for it (this 2-core VM only shows
 * its shape). The load is split one of two ways:
 *
 * - namespaces (default): K namespaces (`prefix`) spread evenly over M
 *   primaries, since one namespace lives on one primary (docs/cluster.md),
 *   dealt out to the processes; each process runs, for each namespace it is
 *   given, a worker (concurrency 10) and a producer that keeps that
 *   namespace's queue topped up;
 * - `--shards S`: one namespace in S shards (`createClient({ shards })`,
 *   `createWorker({ shards })`), spread one per arc of the slot ring (so 3,
 *   6, 12 shards spread evenly over 3 primaries; 1 is the unsharded
 *   namespace, all on one primary); every process runs ONE sharded worker
 *   (`--concurrency`, default 10 per shard, an equal share per shard) and
 *   ONE sharded producer topping up every shard's queue.
 *
 *   npx tsx test/bench/cluster-fleet.ts                                  # 2 processes × 3 primaries, 6 namespaces, 8 s
 *   npx tsx test/bench/cluster-fleet.ts --processes 12 --primaries 3 --namespaces 12 --seconds 20
 *   npx tsx test/bench/cluster-fleet.ts --primaries 1 ...                # every namespace on one primary, to compare
 *   npx tsx test/bench/cluster-fleet.ts --processes 8 --shards 12        # one namespace, 12 shards, 3 primaries
 *   npx tsx test/bench/cluster-fleet.ts --processes 8 --shards 1 --concurrency 120   # the same fleet on one primary
 *
 * Prints jobs/s over the measured window and, per primary, its share of the
 * Redis CPU and Redis CPU µs per job (main-thread CPU deltas from INFO, every
 * primary of the cluster). One JSON line. `npm run bench -- --only cluster`
 * runs the sharded pair (cluster-scenario.ts), with this script as its
 * fleet processes (`--child`).
 */
import process from "node:process";
import { fileURLToPath } from "node:url";
import { startCluster } from "../support/cluster.ts";
import { main } from "./child.ts";
import { fleetChild, type FleetLayout, runClusterFleet } from "./cluster-common.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};

if (argv.includes("--child")) main(fleetChild);
else await parent();

async function parent(): Promise<void> {
  const processes = Number(opt("processes", "2"));
  const primaryCount = Number(opt("primaries", "3"));
  const seconds = Number(opt("seconds", "8"));
  const shards = argv.includes("--shards") ? Number(opt("shards", "")) : undefined;
  const layout: FleetLayout = shards !== undefined
    ? { shards, concurrency: Number(opt("concurrency", String(10 * shards))) }
    : { namespaces: Number(opt("namespaces", String(primaryCount * 2))), primaries: primaryCount };
  // Redis Cluster needs at least 3 primaries: with --primaries 1 or 2 the namespaces use only that many of them.
  const cluster = await startCluster({ primaries: Math.max(3, primaryCount) });
  try {
    // This script again, on the runtime and loader (tsx) it runs on now.
    const self = { command: process.execPath, args: [...process.execArgv, fileURLToPath(import.meta.url)] };
    const result = await runClusterFleet(
      cluster.seeds,
      { processes, layout, warmupMs: 2000, windowMs: seconds * 1000 },
      self,
    );
    const split = "shards" in layout
      ? `one namespace in ${layout.shards} shards, concurrency ${layout.concurrency} a process`
      : `${layout.namespaces} namespaces`;
    console.log(
      `${processes} processes × ${result.primaries} primaries, ${split}: ${result.jobsPerSec} jobs/s; ` +
        `Redis CPU share per primary ${result.redisCpuSharePercent.join("/")}%, ` +
        `${result.redisCpuUsPerJobTotal} µs of Redis CPU per job in all`,
    );
    console.log(JSON.stringify(result));
  } finally {
    await cluster.stop();
  }
  process.exit(0);
}
