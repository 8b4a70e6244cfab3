/**
 * The scaling scenarios that are not plain drains: push-to-start latency
 * under an open-loop load, the scheduled set's poller cost with and without
 * a large schedule, the dashboard's cost with large retry and dead sets, and
 * a CPU profile of the no-op c=10 worker.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Row, Section } from "./report.ts";
import { edgekiqCommand, sidekiqUnavailable } from "./commands.ts";
import { costBetween, redisSnapshot } from "./redis-snapshot.ts";
import { edgekiqRow, NODE, type Planned, runRows, sidekiqRow, timeoutMs } from "./scenarios.ts";
import { concurrencyAt, type ScalingContext } from "./scaling-scenarios.ts";
import {
  benchDir,
  flushRedis,
  killTree,
  type Outcome,
  progress,
  repoRoot,
  runChild,
  sleep,
  startLongChild,
} from "./support.ts";

const fmtCount = (n: number) => n.toLocaleString("en-US");

interface LatencySystem {
  family: Row["family"];
  label: string;
  command: { command: string; args: string[] };
  args: string[];
  unavailable?: string | null;
}

/**
 * A point whose first (uncounted) second is shorter than this many jobs
 * starts with a prelude of this many uncounted jobs, at its own rate or
 * {@link PRELUDE_MIN_RATE}, whichever is higher: every system's worker is
 * then measured warm, as a long-running one is. Without it a 200 jobs/s
 * point measured V8 compiling edgekiq's and BullMQ's hot paths (TurboFan was
 * still at work after 2,000 jobs at 2,000/s; p99 2.3-2.9 ms then, 1.1-1.6
 * after 8,000); Ruby's interpreter has no such phase.
 */
const PRELUDE_JOBS = 8000;
const PRELUDE_MIN_RATE = 2000;

/**
 * Seconds of each point's load not counted, every system alike. One was too
 * few at edgekiq's 10% point (17,600 jobs/s, 2026-11-29): its per-batch
 * path runs once per dozen jobs and was still being compiled, and the
 * samples over the p99 came in clusters, most in the first 1.3 s counted
 * (p99 2.18 ms over seconds 1-6, 1.22 over seconds 3-6 of the same run).
 */
const WARMUP_SECONDS = 2;

/**
 * One open-loop point: a worker process waits, idle; a producer process
 * pushes `rate` jobs a second for `seconds` (after a prelude at a low rate);
 * the worker reports push-to-start percentiles once every job has started.
 * Both are bounded and killed.
 */
async function openLoopPoint(url: string, sys: LatencySystem, rate: number, seconds: number): Promise<Outcome> {
  const started = performance.now();
  const wall = () => (performance.now() - started) / 1000;
  await flushRedis(url);
  const prelude = rate < PRELUDE_JOBS ? PRELUDE_JOBS : 0;
  const preludeRate = Math.max(rate, PRELUDE_MIN_RATE);
  const jobs = prelude + Math.max(1, Math.round(rate * seconds));
  // Past its schedule a saturated system drains the rest: bounded at three times the run plus a minute.
  const deadline = Math.ceil((seconds + prelude / preludeRate) * 3 + 60);
  const common = [...sys.args, "--url", url, "--deadline", String(deadline)];
  const worker = startLongChild(sys.command, [...common, "--role", "worker", "--jobs", String(jobs)]);
  try {
    const ready = await Promise.race([worker.ready, sleep(30_000).then(() => false)]);
    if (!ready) return { status: "error", detail: "the worker did not get ready within 30 s", wallSeconds: wall() };
    const before = await redisSnapshot(url);
    const producer = await runChild(
      sys.command,
      [
        ...common,
        ...["--role", "producer", "--rate", String(rate), "--seconds", String(seconds)],
        ...["--warmup-seconds", String(WARMUP_SECONDS)],
        ...["--prelude-jobs", String(prelude), "--prelude-rate", String(preludeRate)],
      ],
      {},
      deadline * 1000 + 5000,
    );
    if (producer.status !== "ok") return producer;
    const result = await Promise.race([
      worker.result,
      sleep(deadline * 1000 + 5000).then(() => ({ error: "the worker did not see every job start in time" })),
    ]);
    if ("error" in result) return { status: "error", detail: String(result.error), wallSeconds: wall() };
    const cost = costBetween(before, await redisSnapshot(url));
    return {
      status: "ok",
      wallSeconds: wall(),
      result: {
        ...result,
        jobs,
        targetPerSec: rate,
        producer: producer.result,
        redisUsPerJob: Math.round((cost.cpuUs / jobs) * 100) / 100,
        // Socket reads Redis handled, less the producer's pushes: about the worker's round trips.
        workerRoundTripsPerJob: Math.round(((cost.reads - Number(producer.result.batches)) / jobs) * 100) / 100,
      },
    };
  } finally {
    killTree(worker.proc);
  }
}

