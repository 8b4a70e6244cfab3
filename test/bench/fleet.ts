/**
 * The fleet benchmark (issue 20): N worker processes against M
 * redis-servers drain a seeded backlog together (process i works against
 * server i mod M, each server seeded with its share, as a sharded Sidekiq
 * estate would). Reports the fleet's jobs/s, each Redis's CPU utilisation
 * over the drain, Redis µs and commands per job, and the workers' CPU per
 * job. However many processes share one Redis, one Redis core serves them
 * all: its time per job is the ceiling of a fleet on one Redis.
 *
 * On a 2-core machine N > 1 mostly shows the workers and Redis competing for
 * the same two cores: Redis µs/job and commands/job stay meaningful, jobs/s
 * cannot scale there. `npm run bench -- --scaling --only fleet
 * --fleet-processes 4,8,16,32 --fleet-redis 1,2,4` is the many-core run.
 */
import type { Row, Section } from "./report.ts";
import type { Context } from "./scenarios.ts";
import { edgekiqCommand, sidekiqUnavailable } from "./commands.ts";
import { costBetween, redisSnapshot } from "./redis-snapshot.ts";
import {
  benchDir,
  type BenchRedis,
  flushRedis,
  killTree,
  type LongChild,
  type Outcome,
  progress,
  runChild,
  sleep,
  startLongChild,
  startPrivateRedis,
} from "./support.ts";

/** Each worker process's concurrency (issue 20's runs used c=50). */
const CONCURRENCY = 50;

/** How one system seeds a backlog and runs a fleet process. */
interface FleetSystem {
  family: Row["family"];
  label: string;
  seed: { command: string; args: string[] };
  seedArgs: string[];
  child: { command: string; args: string[] };
  unavailable?: string | null;
}

/** What a fleet run is asked for. */
export interface FleetOptions {
  /** Worker process counts to run. */
  sizes: number[];
  /** Redis server counts to run (each size with each). */
  servers: number[];
  jobs: number;
  /** Include Ruby Sidekiq processes. */
  sidekiq: boolean;
}

interface Tracked {
  child: LongChild;
  performed: number;
  lastAt: number;
}

function track(command: { command: string; args: string[] }, url: string): Tracked {
  const tracked = { performed: 0, lastAt: 0 } as Tracked;
  tracked.child = startLongChild(
    command,
    ["--url", url, "--concurrency", String(CONCURRENCY), "--deadline", "600"],
    (line) => {
      if (!line.startsWith("progress ")) return;
      const [, n, at] = line.split(" ");
      tracked.performed = Number(n);
      tracked.lastAt = Number(at);
    },
  );
  return tracked;
}

async function runFleet(urls: string[], system: FleetSystem, size: number, jobs: number): Promise<Outcome> {
  const started = performance.now();
  const timeoutMs = 60_000 + jobs / 2;
  // Each server gets its share; the processes on it drain exactly that.
  const shares = urls.map((_, i) => Math.floor(jobs / urls.length) + (i < jobs % urls.length ? 1 : 0));
  for (const [i, url] of urls.entries()) {
    await flushRedis(url);
    const args = [...system.seedArgs, "--jobs", String(shares[i]), "--url", url, "--phase", "seed"];
    const seeded = await runChild(system.seed, args, {}, timeoutMs);
    if (seeded.status !== "ok") return seeded;
  }
  const children = Array.from({ length: size }, (_, i) => track(system.child, urls[i % urls.length]));
  try {
    const ready = await Promise.race([Promise.all(children.map((c) => c.child.ready)), sleep(30_000)]);
    if (!Array.isArray(ready) || !ready.every(Boolean)) throw new Error("fleet processes not ready within 30 s");
    const before = await Promise.all(urls.map(redisSnapshot));
    const t0 = Date.now();
    for (const c of children) c.child.proc.stdin!.write("go\n");
    const deadline = Date.now() + timeoutMs;
    while (children.reduce((n, c) => n + c.performed, 0) < jobs) {
      if (Date.now() > deadline) throw new Error(`fleet drained ${children.map((c) => c.performed)} of ${jobs}`);
      await sleep(10);
    }
    const costs = (await Promise.all(urls.map(redisSnapshot))).map((after, i) => costBetween(before[i], after));
    for (const c of children) c.child.proc.stdin!.write("stop\n");
    const results = await Promise.race([Promise.all(children.map((c) => c.child.result)), sleep(30_000)]);
    if (!Array.isArray(results)) throw new Error("fleet processes did not stop within 30 s");
    const failed = results.find((r) => "error" in r);
    if (failed) throw new Error(String(failed.error));
    const seconds = (Math.max(...children.map((c) => c.lastAt)) - t0) / 1000;
    const cpuUs = costs.reduce((s, c) => s + c.cpuUs, 0);
    const workerCpu = results.reduce((s, r) => s + Number(r.cpuSeconds), 0);
    return {
      status: "ok",
      wallSeconds: (performance.now() - started) / 1000,
      result: {
        jobs,
        jobsPerSec: Math.round(jobs / seconds),
        seconds: Math.round(seconds * 1000) / 1000,
        // The busiest server's utilisation: the first to run out of core.
        redisCpuPct: Math.max(...costs.map((c) => Math.round((c.cpuUs / 1e6 / c.seconds) * 1000) / 10)),
        redisUsPerJob: Math.round((cpuUs / jobs) * 100) / 100,
        redisCommandsPerJob: Math.round((costs.reduce((s, c) => s + c.commands, 0) / jobs) * 1000) / 1000,
        cpuUsPerJob: Math.round((workerCpu * 1e6 / jobs) * 100) / 100,
        rssMB: Math.max(...results.map((r) => Number(r.rssMB))),
        workerCpuSeconds: results.map((r) => r.cpuSeconds),
        perProcess: children.map((c) => c.performed),
      },
    };
  } catch (error) {
    return {
      status: "error",
      detail: String((error as Error).message),
      wallSeconds: (performance.now() - started) / 1000,
    };
  } finally {
    for (const c of children) killTree(c.child.proc);
  }
}

