/**
 * The scaling scenarios (`npm run bench -- --scaling`, issue 32): how each
 * system's cost grows with concurrency, I/O-bound concurrency, payload size,
 * the number of queues a worker watches, and the size of a queued backlog.
 * Each row drains a seeded backlog in a fresh process, as the default
 * bench's drains do, with Redis's cost read around the seed and the drain.
 * Latency, the scheduled set, the dashboard and the profile are in
 * scaling-probes.ts.
 */
import { type Row, type Section, steadyUs } from "./report.ts";
import {
  bullmqRow,
  type Context,
  edgekiqRow,
  medianRounds,
  NODE,
  type Planned,
  runRows,
  sidekiqRow,
  timeoutMs,
} from "./scenarios.ts";
import type { FleetOptions } from "./fleet.ts";

/** The sizes of a scaling run (`--scaling` flags; see scaling.ts). */
export interface ScalingOptions {
  /** No-op jobs per drain (concurrency, queues). */
  jobs: number;
  concurrencies: number[];
  /** Seconds an I/O-bound drain lasts at its ideal rate. */
  ioSeconds: number;
  /** Most jobs an I/O-bound drain seeds. */
  ioJobsMax: number;
  /** Argument sizes, bytes. */
  payloads: number[];
  /** Bytes each payload row moves in all (jobs = this / size). */
  payloadBudget: number;
  queueCounts: number[];
  /**
   * Jobs per edgekiq drain in the queues rows: a 50,000-job drain lasts a
   * third of a second, and Redis's CPU clock over its tenths read ±30% run
   * to run. The peers drain `jobs` (seconds each already).
   */
  queueJobs: number;
  /** Jobs in the queued-backlog drain. */
  backlog: number;
  /** Jobs scheduled a day ahead in the large-schedule rows. */
  scheduled: number;
  /** Due jobs promoted in the schedule rows. */
  due: number;
  /** Retries (and as many dead jobs) for the dashboard rows. */
  retries: number;
  /** Seconds each open-loop latency point runs (the first second not counted). */
  latencySeconds: number;
  /** Rounds of every latency point (the systems interleaved); the median p99 is reported. */
  latencyRounds: number;
  /** Jobs/s of the idle-worker latency point. */
  idleRate: number;
  /** Jobs/s of the latency point every system gets alike. */
  fixedRate: number;
  fleet: FleetOptions;
  /** Jobs drained under the CPU profiler. */
  profileJobs: number;
}

/** What the scaling scenarios get: the bench's context, the sizes, and each system's measured c=10 rate. */
export interface ScalingContext extends Context {
  s: ScalingOptions;
  /** No-op c=10 jobs/s by family, from the concurrency section (the latency loads are fractions of it). */
  maxRate: Map<Row["family"], number>;
}

const fmtCount = (n: number) => n.toLocaleString("en-US");

/** Text for a row's params: `c=10`, `10 KB`, `100 queues strict`. */
export function paramText(params: Record<string, number | string>): string {
  return Object.entries(params).map(([k, v]) => {
    if (k === "c") return `c=${v}`;
    if (k === "bytes") return bytesText(Number(v));
    if (k === "queues") return `${v} queue${v === 1 ? "" : "s"}`;
    if (k === "backlog") return `${fmtCount(Number(v))} queued`;
    return String(v);
  }).join(" ");
}

export function bytesText(n: number): string {
  return n >= 1e6 ? `${n / 1e6} MB` : n >= 1e3 ? `${n / 1e3} KB` : `${n} B`;
}

/**
 * The drain rows for one set of params: edgekiq (Node, ioredis, reliable
 * fetch unless `fetches` says more), BullMQ and Sidekiq, each seeded in a
 * process of its own first. A peer without the feature is listed as skipped
 * with the reason.
 */