/** (2) Push-to-start latency: idle, then 10%, 50% and 90% of each system's measured no-op c=10 rate. */
export async function latency(ctx: ScalingContext): Promise<Section> {
  const seconds = ctx.s.latencySeconds;
  const out: Section = {
    id: "scaling-latency",
    title: `push-to-start latency, c=10, open-loop producer in its own process: idle (${ctx.s.idleRate} jobs/s), ` +
      `${fmtCount(ctx.s.fixedRate)} jobs/s, and 10/50/90% of each system's no-op c=10 drain rate; ${seconds} s per ` +
      `point, the first ${WARMUP_SECONDS} not counted (below ${fmtCount(PRELUDE_JOBS)}/s after ${
        fmtCount(PRELUDE_JOBS)
      } uncounted jobs, at ${
        fmtCount(PRELUDE_MIN_RATE)
      }/s or more); ${ctx.s.latencyRounds} round(s), the median p99's shown`,
    metric: "scaling",
    rows: [],
  };
  const systems: LatencySystem[] = [
    {
      family: "edgekiq",
      label: "edgekiq reliable",
      command: edgekiqCommand("node", "edgekiq-openloop.ts"),
      args: ["--transport", "ioredis", "--fetch", "reliable"],
    },
    {
      family: "bullmq",
      label: "BullMQ",
      command: { command: process.execPath, args: [`${benchDir}bullmq-openloop.mjs`] },
      args: [],
    },
    {
      family: "sidekiq",
      label: "Sidekiq",
      command: { command: "ruby", args: [`${benchDir}sidekiq_openloop.rb`] },
      args: [],
      unavailable: sidekiqUnavailable(),
    },
  ];
  if (systems.some((s) => !s.unavailable && !ctx.maxRate.has(s.family))) {
    progress("latency: no c=10 drain rates from this run yet; measuring them first");
    await concurrencyAt(ctx, 10);
  }
  // Each system's loads: the same absolute rates for all first (idle, a fixed load), then its own fractions.
  const loadsOf = (sys: LatencySystem): Array<[string, number]> => {
    const max = ctx.maxRate.get(sys.family);
    const loads: Array<[string, number]> = [["idle", ctx.s.idleRate], [
      `${fmtCount(ctx.s.fixedRate)}/s`,
      ctx.s.fixedRate,
    ]];
    for (const f of [0.1, 0.5, 0.9]) if (max) loads.push([`${f * 100}%`, Math.max(1, Math.round(max * f))]);
    return loads;
  };
  // Rounds interleave the systems at each load, so a burst of other work on the machine hits them alike; a
  // row reports its round with the median p99 (every round's p99 is kept beside it).
  const runs = new Map<string, Outcome[]>();
  for (let round = 1; round <= ctx.s.latencyRounds; round++) {
    for (let li = 0; li < 5; li++) {
      for (const sys of systems) {
        const load = loadsOf(sys)[li];
        if (!load || sys.unavailable) continue;
        const label = `${sys.label} ${load[0]}`;
        progress(`latency: ${label} (${fmtCount(load[1])} jobs/s), round ${round} ...`);
        const outcome = await openLoopPoint(ctx.url, sys, load[1], seconds);
        const r = outcome.status === "ok" ? outcome.result : undefined;
        progress(
          `latency: ${label}, round ${round}: ` +
            (r
              ? `p50 ${r.p50} ms, p99 ${r.p99} ms, p99.9 ${r.p999} ms`
              : `${outcome.status}: ${"detail" in outcome ? outcome.detail : ""}`),
        );
        runs.set(label, [...(runs.get(label) ?? []), outcome]);
      }
    }
  }
  for (const sys of systems) {
    for (const [load] of loadsOf(sys)) {
      const label = `${sys.label} ${load}`;
      const outcomes = runs.get(label) ?? [];
      const good = outcomes.filter((o) => o.status === "ok").sort((a, b) =>
        Number(a.result.p99) - Number(b.result.p99)
      );
      const outcome: Outcome = sys.unavailable
        ? { status: "skipped", detail: sys.unavailable, wallSeconds: 0 }
        : good.length
        ? {
          ...good[Math.floor((good.length - 1) / 2)],
          result: {
            ...good[Math.floor((good.length - 1) / 2)].result,
            roundsP99: outcomes.map((o) => o.status === "ok" ? o.result.p99 : null),
          },
        }
        : outcomes[0] ?? { status: "error", detail: "not run", wallSeconds: 0 };
      out.rows.push({ label, family: sys.family, concurrency: 10, params: { load }, outcome });
    }
  }
  await flushRedis(ctx.url);
  return out;
}

