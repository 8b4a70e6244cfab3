/**
 * One process on a Redis Cluster against one process on a single Redis:
 * bulk push then drain of no-op jobs (concurrency 10, one worker), on
 *
 * - a private single redis-server through the ioredis transport (Sidekiq layout);
 * - a private six-node cluster through the cluster transport, `durability: "fast"`;
 * - the same cluster with `durability: "replicated"` (WAIT 1 after every write).
 *
 *   npx tsx test/bench/cluster.ts            # 20,000 jobs, best of 2 runs each
 *   npx tsx test/bench/cluster.ts --jobs 50000 --runs 3
 *
 * Prints a table and one JSON line. Not part of `npm run bench` (whose
 * scenarios run child processes against one Redis); see docs/cluster.md for
 * the numbers measured on this machine.
 */
import process from "node:process";
import { createClient, createWorker, defineJob, silentLogger, type Transport } from "../../mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { clusterTransport } from "../../src/transport/adapters/cluster/cluster_transport.ts";
import { startRedis } from "../support/redis.ts";
import { startCluster, type TestCluster } from "../support/cluster.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const jobs = opt("jobs", 20_000);
const runs = opt("runs", 2);

type Result = { pushPerS: number; drainPerS: number; onePushUs: number };

async function measure(open: () => Transport, flush: () => Promise<void>, best: Result): Promise<Result> {
  {
    await flush();
    const transport = open();
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
    // One push at a time: what a request handler waits for (WAIT included under "replicated").
    const singles = 1000;
    const oneStart = performance.now();
    for (let i = 0; i < singles; i++) await client.push(Work, [-1]);
    const onePushUs = Math.round(((performance.now() - oneStart) * 1000) / singles);
    const worker = createWorker({
      transport,
      jobs: [Work],
      concurrency: 10,
      logger: silentLogger,
      handleSignals: false,
    });
    const drainStart = performance.now();
    await worker.run();
    while (done < jobs + singles) await new Promise((r) => setTimeout(r, 5));
    const drainMs = performance.now() - drainStart;
    await worker.stop();
    await transport.close();
    const result = {
      pushPerS: Math.round(jobs / (pushMs / 1000)),
      drainPerS: Math.round((jobs + singles) / (drainMs / 1000)),
      onePushUs,
    };
    return result.drainPerS > best.drainPerS ? result : best;
  }
}

const single = await startRedis();
let cluster: TestCluster | undefined;
try {
  cluster = await startCluster();
  const flushSingle = async () => {
    const t = ioredisTransport({ url: single.url });
    await t.call("FLUSHALL");
    await t.close();
  };
  const targets: Record<string, [() => Transport, () => Promise<void>]> = {
    single: [() => ioredisTransport({ url: single.url }), flushSingle],
    clusterFast: [() => clusterTransport({ nodes: cluster!.seeds }), () => cluster!.flush()],
    clusterReplicated: [
      () => clusterTransport({ nodes: cluster!.seeds, durability: "replicated" }),
      () => cluster!.flush(),
    ],
  };
  const results: Record<string, Result> = {};
  // Rounds interleave the targets, so JIT warm-up and the machine's load fall on all of them alike.
  for (let run = 0; run < runs; run++) {
    for (const [name, [open, flush]] of Object.entries(targets)) {
      results[name] = await measure(open, flush, results[name] ?? { pushPerS: 0, drainPerS: 0, onePushUs: 0 });
    }
  }
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
  await single.stop();
}
process.exit(0);
