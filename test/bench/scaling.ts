/**
 * `npm run bench -- --scaling` (issue 32): how edgekiq's cost grows along
 * each axis beside BullMQ and Sidekiq 6.4, in one run on one private
 * redis-server. Writes bench/scaling.json, bench/scaling.txt and
 * bench/scaling.svg; the default `npm run bench` is untouched.
 * docs/performance.md says what each section measures and how.
 *
 *   npm run bench -- --scaling                       # everything at this machine's sizes (~28 min on 2 cores)
 *   npm run bench -- --scaling --quick               # small sizes (~8 min), for trying changes
 *   npm run bench -- --scaling --render              # tables and charts again from bench/scaling.json
 *   npm run bench -- --scaling --only queues,latency # concurrency io latency payload queues backlog
 *                                                    # schedule dashboard fleet profile prefetch
 *   npm run bench -- --scaling --backlog 10000000 --scheduled 1000000 --retries 1000000 \
 *     --fleet-processes 1,2,4,8,16,32 --fleet-redis 1,2,4          # a big machine's run
 *
 * Sizes (defaults, --quick in brackets): --jobs 50000 [10000] no-op jobs per
 * drain; --concurrency 1,10,100,1000; --io-seconds 5 [2] at the ideal rate,
 * at most --io-jobs 250000 [50000]; --payloads 100,10000,100000,1000000
 * bytes moving --payload-mb 200 [40] each; --queues 1,10,100,1000 with --queue-jobs 300000 [50000] per edgekiq drain;
 * --backlog 500000 [50000]; --scheduled 1000000 [100000] waiting beside
 * --due 20000 [5000] due; --retries 1000000 [50000]; --latency-seconds 6
 * [3] in --latency-rounds 3 [1]; --idle-rate 200 [100] and --fixed-rate
 * 2000 [1000] jobs/s; --fleet-processes 1,2,4; --fleet-redis 1;
 * --fleet-jobs 200000 [50000]; --profile-jobs 200000 [50000].
 */
import { cpus, loadavg } from "node:os";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Section } from "./report.ts";
import { fleet } from "./fleet.ts";
import {
  backlog,
  concurrency,
  ioBound,
  payload,
  prefetch,
  queues,
  type ScalingContext,
  type ScalingOptions,
} from "./scaling-scenarios.ts";
import { dashboardCost, latency, profile, schedule } from "./scaling-probes.ts";
import { formatScaling, scalingSvg } from "./scaling-report.ts";
import { progress, redisCommand, repoRoot } from "./support.ts";

const SCENARIOS: Array<{ id: string; run: (ctx: ScalingContext) => Promise<Section> }> = [
  { id: "concurrency", run: concurrency },
  { id: "io", run: ioBound },
  { id: "latency", run: latency },
  { id: "payload", run: payload },
  { id: "queues", run: queues },
  { id: "backlog", run: backlog },
  { id: "schedule", run: schedule },
  { id: "dashboard", run: dashboardCost },
  { id: "fleet", run: (ctx) => fleet(ctx, ctx.s.fleet) },
  { id: "profile", run: profile },
  { id: "prefetch", run: prefetch },
];

/** The edgekiq child scripts the scaling run bundles for Node. */
export const SCALING_SCRIPTS = [
  "edgekiq-drain.ts",
  "edgekiq-openloop.ts",
  "edgekiq-promote.ts",
  "edgekiq-dashboard.ts",
  "edgekiq-fleet.ts",
];