/** (5) The scheduled set: cost per promoted job and per idle poll, with an empty and a large schedule. */
export async function schedule(ctx: ScalingContext): Promise<Section> {
  const due = ctx.s.due;
  const out: Section = {
    id: "scaling-schedule",
    title: `scheduled set: promote ${fmtCount(due)} due jobs, and 200 idle polls, beside 0 or ` +
      `${fmtCount(ctx.s.scheduled)} jobs scheduled a day ahead`,
    metric: "scaling",
    rows: [],
  };
  const planned: Planned[] = [];
  for (const waiting of [0, ctx.s.scheduled]) {
    const args = ["--jobs", String(due), "--waiting", String(waiting), "--idle-polls", "200"];
    planned.push({
      ...edgekiqRow(NODE, "edgekiq-promote.ts", [...args, "--mode", "batched"], {
        label: `edgekiq poller, ${fmtCount(waiting)} waiting`,
      }),
      params: { waiting },
    });
    planned.push({
      ...sidekiqRow("sidekiq_enq.rb", args, undefined, `Sidekiq Scheduled::Enq, ${fmtCount(waiting)} waiting`),
      params: { waiting },
    });
  }
  await runRows(ctx, out, planned, timeoutMs(ctx.s.scheduled + due, 1000));
  return out;
}

