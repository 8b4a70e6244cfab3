/**
 * The benchmark scenarios: which systems run, with which arguments, and in
 * what order. Each scenario runs edgekiq and its peers back to back on the
 * same Redis, flushed between runs, one fresh child process per system.
 */
import { existsSync } from "node:fs";
import { type Row, type Section, steadyRate } from "./report.ts";
import { edgekiqCommand, runtimeUnavailable, sidekiqUnavailable } from "./commands.ts";
import { costBetween, longestCommandMs, perJob, redisSnapshot } from "./redis-snapshot.ts";
import { benchDir, type ChildResult, flushRedis, type Outcome, progress, repoRoot, runChild } from "./support.ts";

/** What every scenario gets from the runner. */
export interface Context {
  url: string;
  /** Jobs for throughput scenarios (100k by default, 10k with --quick). */
  jobs: number;
  quick: boolean;
  /** An older edgekiq (`--baseline <ref>`) run beside the current one in the drain scenarios. */
  baseline?: { ref: string; command: string; args: string[] };
}

/** An edgekiq runtime/transport pairing. */
export interface Variant {
  runtime: "node" | "bun" | "deno";
  transport: "ioredis" | "bun";
}

export const variantName = (v: Variant): string => `${v.runtime}/${v.transport}`;
export const NODE: Variant = { runtime: "node", transport: "ioredis" };
const ALL_VARIANTS: Variant[] = [
  NODE,
  { runtime: "bun", transport: "bun" },
  { runtime: "bun", transport: "ioredis" },
  { runtime: "deno", transport: "ioredis" },
];
const QUICK_VARIANTS: Variant[] = [NODE, { runtime: "bun", transport: "bun" }, {
  runtime: "deno",
  transport: "ioredis",
}];

/** A row to run: how to start it and how to label it. */
export interface Planned extends Omit<Row, "outcome"> {
  command: { command: string; args: string[] };
  args: string[];
  /** Why it cannot run here, if it cannot. */
  unavailable?: string | null;
  /** Seed in a separate process first (`--phase seed`), then time `--phase drain`. */
  seed?: boolean;
}

/** Minimum plausible rate a child must reach before it counts as hung (jobs/s). */
export const timeoutMs = (jobs: number, minRate: number) => 45_000 + Math.ceil((jobs / minRate) * 1000);

/**
 * Runs planned rows one after another on a flushed Redis, with Redis's cost
 * per job (and, for a seeded row, the memory the seed took) read around
 * each phase, and appends them to `section`.
 */
export async function runRows(
  ctx: Context,
  section: Section,
  planned: Planned[],
  childTimeoutMs: number,
): Promise<Section> {
  for (const p of planned) {
    let outcome: Outcome;
    if (p.unavailable) {
      outcome = { status: "skipped", detail: p.unavailable, wallSeconds: 0 };
      progress(`${section.title}: ${p.label}: skipped (${p.unavailable})`);
    } else {
      await flushRedis(ctx.url);
      progress(`${section.title}: ${p.label} ...`);
      const deadline = String(Math.floor(childTimeoutMs / 1000) - 5);
      const common = [...p.args, "--url", ctx.url, "--deadline", deadline];
      // Redis's own cost is read around each phase: the seeding child is the
      // push, the timed child the drain (fixed costs such as connecting and
      // loading scripts are under 1% of a 100k-job run).
      await longestCommandMs(ctx.url);
      const s0 = await redisSnapshot(ctx.url);
      const seeded = p.seed ? await runChild(p.command, [...common, "--phase", "seed"], {}, childTimeoutMs) : undefined;
      const s1 = await redisSnapshot(ctx.url);
      outcome = seeded && seeded.status !== "ok"
        ? seeded
        : await runChild(p.command, p.seed ? [...common, "--phase", "drain"] : common, {}, childTimeoutMs);
      const s2 = await redisSnapshot(ctx.url);
      if (outcome.status === "ok") {
        const jobs = Number(outcome.result.jobs ?? ctx.jobs);
        outcome.result.redis = p.seed
          ? { push: perJob(costBetween(s0, s1), jobs), drain: perJob(costBetween(s1, s2), jobs) }
          : { run: perJob(costBetween(s1, s2), jobs) };
        if (p.seed) outcome.result.redisBytesPerJob = Math.round((s1.memory - s0.memory) / jobs);
        // Recorded only where the slow log was set low (the scaling run): Redis blocked by one command.
        const longest = await longestCommandMs(ctx.url);
        if (longest > 0) outcome.result.redisLongestMs = longest;
      }
      progress(`${section.title}: ${p.label}: ${describeOutcome(outcome)}`);
    }
    const { command: _c, args: _a, unavailable: _u, seed: _s, ...row } = p;
    section.rows.push({ ...row, outcome });
  }
  await flushRedis(ctx.url);
  return section;
}