/** The sizes of a scaling run, from the flags. */
export function scalingOptions(flag: (name: string) => string | undefined, quick: boolean): ScalingOptions {
  const count = (name: string, normal: number, small: number, min = 1, max = 100_000_000) => {
    const text = flag(name);
    const n = text === undefined ? (quick ? small : normal) : Number(text);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new Error(`--${name} must be a whole number from ${min} to ${max.toLocaleString("en-US")}: got ${text}`);
    }
    return n;
  };
  const list = (name: string, normal: number[], max = 100_000_000) => {
    const text = flag(name);
    if (text === undefined) return normal;
    const values = text.split(",").map(Number);
    if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 1 || v > max)) {
      throw new Error(`--${name} must be whole numbers from 1 to ${max} separated by commas: got ${text}`);
    }
    return values;
  };
  return {
    jobs: count("jobs", 50_000, 10_000, 100),
    concurrencies: list("concurrency", [1, 10, 100, 1000], 10_000),
    ioSeconds: count("io-seconds", 5, 2, 1, 600),
    ioJobsMax: count("io-jobs", 250_000, 50_000, 100),
    payloads: list("payloads", [100, 10_000, 100_000, 1_000_000], 100_000_000),
    payloadBudget: count("payload-mb", 200, 40, 1, 100_000) * 1e6,
    queueCounts: list("queues", [1, 10, 100, 1000], 100_000),
    queueJobs: count("queue-jobs", 300_000, 50_000, 100),
    backlog: count("backlog", 500_000, 50_000, 100),
    scheduled: count("scheduled", 1_000_000, 100_000, 1),
    due: count("due", 20_000, 5_000, 1),
    retries: count("retries", 1_000_000, 50_000, 100),
    latencySeconds: count("latency-seconds", 6, 3, 3, 600),
    latencyRounds: count("latency-rounds", 3, 1, 1, 100),
    idleRate: count("idle-rate", 200, 100, 1, 100_000),
    fixedRate: count("fixed-rate", 2000, 1000, 1, 10_000_000),
    fleet: {
      sizes: list("fleet-processes", [1, 2, 4], 1024),
      servers: list("fleet-redis", [1], 64),
      jobs: count("fleet-jobs", 200_000, 50_000, 100),
      sidekiq: true,
    },
    profileJobs: count("profile-jobs", 200_000, 50_000, 100),
  };
}

/** Runs the selected scaling scenarios and writes bench/scaling.json and bench/scaling.svg. */
export async function runScaling(
  base: { url: string; quick: boolean; only: string[]; meta: Record<string, unknown> },
  s: ScalingOptions,
): Promise<void> {
  const selected = SCENARIOS.filter((x) => base.only.length === 0 || base.only.includes(x.id));
  if (selected.length === 0) {
    throw new Error(`--only ${base.only.join(",")} matches no scaling scenario: ${SCENARIOS.map((x) => x.id)}`);
  }
  const started = performance.now();
  const load = loadavg().map((l) => l.toFixed(2)).join(" ");
  progress(`scaling: ${selected.map((x) => x.id).join(", ")}; load average ${load} on ${cpus().length} cores`);
  // Every command over 1 ms goes to the slow log: the rows report the longest (how long Redis was blocked).
  await redisCommand(base.url, ["CONFIG", "SET", "slowlog-log-slower-than", "1000"]);
  const ctx: ScalingContext = { url: base.url, jobs: s.jobs, quick: base.quick, s, maxRate: new Map() };
  const sections: Section[] = [];
  for (const scenario of selected) sections.push(await scenario.run(ctx));
  const meta: Record<string, unknown> = {
    ...base.meta,
    scaling: s,
    loadAverageAtStart: load,
    loadAverageAtEnd: loadavg().map((l) => l.toFixed(2)).join(" "),
    seconds: Math.round((performance.now() - started) / 1000),
  };
  const dir = `${repoRoot}bench`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/scaling.json`, JSON.stringify({ meta, sections }, null, 2) + "\n");
  process.stdout.write(writeScalingReport(meta, sections));
  progress(`scaling done in ${meta.seconds} s; wrote bench/scaling.json, bench/scaling.txt and bench/scaling.svg`);
}

/** Writes bench/scaling.txt and bench/scaling.svg from a run's results; returns the text. */
function writeScalingReport(meta: Record<string, unknown>, sections: Section[]): string {
  const text = [
    `edgekiq scaling benchmark — ${meta.date}, ${meta.cpus} cores (${meta.cpuModel}), load average ` +
    `${meta.loadAverageAtStart} at the start and ${meta.loadAverageAtEnd} at the end, node ${meta.node}, ` +
    `bullmq ${meta.bullmq}, redis ${meta.redis}`,
    "worker µs/job = the worker process's CPU (user + system) over the second half of the drain, per job; " +
    "Redis µs/job = Redis's main-thread CPU over the drain, per job; e/peer = edgekiq's figure over the peer's " +
    "at the same params",
    "",
    ...sections.flatMap((x) => [formatScaling(x), ""]),
  ].join("\n") + "\n";
  writeFileSync(`${repoRoot}bench/scaling.svg`, scalingSvg(sections, String(meta.date)));
  writeFileSync(`${repoRoot}bench/scaling.txt`, text);
  return text;
}

/** `--scaling --render`: the tables and charts again from bench/scaling.json, nothing run. */
export function renderScaling(): void {
  const { meta, sections } = JSON.parse(readFileSync(`${repoRoot}bench/scaling.json`, "utf8"));
  writeScalingReport(meta, sections);
  progress("wrote bench/scaling.txt and bench/scaling.svg from bench/scaling.json");
}
