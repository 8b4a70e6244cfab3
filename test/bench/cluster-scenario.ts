/**
 * The cluster section of `npm run bench` (issue 28's performance asks), on
 * one private six-node Redis Cluster (3 primaries, a replica each, started
 * by test/support/cluster.ts) beside the bench's own redis-server:
 *
 * 1. one process draining no-op jobs (concurrency 10) on the single
 *    redis-server (ioredis transport) and on the cluster, `durability`
 *    "fast" and "replicated" (cluster.ts as a child: best of interleaved
 *    rounds); the target is the cluster's "fast" drain at >= 80% of the
 *    single server's;
 * 2. a fleet: P processes, each ONE worker and ONE producer over one
 *    namespace, unsharded (all on one primary) and in S shards (spread over
 *    the 3 primaries), with the same concurrency per process (10 per shard
 *    of the sharded run) in both (cluster-fleet.ts as the processes); jobs/s,
 *    each primary's share of the Redis CPU and Redis CPU per job. The issue's
 *    goal, 3 primaries at >= 2.5× one primary's throughput, needs a machine
 *    where the workers are not the limit: P and S are the bench's
 *    `--cluster-processes 4,8,16,32` and `--cluster-shards 12`.
 */
import { cpus } from "node:os";
import type { Row, Section } from "./report.ts";
import type { Context } from "./scenarios.ts";
import { edgekiqCommand } from "./commands.ts";
import { flushRedis, type Outcome, progress, runChild } from "./support.ts";
import { type OneProcessResult, type OneProcessTarget, runClusterFleet, type Seeds } from "./cluster-common.ts";
import { clusterAvailable, startCluster } from "../support/cluster.ts";

/** The cluster section's sizes: run.ts's `--cluster-*` flags. */
export interface ClusterBenchOptions {
  /** Fleet sizes (worker processes); each runs on one primary and on three. */
  processes: number[];
  /** Shards of the namespace on three primaries (a multiple of 3 spreads evenly). */
  shards: number;
  /** Each fleet run's measured window, in seconds (after a warm-up). */
  seconds: number;
}

const ONE_PROCESS: Array<Pick<Row, "label" | "params"> & { key: OneProcessTarget["name"] }> = [
  { key: "single", label: "one process, single redis-server (ioredis)", params: { transport: "ioredis" } },
  {
    key: "clusterFast",
    label: 'one process, 3-primary cluster, durability "fast"',
    params: { transport: "cluster", durability: "fast" },
  },
  {
    key: "clusterReplicated",
    label: 'one process, 3-primary cluster, durability "replicated"',
    params: { transport: "cluster", durability: "replicated" },
  },
];

/** The one-process rows, from one cluster.ts child that measures all three targets in interleaved rounds. */
async function oneProcess(ctx: Context, seeds: Seeds): Promise<Row[]> {
  // Fixed sizes, not --jobs: a drain this size lasts about a second, so the worker's start (on the cluster, a
  // connection to each primary) is not what is measured (on this VM 10,000 jobs read 51% of single Redis, 100,000 101%).
  const jobs = ctx.quick ? 50_000 : 100_000;
  const runs = ctx.quick ? 2 : 3;
  progress(`cluster: one process, ${jobs.toLocaleString("en-US")} jobs, best of ${runs} ...`);
  const outcome = await runChild(
    edgekiqCommand("node", "cluster.ts"),
    ["--url", ctx.url, "--seeds", JSON.stringify(seeds), "--jobs", String(jobs), "--runs", String(runs)],
    {},
    60_000 + runs * 3 * 15_000,
  );
  return ONE_PROCESS.map(({ key, label, params }) => {
    const r = outcome.status === "ok" ? outcome.result[key] as OneProcessResult | undefined : undefined;
    let rowOutcome: Outcome = outcome;
    if (r) {
      const { drainPerS, pushPerS, onePushUs, drained, drainSeconds } = r;
      rowOutcome = {
        status: "ok",
        wallSeconds: outcome.wallSeconds,
        result: { jobs: drained, runs, jobsPerSec: drainPerS, pushPerSec: pushPerS, onePushUs, seconds: drainSeconds },
      };
    } else if (outcome.status === "ok") {
      rowOutcome = { status: "error", detail: `no ${key} result`, wallSeconds: outcome.wallSeconds };
    }
    progress(
      `cluster: ${label}: ` +
        (r ? `drain ${r.drainPerS} jobs/s, bulk push ${r.pushPerS} jobs/s, one push ${r.onePushUs} µs` : "failed"),
    );
    return { label, family: "edgekiq", concurrency: 10, params, outcome: rowOutcome };
  });
}