function describeOutcome(o: Outcome): string {
  if (o.status !== "ok") return `${o.status}: ${o.detail}`;
  const r: ChildResult = o.result;
  const redis = r.redis as { push?: { us: number }; drain?: { us: number } } | undefined;
  const cost = redis?.push && redis.drain ? `; Redis ${redis.push.us} + ${redis.drain.us} µs/job` : "";
  const main = r.p50 != null
    ? `p50 ${r.p50} ms, p99 ${r.p99} ms`
    : `${Math.round(r.jobsPerSec ?? 0).toLocaleString("en-US")} jobs/s` +
      (r.pctIdeal != null ? ` (${r.pctIdeal}% of ideal)` : "");
  return `${main}${cost} [child ${o.wallSeconds.toFixed(1)} s]`;
}

export function edgekiqRow(
  v: Variant,
  script: string,
  args: string[],
  extra: { fetch?: "reliable" | "basic"; concurrency?: number; label?: string } = {},
): Planned {
  return {
    label: extra.label ?? `edgekiq ${variantName(v)}${extra.fetch ? ` ${extra.fetch}` : ""}`,
    family: "edgekiq",
    variant: variantName(v),
    fetch: extra.fetch,
    concurrency: extra.concurrency,
    command: edgekiqCommand(v.runtime, script),
    args: ["--transport", v.transport, ...args],
    unavailable: runtimeUnavailable(v.runtime) ??
      (existsSync(`${repoRoot}${adapterPath(v.transport)}`) ? null : `${adapterPath(v.transport)} is missing`),
  };
}

/** Where a transport adapter's module lives. */
function adapterPath(transport: string): string {
  return `src/transport/adapters/${transport}/${transport}_transport.ts`;
}

export function bullmqRow(script: string, args: string[], concurrency?: number): Planned {
  return {
    label: "BullMQ 6 (node)",
    family: "bullmq",
    concurrency,
    command: { command: process.execPath, args: [`${benchDir}${script}`] },
    args,
  };
}

export function sidekiqRow(
  script: string,
  args: string[],
  concurrency?: number,
  label = "Sidekiq 6.4 (ruby)",
): Planned {
  return {
    label,
    family: "sidekiq",
    concurrency,
    command: { command: "ruby", args: [`${benchDir}${script}`] },
    args,
    unavailable: sidekiqUnavailable(),
  };
}

/**
 * Rows of the same label (rounds of one row) collapsed into the one with the median `figure`; every round's figure is
 * kept on it as `roundsKey`. Rows without the figure sort last.
 */
export function medianRounds(
  rows: Row[],
  figure: (result: Record<string, unknown>) => number | undefined,
  roundsKey: string,
): Row[] {
  const of = (row: Row) => (row.outcome.status === "ok" ? figure(row.outcome.result) : undefined) ?? Infinity;
  const byLabel = new Map<string, Row[]>();
  for (const row of rows) byLabel.set(row.label, [...(byLabel.get(row.label) ?? []), row]);
  return [...byLabel.values()].map((rounds) => {
    if (rounds.length === 1) return rounds[0];
    const sorted = [...rounds].sort((a, b) => of(a) - of(b));
    const median = sorted[Math.floor((sorted.length - 1) / 2)];
    if (median.outcome.status === "ok") {
      median.outcome.result[roundsKey] = rounds.map((r) => Math.round(of(r) * 100) / 100);
    }
    return median;
  });
}