function drainRows(
  params: Record<string, number | string>,
  args: string[],
  peers: { bullmq?: string; sidekiq?: string; fetches?: Array<"reliable" | "basic"> } = {},
): Planned[] {
  const p = paramText(params);
  const c = typeof params.c === "number" ? params.c : 10;
  const rows: Planned[] = (peers.fetches ?? ["reliable"]).map((fetch) => ({
    ...edgekiqRow(NODE, "edgekiq-drain.ts", [...args, "--fetch", fetch], {
      fetch,
      concurrency: c,
      label: `edgekiq ${fetch} ${p}`,
    }),
    params,
    seed: true,
  }));
  rows.push({ ...bullmqRow("bullmq-drain.mjs", args, c), label: `BullMQ ${p}`, params, seed: true });
  if (peers.bullmq) rows[rows.length - 1].unavailable = peers.bullmq;
  rows.push({ ...sidekiqRow("sidekiq_drain.rb", args, c), label: `Sidekiq ${p}`, params, seed: true });
  if (peers.sidekiq) rows[rows.length - 1].unavailable = peers.sidekiq;
  return rows;
}

function section(id: string, title: string): Section {
  return { id, title, metric: "scaling", rows: [] };
}

/** (1, 7) No-op jobs at each concurrency: jobs/s, worker CPU and RSS per process, Redis per job. */
export function concurrency(ctx: ScalingContext): Promise<Section> {
  return concurrencyAt(ctx, ...ctx.s.concurrencies);
}

/**
 * No-op drains at the given concurrencies; each system's c=10 rate is kept
 * in `ctx.maxRate` (the latency scenario's loads are fractions of it).
 */
export async function concurrencyAt(ctx: ScalingContext, ...concurrencies: number[]): Promise<Section> {
  const jobs = ctx.s.jobs;
  const out = section("scaling-concurrency", `no-op jobs by concurrency: drain ${fmtCount(jobs)} seeded jobs`);
  const planned = concurrencies.flatMap((c) =>
    drainRows({ c }, ["--jobs", String(jobs), "--concurrency", String(c), "--windows", "10"])
  );
  await runRows(ctx, out, planned, timeoutMs(jobs, 300));
  for (const row of out.rows) {
    if (row.params?.c === 10 && row.outcome.status === "ok" && row.outcome.result.jobsPerSec) {
      ctx.maxRate.set(row.family, row.outcome.result.jobsPerSec);
    }
  }
  return out;
}

/**
 * For the lead: the no-op c=10 drain with the prefetch the engine adapts to
 * (at most 100 beyond the running jobs) and with larger fixed ones, rounds
 * interleaved. A round trip costs the worker a socket write, and that write
 * tops the profile; larger batches are fewer round trips.
 */
export async function prefetch(ctx: ScalingContext): Promise<Section> {
  const jobs = ctx.s.jobs * 2;
  const out = section("scaling-prefetch", `prefetch: no-op c=10 drains of ${fmtCount(jobs)} jobs, three rounds`);
  const planned: Planned[] = [];
  for (let round = 1; round <= 3; round++) {
    for (const fixed of [undefined, 100, 300, 1000]) {
      const name = fixed === undefined ? "adaptive" : `fixed ${fixed}`;
      const args = ["--jobs", String(jobs), "--concurrency", "10", "--fetch", "reliable"];
      planned.push({
        ...edgekiqRow(NODE, "edgekiq-drain.ts", fixed === undefined ? args : [...args, "--prefetch", String(fixed)], {
          fetch: "reliable",
          concurrency: 10,
          label: `edgekiq prefetch ${name}, round ${round}`,
        }),
        params: { prefetch: name, round },
        seed: true,
      });
    }
  }
  await runRows(ctx, out, planned, timeoutMs(jobs, 500));
  return out;
}

/** (1) I/O-bound jobs (each awaits 20 ms) at each concurrency: efficiency against concurrency / 20 ms. */
export async function ioBound(ctx: ScalingContext): Promise<Section> {
  const out = section(
    "scaling-io",
    `I/O-bound jobs (each sleeps 20 ms) by concurrency: ideal = c x 50 jobs/s, ~${ctx.s.ioSeconds} s at ideal`,
  );
  const planned = ctx.s.concurrencies.flatMap((c) => {
    const jobs = Math.min(ctx.s.ioJobsMax, Math.max(100, Math.round(c * 50 * ctx.s.ioSeconds)));
    return drainRows({ c }, ["--jobs", String(jobs), "--concurrency", String(c), "--sleep-ms", "20"]);
  });
  const most = Math.min(ctx.s.ioJobsMax, Math.max(...ctx.s.concurrencies) * 50 * ctx.s.ioSeconds);
  await runRows(ctx, out, planned, timeoutMs(most, 100));
  return out;
}

