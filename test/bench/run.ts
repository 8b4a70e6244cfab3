/**
 * `npm run bench`: edgekiq against BullMQ and Ruby Sidekiq, on one machine,
 * one Redis, in one run.
 *
 *   npm run bench                      # everything, 100k jobs (~15 min on 2 cores)
 *   npm run bench -- --quick           # 10k jobs, fewer variants (~2 min)
 *   npm run bench -- --jobs 50000
 *   npm run bench -- --only drain      # drain, push, latency, promote, io, fleet, redis-cost, limits, batches, cluster (comma-separated)
 *   npm run bench -- --baseline f10e190  # also run that commit's edgekiq in the drain scenarios
 *   npm run bench -- --scaling         # the scaling curves instead (scaling.ts: its flags and sizes)
 *   npm run bench -- --only cluster --cluster-processes 4,8,16,32 --cluster-shards 12   # a many-core machine's cluster run
 *
 * The cluster section (cluster-scenario.ts) starts a private six-node Redis
 * Cluster (3 primaries) and runs one process on it against one on the single
 * redis-server, then a fleet of P processes on one namespace, unsharded (one
 * primary) and in S shards (3 primaries): --cluster-processes P[,P...]
 * (default 2), --cluster-shards S (default 6; a multiple of 3 spreads
 * evenly), --cluster-seconds per fleet run's window (default 8 [3]). Each
 * process's concurrency is 10 × S in both runs of a pair.
 *
 * Env equivalents: BENCH_JOBS, BENCH_QUICK=1, BENCH_ONLY. EDGEKIQ_BENCH_REDIS_URL
 * points it at an existing, empty database (it is FLUSHDB'd between runs!); otherwise a private
 * redis-server is started on a free loopback port and stopped at the end.
 * Progress goes to stderr, the tables to stdout, and the results to
 * bench/results.json and bench/results.svg.
 */
import { cpus } from "node:os";
import { readFileSync } from "node:fs";
import { formatRedisCost, formatSection, formatTargets, type Report, type Section, writeReport } from "./report.ts";
import { type Context, drain, ioBound, latency, promote, push } from "./scenarios.ts";
import { prepareBaseline, prepareNodeBundles, sidekiqUnavailable } from "./commands.ts";
import { progress, redisCommand, repoRoot, startRedis } from "./support.ts";
import { checkTargets } from "./targets.ts";
import { fleet } from "./fleet.ts";
import { redisCost } from "./redis-cost.ts";
import { limits } from "./limits-scenario.ts";
import { batches } from "./batches-scenario.ts";
import { cluster, type ClusterBenchOptions } from "./cluster-scenario.ts";
import { renderScaling, runScaling, SCALING_SCRIPTS, scalingOptions } from "./scaling.ts";
import type { ScalingOptions } from "./scaling-scenarios.ts";

interface Options {
  /** The scaling section's sizes, when `--scaling` was given. */
  scaling?: ScalingOptions;
  jobs: number;
  quick: boolean;
  only: string[];
  /** A git ref whose edgekiq also runs the drain scenarios (before/after in one run). */
  baseline?: string;
  /** The cluster section's fleet sizes and shards. */
  cluster: ClusterBenchOptions;
}

function options(): Options {
  const argv = process.argv.slice(2);
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0) return argv[i + 1] && !argv[i + 1].startsWith("--") ? argv[i + 1] : "true";
    const eq = argv.find((a) => a.startsWith(`--${name}=`));
    return eq?.slice(name.length + 3);
  };
  const quick = argv.includes("--quick") || !["", "0", "false"].includes(process.env.BENCH_QUICK ?? "");
  const only = (flag("only") ?? process.env.BENCH_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  const list = (name: string, fallback: number, min: number, max: number) => {
    const values = (flag(name) ?? String(fallback)).split(",").map(Number);
    if (values.some((n) => !Number.isInteger(n) || n < min || n > max)) {
      throw new Error(`--${name} must be whole numbers from ${min} to ${max}, comma-separated: got ${flag(name)}`);
    }
    return values;
  };
  const count = (name: string, fallback: number, min: number, max: number) => {
    const n = Number(flag(name) ?? fallback);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new Error(`--${name} must be a whole number from ${min} to ${max}: got ${flag(name)}`);
    }
    return n;
  };
  const clusterOptions: ClusterBenchOptions = {
    processes: list("cluster-processes", 2, 1, 1024),
    shards: count("cluster-shards", 6, 3, 256),
    seconds: count("cluster-seconds", quick ? 3 : 8, 1, 600),
  };
  if (argv.includes("--scaling")) {
    const scaling = scalingOptions(flag, quick);
    return { scaling, jobs: scaling.jobs, quick, only, cluster: clusterOptions };
  }
  const jobs = Number(flag("jobs") ?? process.env.BENCH_JOBS ?? (quick ? 10_000 : 100_000));
  if (!Number.isInteger(jobs) || jobs < 100 || jobs > 10_000_000) {
    throw new Error(
      `--jobs must be a whole number from 100 to 10,000,000: got ${flag("jobs") ?? process.env.BENCH_JOBS}`,
    );
  }
  return { jobs, quick, only, baseline: flag("baseline"), cluster: clusterOptions };
}