/**
 * Rounds of the reference rows (edgekiq on Node with reliable fetch, BullMQ, Sidekiq) in the c=10 drain, whose ratios
 * are goals: one 100,000-job drain lasts half a second for edgekiq, and on a shared 2-core machine two runs of the same
 * row read 165k and 215k jobs/s. The rounds are interleaved and the median steady rate kept.
 */
const REFERENCE_ROUNDS = 3;

/** (1) Drain N pre-enqueued no-op jobs at one concurrency. */
export async function drain(ctx: Context, concurrency: number): Promise<Section> {
  const rounds = concurrency === 10 && !ctx.quick ? REFERENCE_ROUNDS : 1;
  const section: Section = {
    id: `drain-c${concurrency}`,
    title: `drain ${ctx.jobs.toLocaleString("en-US")} no-op jobs, concurrency ${concurrency}` +
      (rounds > 1 ? ` (the peers and node/ioredis reliable: median of ${rounds})` : ""),
    metric: "jobsPerSec",
    rows: [],
  };
  // Tenths for every system: the table shows the steady rate (tenths 2-10) beside the whole drain's.
  const args = ["--jobs", String(ctx.jobs), "--concurrency", String(concurrency), "--windows", "10"];
  const planned: Planned[] = [];
  for (const v of ctx.quick ? QUICK_VARIANTS : ALL_VARIANTS) {
    const fetches: Array<"reliable" | "basic"> = ctx.quick && v !== NODE ? ["reliable"] : ["reliable", "basic"];
    for (const fetch of fetches) {
      planned.push({
        ...edgekiqRow(v, "edgekiq-drain.ts", [...args, "--fetch", fetch], { fetch, concurrency }),
        seed: true,
      });
    }
  }
  if (ctx.baseline) {
    const { ref, command, args: base } = ctx.baseline;
    planned.push({
      label: `edgekiq@${ref} node/ioredis reliable`,
      family: "edgekiq",
      variant: `node/ioredis@${ref}`,
      fetch: "reliable",
      concurrency,
      command: { command, args: base },
      args: ["--transport", "ioredis", ...args, "--fetch", "reliable"],
      seed: true,
    });
  }
  planned.push({ ...bullmqRow("bullmq-drain.mjs", args, concurrency), seed: true });
  planned.push({ ...sidekiqRow("sidekiq_drain.rb", args, concurrency), seed: true });
  const reference = planned.filter((p) =>
    p.family !== "edgekiq" || (p.variant === "node/ioredis" && p.fetch === "reliable")
  );
  for (let round = 2; round <= rounds; round++) planned.push(...reference);
  await runRows(ctx, section, planned, timeoutMs(ctx.jobs, 500));
  if (rounds > 1) section.rows = medianRounds(section.rows, steadyRate, "roundsSteadyJobsPerSec");
  return section;
}

/** (2) Bulk push rate. */
export function push(ctx: Context): Promise<Section> {
  const section: Section = {
    id: "push",
    title: `bulk push ${ctx.jobs.toLocaleString("en-US")} jobs`,
    metric: "jobsPerSec",
    rows: [],
  };
  const args = ["--jobs", String(ctx.jobs)];
  const planned = (ctx.quick ? [NODE] : QUICK_VARIANTS).map((v) =>
    edgekiqRow(v, "edgekiq-push.ts", args, { label: `edgekiq ${variantName(v)} pushBulk` })
  );
  planned.push({ ...bullmqRow("bullmq-push.mjs", args), label: "BullMQ 6 addBulk" });
  planned.push(sidekiqRow("sidekiq_push.rb", args, undefined, "Sidekiq 6.4 push_bulk"));
  return runRows(ctx, section, planned, timeoutMs(ctx.jobs, 2000));
}