/** (3) Argument size: jobs/s and MB/s, c=10. */
export async function payload(ctx: ScalingContext): Promise<Section> {
  const out = section(
    "scaling-payload",
    `payload size: c=10 drains moving ~${bytesText(ctx.s.payloadBudget)} per size (at most ${
      fmtCount(ctx.s.jobs)
    } jobs)`,
  );
  const planned = ctx.s.payloads.flatMap((bytes) => {
    const jobs = Math.max(20, Math.min(ctx.s.jobs, Math.floor(ctx.s.payloadBudget / bytes)));
    return drainRows({ bytes }, ["--jobs", String(jobs), "--concurrency", "10", "--payload", String(bytes)]);
  });
  await runRows(ctx, out, planned, timeoutMs(ctx.s.jobs, 100));
  return out;
}

/**
 * Rounds of each edgekiq queues row: one 300,000-job drain's Redis CPU reads ±15% from run to run on a shared
 * machine (two identical rows of one run: 0.92 and 1.23 µs/job), as much as the effect measured. The row with the
 * median steady cost is kept, with every round's beside it.
 */
const QUEUE_ROUNDS = 3;

/** (4) Queues: the load on one queue, the rest empty; strict and weighted. Fetch cost per job. */
export async function queues(ctx: ScalingContext): Promise<Section> {
  const { jobs, queueJobs } = ctx.s;
  const out = section(
    "scaling-queues",
    `queues: ${fmtCount(queueJobs)} no-op jobs (the peers: ${fmtCount(jobs)}) on one queue, the worker (c=10) ` +
      `watching N (the loaded one listed last); edgekiq: the median of ${QUEUE_ROUNDS} rounds`,
  );
  const peers = {
    bullmq: "a BullMQ Worker takes one queue",
    fetches: ["reliable", "basic"] as Array<"reliable" | "basic">,
  };
  const args = (count: number, n: number, mode: string) => [
    ...["--jobs", String(count), "--concurrency", "10"],
    ...["--queues", String(n), "--queue-mode", mode, "--windows", "10"],
  ];
  const each = (f: (mode: "strict" | "weighted", n: number) => Planned[]) =>
    (["strict", "weighted"] as const).flatMap((mode) => ctx.s.queueCounts.flatMap((n) => f(mode, n)));
  // Rounds interleaved: every edgekiq row once, then again, so a busy spell on the machine hits them alike.
  const ours = Array.from(
    { length: QUEUE_ROUNDS },
    () =>
      each((mode, n) =>
        drainRows({ queues: n, mode }, args(queueJobs, n, mode), peers).filter((r) => r.family === "edgekiq")
      ),
  ).flat();
  await runRows(ctx, out, ours, timeoutMs(queueJobs, 200));
  out.rows = medianRounds(out.rows, steadyUs, "roundsSteadyRedisUs");
  await runRows(
    ctx,
    out,
    each((mode, n) => drainRows({ queues: n, mode }, args(jobs, n, mode), peers).filter((r) => r.family !== "edgekiq")),
    timeoutMs(jobs, 200),
  );
  return out;
}

/** (5) A large queued backlog: Redis memory per job, and the drain's rate and Redis cost at its start and end. */
export async function backlog(ctx: ScalingContext): Promise<Section> {
  const jobs = ctx.s.backlog;
  const out = section(
    "scaling-backlog",
    `queued backlog: ${fmtCount(jobs)} no-op jobs seeded, drained at c=10 (tenths of the drain compared)`,
  );
  const planned = drainRows({ backlog: jobs }, ["--jobs", String(jobs), "--concurrency", "10", "--windows", "10"]);
  await runRows(ctx, out, planned, timeoutMs(jobs, 500));
  return out;
}
