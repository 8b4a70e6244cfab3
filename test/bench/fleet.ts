/**
 * The fleet benchmark (issue 20): N worker processes against one
 * redis-server drain a seeded backlog together. Reports the fleet's jobs/s,
 * Redis's CPU utilisation over the drain, and Redis µs and commands per job,
 * for edgekiq and BullMQ. However many processes there are, one Redis core
 * serves them all: its time per job is the fleet's ceiling.
 *
 * On a 2-core machine N > 1 mostly shows the workers and Redis competing for
 * the same two cores: Redis µs/job and commands/job stay meaningful, jobs/s
 * cannot scale there.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Row, Section } from "./report.ts";
import type { Context } from "./scenarios.ts";
import { edgekiqCommand } from "./commands.ts";
import { costBetween, redisSnapshot } from "./redis-snapshot.ts";
import { benchDir, flushRedis, killTree, live, type Outcome, progress, repoRoot, runChild, sleep } from "./support.ts";

/** Worker processes per run, and each one's concurrency (issue 20's runs used c=50). */
const SIZES = [1, 2, 4];
const CONCURRENCY = 50;

interface FleetChild {
  proc: ChildProcess;
  ready: Promise<void>;
  performed: number;
  lastAt: number;
  result: Promise<Record<string, unknown>>;
}

function startChild(command: { command: string; args: string[] }, args: string[]): FleetChild {
  const proc = spawn(command.command, [...command.args, ...args], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "inherit"],
    detached: true,
  });
  live.add(proc);
  const child = { proc, performed: 0, lastAt: 0 } as FleetChild;
  let ready!: () => void;
  child.ready = new Promise((resolve) => (ready = resolve));
  let last = "";
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    if (line === "ready") ready();
    else if (line.startsWith("progress ")) {
      const [, n, at] = line.split(" ");
      child.performed = Number(n);
      child.lastAt = Number(at);
    } else last = line;
  });
  child.result = new Promise((resolve) => {
    proc.on("exit", (code) => {
      live.delete(proc);
      try {
        resolve(JSON.parse(last));
      } catch {
        resolve({ error: `exit ${code}: ${last}` });
      }
    });
  });
  return child;
}

async function runFleet(
  ctx: Context,
  system: { seed: { command: string; args: string[] }; seedArgs: string[]; child: { command: string; args: string[] } },
  size: number,
  jobs: number,
): Promise<Outcome> {
  const started = performance.now();
  const timeoutMs = 60_000 + jobs / 2;
  await flushRedis(ctx.url);
  const seeded = await runChild(system.seed, [...system.seedArgs, "--url", ctx.url, "--phase", "seed"], {}, timeoutMs);
  if (seeded.status !== "ok") return seeded;
  const children = Array.from(
    { length: size },
    () => startChild(system.child, ["--url", ctx.url, "--concurrency", String(CONCURRENCY), "--deadline", "600"]),
  );
  try {
    const ready = await Promise.race([Promise.all(children.map((c) => c.ready)).then(() => true), sleep(30_000)]);
    if (!ready) throw new Error("fleet processes not ready within 30 s");
    const before = await redisSnapshot(ctx.url);
    const t0 = Date.now();
    for (const c of children) c.proc.stdin!.write("go\n");
    const deadline = Date.now() + timeoutMs;
    while (children.reduce((n, c) => n + c.performed, 0) < jobs) {
      if (Date.now() > deadline) throw new Error(`fleet drained ${children.map((c) => c.performed)} of ${jobs}`);
      await sleep(10);
    }
    const after = await redisSnapshot(ctx.url);
    for (const c of children) c.proc.stdin!.write("stop\n");
    const results = await Promise.all(children.map((c) => c.result));
    const failed = results.find((r) => "error" in r);
    if (failed) throw new Error(String(failed.error));
    const seconds = (Math.max(...children.map((c) => c.lastAt)) - t0) / 1000;
    const cost = costBetween(before, after);
    return {
      status: "ok",
      wallSeconds: (performance.now() - started) / 1000,
      result: {
        jobs,
        jobsPerSec: Math.round(jobs / seconds),
        seconds: Math.round(seconds * 1000) / 1000,
        redisCpuPct: Math.round((cost.cpuUs / 1e6 / cost.seconds) * 1000) / 10,
        redisUsPerJob: Math.round((cost.cpuUs / jobs) * 100) / 100,
        redisCommandsPerJob: Math.round((cost.commands / jobs) * 1000) / 1000,
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
    for (const c of children) killTree(c.proc);
  }
}

/** (8) The fleet: 1, 2, 4 worker processes draining one backlog from one Redis. */
export async function fleet(ctx: Context): Promise<Section> {
  const jobs = ctx.quick ? 50_000 : 200_000;
  const section: Section = {
    id: "fleet",
    title: `fleet: N worker processes (c=${CONCURRENCY} each) drain ${jobs.toLocaleString("en-US")} no-op jobs ` +
      `from one redis-server`,
    metric: "fleet",
    rows: [],
  };
  const seedArgs = ["--jobs", String(jobs)];
  const systems = [
    {
      family: "edgekiq" as const,
      label: "edgekiq node/ioredis reliable",
      seed: edgekiqCommand("node", "edgekiq-drain.ts"),
      seedArgs: ["--transport", "ioredis", ...seedArgs],
      child: edgekiqCommand("node", "edgekiq-fleet.ts"),
    },
    {
      family: "bullmq" as const,
      label: "BullMQ 6 (node)",
      seed: { command: process.execPath, args: [`${benchDir}bullmq-drain.mjs`] },
      seedArgs,
      child: { command: process.execPath, args: [`${benchDir}bullmq-fleet.mjs`] },
    },
  ];
  for (const system of systems) {
    for (const size of SIZES) {
      progress(`${section.title}: ${system.label} x${size} ...`);
      const outcome = await runFleet(ctx, system, size, jobs);
      const r = outcome.status === "ok" ? outcome.result : undefined;
      progress(
        `fleet: ${system.label} x${size}: ` +
          (r
            ? `${r.jobsPerSec} jobs/s, Redis ${r.redisCpuPct}% CPU, ${r.redisUsPerJob} µs/job, ${r.redisCommandsPerJob} cmds/job`
            : `${outcome.status}: ${"detail" in outcome ? outcome.detail : ""}`),
      );
      const row: Row = { label: `${system.label} x${size}`, family: system.family, processes: size, outcome };
      section.rows.push(row);
    }
  }
  await flushRedis(ctx.url);
  return section;
}
