/**
 * One flow-limits drain figure (the `limits` bench scenario), in its own
 * process against the harness's Redis: a backlog of no-op jobs drained by
 * one worker (concurrency 10), one of:
 *
 * - `plain`: no limit, no feature (the baseline);
 * - `concurrency`: each job declares `limits: [{ concurrency: 50 }]` (not the bottleneck);
 * - `rate`: each job declares a window rate limit far above the drain's rate;
 * - `grouped`: the same backlog pushed as `--groups` groups (round-robin mover).
 *
 * Prints the jobs per second, the commands per job the worker sent and
 * Redis's main-thread CPU per job while it drained.
 *
 *   npx tsx test/bench/edgekiq-limits.ts --url redis://... --mode concurrency [--jobs 100000] [--groups 1000]
 *     [--lookahead auto|N]
 */
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { flowLimits } from "../../src/features/mod.ts";
import type { DeclaredLimit } from "../../src/features/mod.ts";
import { args, emit, openTransport, redisCounters, round } from "./child.ts";

const a = args();
const jobs = Number(a.jobs ?? 100_000);
const mode = a.mode ?? "plain";
const groups = Number(a.groups ?? 1000);
const concurrency = Number(a.concurrency ?? 10);
const limits: Record<string, DeclaredLimit[]> = {
  concurrency: [{ concurrency: 50 }],
  rate: [{ rate: 1_000_000, per: "1s" }],
};

const transport = await openTransport("ioredis", a.url);
const admin = await openTransport("ioredis", a.url);
await admin.call("FLUSHDB");
let performed = 0;
let finished!: () => void;
const allDone = new Promise<void>((resolve) => (finished = resolve));
const Noop = defineJob({
  name: "Noop",
  limits: limits[mode],
  perform: (_ctx, _i: number) => void (++performed === jobs && finished()),
});
const feature = flowLimits({ groupLookahead: a.lookahead === undefined ? "auto" : Number(a.lookahead) });
const client = createClient({ transport: admin, features: [feature] });
for (let i = 0; i < jobs; i += 10_000) {
  const n = Math.min(10_000, jobs - i);
  if (mode === "grouped") {
    // Each chunk spreads over every group, as tenants' pushes would interleave.
    const byGroup = new Map<number, [number][]>();
    for (let j = 0; j < n; j++) byGroup.set((i + j) % groups, [...(byGroup.get((i + j) % groups) ?? []), [i + j]]);
    for (const [g, list] of byGroup) await client.pushBulk(Noop, list, { group: `tenant-${g}` });
  } else await client.pushBulk(Noop, Array.from({ length: n }, (_, j) => [i + j] as [number]));
}
const worker = createWorker({
  transport,
  jobs: [Noop],
  concurrency,
  features: mode === "plain" ? [] : [feature],
  logger: silentLogger,
  jobLogging: false,
  handleSignals: false,
  blockSeconds: 1,
  metrics: false,
});
const c0 = transport.counters.commands;
const r0 = await redisCounters(admin);
const t0 = performance.now();
await worker.run();
await allDone;
const seconds = (performance.now() - t0) / 1000;
const r1 = await redisCounters(admin);
await worker.stop();
const commands = transport.counters.commands - c0;
await Promise.allSettled([transport.close(), admin.close()]);
emit({
  mode,
  jobs,
  groups: mode === "grouped" ? groups : undefined,
  jobsPerSec: round(jobs / seconds, 0),
  seconds: round(seconds, 2),
  commandsPerJob: round(commands / jobs, 3),
  redisCpuUsPerJob: round((r1.cpuUs - r0.cpuUs) / jobs, 2),
});
