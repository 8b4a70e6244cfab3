/**
 * One process on a Redis Cluster against one process on a single Redis:
 * bulk push then drain of no-op jobs (concurrency 10, one worker), on
 *
 * - a single redis-server through the ioredis transport (Sidekiq layout);
 * - a six-node cluster through the cluster transport, `durability: "fast"`;
 * - the same cluster with `durability: "replicated"` (WAIT 1 after every write).
 *
 *   npx tsx test/bench/cluster.ts            # 20,000 jobs, best of 2 runs each, private servers
 *   npx tsx test/bench/cluster.ts --jobs 50000 --runs 3
 *   ... --url redis://127.0.0.1:7000 --seeds '[{"host":"127.0.0.1","port":7001}]'   # servers already running
 *
 * With neither `--url` nor `--seeds` it starts a private redis-server and a
 * private six-node cluster (test/support/cluster.ts) and stops them at the
 * end; given, they are used as they are and FLUSHed between runs. Prints a
 * table and one JSON line (last). `npm run bench -- --only cluster` runs it
 * as a child on the bench's own servers (cluster-scenario.ts).
 */
import process from "node:process";
import { startRedis, type TestRedis } from "../support/redis.ts";
import { startCluster, type TestCluster } from "../support/cluster.ts";
import { compareOneProcess, oneProcessTargets, type Seeds } from "./cluster-common.ts";

const argv = process.argv.slice(2);
const opt = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const jobs = Number(opt("jobs") ?? 20_000);
const runs = Number(opt("runs") ?? 2);

let single: TestRedis | undefined;
let cluster: TestCluster | undefined;
try {
  const url = opt("url") ?? (single = await startRedis()).url;
  const seeds = opt("seeds") ? (JSON.parse(opt("seeds")!) as Seeds) : (cluster = await startCluster()).seeds;
  const results = await compareOneProcess(oneProcessTargets(url, seeds), jobs, runs);
  const ratio = (a: number, b: number) => `${Math.round((a / b) * 100)}%`;
  console.log(`${jobs.toLocaleString("en-US")} no-op jobs, one process, concurrency 10, best of ${runs}`);
  console.log("target               bulk push jobs/s   one push µs   drain jobs/s   drain vs single");
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(20)} ${String(r.pushPerS).padStart(16)}   ${String(r.onePushUs).padStart(11)}   ${
        String(r.drainPerS).padStart(12)
      }   ${ratio(r.drainPerS, results.single.drainPerS).padStart(15)}`,
    );
  }
  console.log(JSON.stringify({ jobs, runs, ...results }));
} finally {
  await cluster?.stop();
  await single?.stop();
}
process.exit(0);