/** (3) Enqueue-to-perform latency on an idle worker, one job at a time. */
export function latency(ctx: Context): Promise<Section> {
  const jobs = ctx.quick ? 500 : 2000;
  // Every system gets the same uncounted warm-up, so the figures are the
  // steady state of a long-running worker, not its JIT compiling: after
  // 2,000 jobs V8 was still optimising edgekiq's path (p99 1.2-1.5 ms; after
  // 10,000, 0.5-0.7 ms).
  const warmup = ctx.quick ? 2000 : 10_000;
  const section: Section = {
    id: "latency",
    title: `enqueue-to-perform latency, idle worker, ${jobs} jobs one at a time after ${warmup} warm-up jobs`,
    metric: "latency",
    rows: [],
  };
  const args = ["--jobs", String(jobs), "--warmup", String(warmup)];
  const planned: Planned[] = [
    edgekiqRow(NODE, "edgekiq-latency.ts", [...args, "--fetch", "reliable"], { fetch: "reliable" }),
  ];
  if (!ctx.quick) {
    planned.push(edgekiqRow(NODE, "edgekiq-latency.ts", [...args, "--fetch", "basic"], { fetch: "basic" }));
    for (const v of QUICK_VARIANTS.slice(1)) {
      planned.push(edgekiqRow(v, "edgekiq-latency.ts", [...args, "--fetch", "reliable"], { fetch: "reliable" }));
    }
  }
  planned.push(bullmqRow("bullmq-latency.mjs", args));
  planned.push(sidekiqRow("sidekiq_latency.rb", args));
  return runRows(ctx, section, planned, timeoutMs(jobs + warmup, 20));
}

/** (6) Scheduled-backlog promotion: batched versus one job per call. */
export function promote(ctx: Context): Promise<Section> {
  // The one-per-call movers are slow by design (~3k jobs/s); past 100k they
  // would only take longer, not measure better.
  const slowJobs = Math.min(ctx.jobs, 100_000);
  const section: Section = {
    id: "promote",
    title: `promote ${ctx.jobs.toLocaleString("en-US")} due scheduled jobs` +
      (slowJobs < ctx.jobs ? ` (one-per-call: ${slowJobs.toLocaleString("en-US")})` : ""),
    metric: "jobsPerSec",
    rows: [],
  };
  const planned: Planned[] = [
    edgekiqRow(NODE, "edgekiq-promote.ts", ["--jobs", String(ctx.jobs), "--mode", "batched"], {
      label: "edgekiq Poller.promote (batched)",
    }),
    {
      ...edgekiqRow(NODE, "edgekiq-promote.ts", ["--jobs", String(slowJobs), "--mode", "one-per-call"], {
        label: "baseline one-per-call (node, Enq-style)",
      }),
      family: "baseline",
    },
    sidekiqRow("sidekiq_enq.rb", ["--jobs", String(slowJobs)], undefined, "Sidekiq 6.4 Scheduled::Enq"),
  ];
  return runRows(ctx, section, planned, timeoutMs(ctx.jobs, 1000));
}

/** (7) I/O-bound: each job awaits a 5 ms timer, concurrency 100. */
export function ioBound(ctx: Context): Promise<Section> {
  const jobs = ctx.quick ? 5000 : 20_000;
  const concurrency = 100;
  const section: Section = {
    id: "io",
    title: `I/O-bound: ${jobs.toLocaleString("en-US")} jobs awaiting 5 ms, concurrency 100 (ideal 20,000 jobs/s)`,
    metric: "jobsPerSec",
    rows: [],
  };
  const args = ["--jobs", String(jobs), "--concurrency", String(concurrency), "--sleep-ms", "5"];
  const planned: Planned[] = [
    {
      ...edgekiqRow(NODE, "edgekiq-drain.ts", [...args, "--fetch", "reliable"], { fetch: "reliable", concurrency }),
      seed: true,
    },
    { ...bullmqRow("bullmq-drain.mjs", args, concurrency), seed: true },
    { ...sidekiqRow("sidekiq_drain.rb", args, concurrency), seed: true },
  ];
  return runRows(ctx, section, planned, timeoutMs(jobs, 200));
}