const scenarios: Array<{ id: string; run: (ctx: Context, opts: Options) => Promise<Section> }> = [
  { id: "drain-c10", run: (ctx) => drain(ctx, 10) },
  { id: "drain-c100", run: (ctx) => drain(ctx, 100) },
  { id: "push", run: push },
  { id: "latency", run: latency },
  { id: "promote", run: promote },
  { id: "io", run: ioBound },
  { id: "fleet", run: (ctx) => fleet(ctx) },
  { id: "redis-cost", run: redisCost },
  { id: "limits", run: limits },
  { id: "batches", run: batches },
  { id: "cluster", run: (ctx, opts) => cluster(ctx, opts.cluster) },
];

function versionOf(pkg: string): string | undefined {
  try {
    return JSON.parse(readFileSync(`${repoRoot}node_modules/${pkg}/package.json`, "utf8")).version;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const opts = options();
  if (opts.scaling && process.argv.includes("--render")) return renderScaling();
  const selected = opts.scaling
    ? []
    : scenarios.filter((s) => opts.only.length === 0 || opts.only.some((o) => s.id === o || s.id.startsWith(`${o}-`)));
  if (selected.length === 0 && !opts.scaling) {
    throw new Error(`--only ${opts.only.join(",")} matches no scenario: ${scenarios.map((s) => s.id)}`);
  }
  const started = performance.now();
  await prepareNodeBundles(
    opts.scaling ? SCALING_SCRIPTS : [
      "edgekiq-drain.ts",
      "edgekiq-push.ts",
      "edgekiq-latency.ts",
      "edgekiq-promote.ts",
      "edgekiq-fleet.ts",
      "edgekiq-limits.ts",
      "batches.ts",
      "cluster.ts",
      "cluster-fleet.ts",
    ],
  );
  const redis = await startRedis();
  const stopRedis = () => void redis.stop();
  process.once("SIGINT", () => {
    stopRedis();
    process.exit(130);
  });
  try {
    const serverInfo = String(await redisCommand(redis.url, ["INFO", "server"]));
    const meta = {
      date: new Date().toISOString(),
      jobs: opts.jobs,
      quick: opts.quick,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      node: process.version,
      bun: versionOf("bun"),
      deno: versionOf("deno"),
      bullmq: versionOf("bullmq"),
      ioredis: versionOf("ioredis"),
      sidekiq: sidekiqUnavailable() ?? "6.x (system ruby)",
      redis: /redis_version:(\S+)/.exec(serverInfo)?.[1],
      redisUrl: redis.owned ? "private redis-server (loopback)" : "EDGEKIQ_BENCH_REDIS_URL",
      edgekiqOnNode: process.env.BENCH_NODE_LOADER === "tsx" ? "tsx loader" : "esbuild bundle (bench/.build)",
    };
    if (opts.scaling) {
      await runScaling({ url: redis.url, quick: opts.quick, only: opts.only, meta }, opts.scaling);
      return;
    }
    progress(
      `edgekiq bench: ${opts.jobs.toLocaleString("en-US")} jobs${
        opts.quick ? ", quick" : ""
      }; redis ${meta.redis} (${meta.redisUrl}); ` +
        `scenarios ${selected.map((s) => s.id).join(", ")}`,
    );
    const baseline = opts.baseline ? await prepareBaseline(opts.baseline) : undefined;
    const ctx: Context = { url: redis.url, jobs: opts.jobs, quick: opts.quick, baseline };
    const sections: Section[] = [];
    for (const scenario of selected) sections.push(await scenario.run(ctx, opts));
    const targets = checkTargets(sections);
    const report: Report = {
      meta: { ...meta, seconds: Math.round((performance.now() - started) / 1000) },
      sections,
      targets,
    };
    const text = [
      `edgekiq benchmark — ${meta.date}, ${meta.cpus} cores, node ${meta.node}, bun ${meta.bun}, deno ${meta.deno}, ` +
      `bullmq ${meta.bullmq}, redis ${meta.redis}`,
      "ratios are edgekiq/peer jobs/s (latency: edgekiq/peer ms, lower is better); RT = client round trips, " +
      "srv cmds = Redis total_commands_processed delta (includes commands run inside Lua scripts)",
      "",
      ...sections.flatMap((s) => [formatSection(s), ""]),
      ...[formatRedisCost(sections)].filter((t) => t !== undefined).flatMap((t) => [t, ""]),
      formatTargets(targets),
    ].join("\n");
    process.stdout.write(text + "\n");
    const outDir = `${repoRoot}bench`;
    writeReport(outDir, report);
    progress(`done in ${report.meta.seconds} s; wrote bench/results.json and bench/results.svg`);
  } finally {
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`bench failed: ${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