function systems(sidekiq: boolean): FleetSystem[] {
  const list: FleetSystem[] = [
    {
      family: "edgekiq",
      label: "edgekiq node/ioredis reliable",
      seed: edgekiqCommand("node", "edgekiq-drain.ts"),
      seedArgs: ["--transport", "ioredis"],
      child: edgekiqCommand("node", "edgekiq-fleet.ts"),
    },
    {
      family: "bullmq",
      label: "BullMQ 6 (node)",
      seed: { command: process.execPath, args: [`${benchDir}bullmq-drain.mjs`] },
      seedArgs: [],
      child: { command: process.execPath, args: [`${benchDir}bullmq-fleet.mjs`] },
    },
  ];
  if (sidekiq) {
    list.push({
      family: "sidekiq",
      label: "Sidekiq 6.4 (ruby)",
      seed: { command: "ruby", args: [`${benchDir}sidekiq_drain.rb`] },
      seedArgs: [],
      child: { command: "ruby", args: [`${benchDir}sidekiq_fleet.rb`] },
      unavailable: sidekiqUnavailable(),
    });
  }
  return list;
}

/**
 * (8) The fleet: 1, 2, 4 worker processes draining one backlog from one
 * Redis (the default bench), or any sizes against any number of Redis
 * servers (`--scaling`; the extra servers are private ones, started here).
 */
export async function fleet(ctx: Context, options?: FleetOptions): Promise<Section> {
  const o = options ?? { sizes: [1, 2, 4], servers: [1], jobs: ctx.quick ? 50_000 : 200_000, sidekiq: false };
  const multi = o.servers.some((m) => m > 1);
  const section: Section = {
    id: "fleet",
    title: `fleet: N worker processes (c=${CONCURRENCY} each) drain ${o.jobs.toLocaleString("en-US")} no-op jobs ` +
      (multi ? "from M redis-servers (process i on server i mod M)" : "from one redis-server"),
    metric: "fleet",
    rows: [],
  };
  const extra: BenchRedis[] = [];
  try {
    for (let i = 1; i < Math.max(...o.servers); i++) extra.push(await startPrivateRedis());
    for (const system of systems(o.sidekiq)) {
      for (const servers of o.servers) {
        for (const size of o.sizes) {
          const label = `${system.label} x${size}` + (multi ? ` / ${servers} Redis` : "");
          let outcome: Outcome;
          if (system.unavailable) outcome = { status: "skipped", detail: system.unavailable, wallSeconds: 0 };
          else if (size < servers) {
            outcome = { status: "skipped", detail: "fewer processes than Redis servers", wallSeconds: 0 };
          } else {
            progress(`${section.title}: ${label} ...`);
            const urls = [ctx.url, ...extra.slice(0, servers - 1).map((r) => r.url)];
            outcome = await runFleet(urls, system, size, o.jobs);
          }
          const r = outcome.status === "ok" ? outcome.result : undefined;
          progress(
            `fleet: ${label}: ` +
              (r
                ? `${r.jobsPerSec} jobs/s, Redis ${r.redisCpuPct}% CPU, ${r.redisUsPerJob} µs/job, ${r.redisCommandsPerJob} cmds/job`
                : `${outcome.status}: ${"detail" in outcome ? outcome.detail : ""}`),
          );
          section.rows.push({ label, family: system.family, processes: size, servers, outcome });
        }
      }
    }
  } finally {
    for (const r of extra) await r.stop();
  }
  await flushRedis(ctx.url);
  return section;
}