/** (5) The dashboard and `/stats` with a few and with many retries and dead jobs: Redis cost per request. */
export async function dashboardCost(ctx: ScalingContext): Promise<Section> {
  const out: Section = {
    id: "scaling-dashboard",
    title: `dashboard: Redis cost per page with 100 and ${fmtCount(ctx.s.retries)} retries (and as many dead jobs)`,
    metric: "scaling",
    rows: [],
  };
  const seeder = edgekiqCommand("node", "edgekiq-dashboard.ts");
  const limit = timeoutMs(ctx.s.retries, 2000);
  const sidekiq = sidekiqUnavailable();
  for (const retries of [100, ctx.s.retries]) {
    await flushRedis(ctx.url);
    progress(`dashboard: seeding ${fmtCount(retries)} retries and dead jobs ...`);
    const seeded = await runChild(
      seeder,
      ["--url", ctx.url, "--phase", "seed", "--retries", String(retries)],
      {},
      limit,
    );
    const measure = async (label: string, spec: { command: string; args: string[] }): Promise<Outcome> => {
      if (seeded.status !== "ok") return seeded;
      progress(`dashboard: ${label} ...`);
      return await runChild(spec, ["--url", ctx.url, "--phase", "measure", "--requests", "10"], {}, limit);
    };
    const params = { retries };
    out.rows.push({
      label: `edgekiq/web, ${fmtCount(retries)} retries`,
      family: "edgekiq",
      params,
      outcome: await measure("edgekiq", seeder),
    });
    out.rows.push({
      label: `Sidekiq::Web, ${fmtCount(retries)} retries`,
      family: "sidekiq",
      params,
      outcome: sidekiq
        ? { status: "skipped", detail: sidekiq, wallSeconds: 0 }
        : await measure("Sidekiq::Web", { command: "ruby", args: [`${benchDir}sidekiq_web.rb`] }),
    });
  }
  await flushRedis(ctx.url);
  return out;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** A V8 .cpuprofile: sample node ids, µs between samples, µs timestamps on the monotonic clock. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

/**
 * Which source module each line of an esbuild bundle came from: esbuild
 * heads each module's code with a `// src/server/fetch.ts` comment.
 */
export function bundleModules(bundle: string): (line: number) => string {
  const starts: Array<[number, string]> = [];
  bundle.split("\n").forEach((text, i) => {
    const m = /^\/\/ ((?:src|test|node_modules)\/\S+|mod\.ts)$/.exec(text);
    if (m) starts.push([i, m[1]]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= line) {
        found = starts[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/**
 * Self time per function in a V8 .cpuprofile, largest first, counting only
 * samples inside `window` (µs, the profile's clock) and naming each
 * function's module through `moduleOf` (the bundle's line map).
 */
export function selfTimes(
  profile: CpuProfile,
  window: [number, number],
  bundleUrl: string,
  moduleOf: (line: number) => string,
) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, { fn: string; where: string; area: string; us: number }>();
  let all = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (at < window[0] || at > window[1]) return;
    const frame = byId.get(id)!.callFrame;
    const where = frame.url === bundleUrl ? moduleOf(frame.lineNumber) : frame.url.replace(/^file:\/\//, "");
    const area = frame.functionName === "(idle)"
      ? "idle"
      : where.startsWith("src/") || where === "mod.ts"
      ? "edgekiq src/"
      : where.includes("node_modules/ioredis") || where.includes("node_modules/@ioredis")
      ? "ioredis"
      : where.startsWith("test/")
      ? "bench script"
      : frame.functionName === "(garbage collector)"
      ? "GC"
      : "node internals";
    const key = `${frame.functionName}|${frame.url}|${frame.lineNumber}`;
    const entry = totals.get(key) ?? { fn: frame.functionName || "(anonymous)", where, area, us: 0 };
    entry.us += us;
    totals.set(key, entry);
    if (area !== "idle") all += us;
  });
  const list = [...totals.values()].filter((e) => e.area !== "idle").sort((a, b) => b.us - a.us);
  const pct = (us: number) => Math.round((us / all) * 1000) / 10;
  const areas: Record<string, number> = {};
  for (const e of list) areas[e.area] = (areas[e.area] ?? 0) + e.us;
  const shown = (e: { fn: string; where: string; area: string; us: number }) => ({
    fn: e.fn,
    where: e.where,
    area: e.area,
    pct: pct(e.us),
  });
  return {
    busyMs: Math.round(all / 1000),
    windowMs: Math.round((window[1] - window[0]) / 1000),
    areas: Object.fromEntries(Object.entries(areas).map(([k, us]) => [k, pct(us)])),
    top: list.slice(0, 15).map(shown),
    topSrc: list.filter((e) => e.area === "edgekiq src/").slice(0, 20).map(shown),
  };
}

/**
 * The no-op c=10 worker under `node --cpu-prof` (the esbuild bundle the
 * bench runs; samples outside the drain are dropped, and each function is
 * named with the src/ module the bundle took it from): self time per
 * function, for the lead. The profile itself is kept in bench/.prof/ (not
 * committed) for a closer look in Chrome DevTools.
 */
export async function profile(ctx: ScalingContext): Promise<Section> {
  const jobs = ctx.s.profileJobs;
  const out: Section = {
    id: "scaling-profile",
    title: `CPU profile: the no-op c=10 worker (node/ioredis, reliable fetch) draining ${fmtCount(jobs)} jobs`,
    metric: "scaling",
    rows: [],
  };
  const dir = mkdtempSync(join(tmpdir(), "edgekiq-prof-"));
  const started = performance.now();
  const command = edgekiqCommand("node", "edgekiq-drain.ts");
  const bundle = command.args.at(-1)!;
  let outcome: Outcome;
  try {
    await flushRedis(ctx.url);
    const args = ["--transport", "ioredis", "--jobs", String(jobs), "--concurrency", "10", "--url", ctx.url];
    const seeded = await runChild(command, [...args, "--phase", "seed"], {}, 300_000);
    if (seeded.status !== "ok") outcome = seeded;
    else if (!bundle.endsWith(".mjs")) {
      outcome = { status: "skipped", detail: "needs the esbuild bundle (not BENCH_NODE_LOADER=tsx)", wallSeconds: 0 };
    } else {
      progress(`profile: draining ${fmtCount(jobs)} jobs under --cpu-prof ...`);
      const drained = await runChild(
        { command: command.command, args: ["--cpu-prof", "--cpu-prof-interval=200", `--cpu-prof-dir=${dir}`, bundle] },
        [...args, "--fetch", "reliable", "--phase", "drain"],
        {},
        timeoutMs(jobs, 500),
      );
      const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
      if (drained.status !== "ok") outcome = drained;
      else if (!file) outcome = { status: "error", detail: "no .cpuprofile written", wallSeconds: 0 };
      else {
        const text = readFileSync(join(dir, file), "utf8");
        mkdirSync(`${repoRoot}bench/.prof`, { recursive: true });
        writeFileSync(`${repoRoot}bench/.prof/noop-c10.cpuprofile`, text);
        const window = drained.result.drainWindowUs as [number, number];
        const times = selfTimes(
          JSON.parse(text),
          window,
          pathToFileURL(bundle).href,
          bundleModules(readFileSync(bundle, "utf8")),
        );
        outcome = {
          status: "ok",
          wallSeconds: (performance.now() - started) / 1000,
          result: {
            jobs,
            jobsPerSec: drained.result.jobsPerSec,
            cpuUsPerJob: drained.result.cpuUsPerJob,
            cpuSystemUsPerJob: drained.result.cpuSystemUsPerJob,
            ...times,
          },
        };
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  out.rows.push({ label: "edgekiq node/ioredis reliable c=10 (--cpu-prof)", family: "edgekiq", outcome });
  await flushRedis(ctx.url);
  return out;
}