/**
 * (cluster) One process on a single redis-server against the cluster, and
 * P processes × 1 and 3 primaries (see the module comment).
 */
export async function cluster(ctx: Context, options: ClusterBenchOptions): Promise<Section> {
  const { shards, seconds } = options;
  const concurrency = 10 * shards;
  const section: Section = {
    id: "cluster",
    title: `cluster: one process (c=10) on a single redis-server vs a 3-primary Redis Cluster; ` +
      `P processes (c=${concurrency} each) on one namespace, unsharded vs ${shards} shards (${seconds} s windows)`,
    metric: "cluster",
    rows: [],
  };
  const fleets = options.processes.flatMap((processes) =>
    [1, shards].map((s) => ({
      processes,
      shards: s,
      primaries: s === 1 ? 1 : 3,
      label: `${processes} processes × ${s === 1 ? "1 primary (unsharded)" : `3 primaries (${s} shards)`}`,
    }))
  );
  if (!clusterAvailable()) {
    const skipped: Outcome = { status: "skipped", detail: "no redis-server or redis-cli on PATH", wallSeconds: 0 };
    for (const { label, params } of ONE_PROCESS) {
      section.rows.push({ label, family: "edgekiq", concurrency: 10, params, outcome: skipped });
    }
    for (const f of fleets) {
      section.rows.push({
        label: f.label,
        family: "edgekiq",
        processes: f.processes,
        servers: f.primaries,
        params: { shards: f.shards },
        outcome: skipped,
      });
    }
    return section;
  }
  progress("cluster: starting a private six-node Redis Cluster ...");
  const testCluster = await startCluster();
  try {
    section.rows.push(...(await oneProcess(ctx, testCluster.seeds)));
    for (const f of fleets) {
      progress(`cluster: ${f.label} ...`);
      const started = performance.now();
      let outcome: Outcome;
      try {
        const result = await runClusterFleet(
          testCluster.seeds,
          {
            processes: f.processes,
            layout: { shards: f.shards, concurrency },
            warmupMs: ctx.quick ? 1000 : 2000,
            windowMs: seconds * 1000,
          },
          edgekiqCommand("node", "cluster-fleet.ts"),
        );
        outcome = {
          status: "ok",
          // The cores: the 3-vs-1-primary target is only judged where the fleet is not bound by this machine's.
          result: { ...result, cores: cpus().length },
          wallSeconds: (performance.now() - started) / 1000,
        };
        progress(
          `cluster: ${f.label}: ${result.jobsPerSec} jobs/s, Redis CPU share ${
            result.redisCpuSharePercent.join("/")
          }%, ${result.redisCpuUsPerJobTotal} µs/job`,
        );
      } catch (error) {
        outcome = {
          status: "error",
          detail: String((error as Error).message),
          wallSeconds: (performance.now() - started) / 1000,
        };
        progress(`cluster: ${f.label}: error: ${outcome.detail}`);
      }
      section.rows.push({
        label: f.label,
        family: "edgekiq",
        processes: f.processes,
        // The primaries the shards landed on (as planned when the run failed).
        servers: outcome.status === "ok" ? Number(outcome.result.primaries) : f.primaries,
        concurrency,
        params: { shards: f.shards },
        outcome,
      });
    }
  } finally {
    await testCluster.stop();
  }
  await flushRedis(ctx.url);
  return section;
}
