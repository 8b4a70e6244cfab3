/**
 * Redis instructions per job, counted by valgrind's callgrind: a
 * deterministic measure of what a job costs the one Redis core a fleet
 * shares, unlike CPU time on a shared, noisy machine.
 *
 * A private redis-server runs under `valgrind --tool=callgrind
 * --instr-atstart=no`; around each phase (the seeding push, then the drain)
 * the harness switches instrumentation on and off with `callgrind_control
 * -i on|off <pid>` and dumps (`-d`): each dump holds the counts since the
 * last, and its `totals:` line is the phase's instruction count. Counted:
 * everything Redis's process does in user space during the phase (command
 * execution, Lua, networking, its 10 Hz cron); not the kernel's side of the
 * sockets.
 *
 *   npm run bench -- --only redis-cost [--jobs 20000] [--baseline <ref>]
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Row, Section } from "./report.ts";
import type { Context } from "./scenarios.ts";
import { edgekiqCommand, sidekiqUnavailable } from "./commands.ts";
import { costBetween, type RedisCost, redisSnapshot } from "./redis-snapshot.ts";
import { benchDir, flushRedis, freePort, type Outcome, progress, redisCommand, runChild, sleep } from "./support.ts";

/** Why callgrind cannot run here, or null. */
export function callgrindUnavailable(): string | null {
  const probe = spawnSync("sh", [
    "-c",
    "command -v valgrind && command -v callgrind_control && command -v redis-server",
  ]);
  return probe.status === 0 ? null : "needs valgrind, callgrind_control and redis-server on PATH";
}

/** A redis-server under callgrind, instrumentation off until asked. */
async function startCallgrindRedis(dir: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const proc = spawn("valgrind", [
    "--tool=callgrind",
    "--instr-atstart=no",
    `--callgrind-out-file=${dir}/callgrind.out.%p`,
    "redis-server",
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
  ], { stdio: ["ignore", "ignore", "ignore"] });
  const kill = () => proc.kill("SIGKILL");
  process.once("exit", kill);
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await redisCommand(url, ["PING"], 2000)) === "PONG") break;
    } catch { /* valgrind starts slowly */ }
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error("redis-server under callgrind did not start");
    await sleep(200);
  }
  return {
    url,
    pid: proc.pid!,
    stop: async () => {
      process.off("exit", kill);
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGTERM");
      await Promise.race([exited, sleep(20_000)]);
      if (proc.exitCode === null) proc.kill("SIGKILL");
    },
  };
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync("callgrind_control", [...args, String(pid)], { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(" ")} failed: ${r.stderr || r.stdout}`);
}

/** Instructions Redis executed while `phase` ran, and the commands it processed. */
async function counted(
  redis: { url: string; pid: number },
  dir: string,
  phase: () => Promise<Outcome>,
): Promise<{ outcome: Outcome; instructions: number; cost: RedisCost }> {
  const before = await redisSnapshot(redis.url);
  control(redis.pid, "-i", "on");
  const outcome = await phase();
  control(redis.pid, "-i", "off");
  const cost = costBetween(before, await redisSnapshot(redis.url));
  control(redis.pid, "-d");
  const dumps = readdirSync(dir).filter((f) => /^callgrind\.out\.\d+\.\d+$/.test(f));
  const newest = dumps.sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop())).pop();
  const totals = newest && /^totals:\s*(\d+)/m.exec(readFileSync(`${dir}/${newest}`, "utf8"));
  if (!totals) throw new Error(`no callgrind dump with totals in ${dir}`);
  return { outcome, instructions: Number(totals[1]), cost };
}

/** (9) Redis instructions per job under callgrind: push and c=10 drain, edgekiq and its peers. */
export async function redisCost(ctx: Context): Promise<Section> {
  const jobs = Math.min(ctx.jobs, 20_000);
  const section: Section = {
    id: "redis-cost",
    title: `Redis instructions per job (callgrind), ${
      jobs.toLocaleString("en-US")
    } no-op jobs: bulk push, then a c=10 drain`,
    metric: "instructions",
    rows: [],
  };
  const unavailable = callgrindUnavailable();
  const args = ["--jobs", String(jobs), "--concurrency", "10", "--deadline", "1200"];
  const systems: Array<Omit<Row, "outcome"> & { command: { command: string; args: string[] }; args: string[] }> = [
    {
      label: "edgekiq node/ioredis reliable",
      family: "edgekiq",
      variant: "node/ioredis",
      fetch: "reliable",
      command: edgekiqCommand("node", "edgekiq-drain.ts"),
      args: ["--transport", "ioredis", ...args, "--fetch", "reliable"],
    },
    {
      label: "edgekiq node/ioredis basic",
      family: "edgekiq",
      variant: "node/ioredis",
      fetch: "basic",
      command: edgekiqCommand("node", "edgekiq-drain.ts"),
      args: ["--transport", "ioredis", ...args, "--fetch", "basic"],
    },
  ];
  if (ctx.baseline) {
    systems.push({
      label: `edgekiq@${ctx.baseline.ref} node/ioredis reliable`,
      family: "edgekiq",
      variant: `node/ioredis@${ctx.baseline.ref}`,
      fetch: "reliable",
      command: { command: ctx.baseline.command, args: ctx.baseline.args },
      args: ["--transport", "ioredis", ...args, "--fetch", "reliable"],
    });
  }
  systems.push(
    {
      label: "BullMQ 6 (node)",
      family: "bullmq",
      command: { command: process.execPath, args: [`${benchDir}bullmq-drain.mjs`] },
      args,
    },
    {
      label: "Sidekiq 6.4 (ruby)",
      family: "sidekiq",
      command: { command: "ruby", args: [`${benchDir}sidekiq_drain.rb`] },
      args,
    },
  );
  const dir = mkdtempSync(join(tmpdir(), "edgekiq-callgrind-"));
  const redis = unavailable ? undefined : await startCallgrindRedis(dir);
  try {
    for (const { command, args: childArgs, ...row } of systems) {
      const skip = unavailable ?? (row.family === "sidekiq" ? sidekiqUnavailable() : null);
      if (!redis || skip) {
        section.rows.push({ ...row, outcome: { status: "skipped", detail: skip ?? "unavailable", wallSeconds: 0 } });
        continue;
      }
      progress(`${section.title}: ${row.label} ...`);
      await flushRedis(redis.url);
      const run = (phase: string) => () =>
        runChild(command, [...childArgs, "--url", redis.url, "--phase", phase], {}, 1_200_000);
      const push = await counted(redis, dir, run("seed"));
      const drain = push.outcome.status === "ok" ? await counted(redis, dir, run("drain")) : push;
      const outcome: Outcome = drain.outcome.status !== "ok" ? drain.outcome : {
        status: "ok",
        wallSeconds: push.outcome.wallSeconds + drain.outcome.wallSeconds,
        result: {
          jobs,
          pushInstructionsPerJob: Math.round(push.instructions / jobs),
          drainInstructionsPerJob: Math.round(drain.instructions / jobs),
          pushCommandsPerJob: Math.round((push.cost.commands / jobs) * 1000) / 1000,
          drainCommandsPerJob: Math.round((drain.cost.commands / jobs) * 1000) / 1000,
          readsPerJob: Math.round(((push.cost.reads + drain.cost.reads) / jobs) * 1000) / 1000,
        },
      };
      const r = outcome.status === "ok" ? outcome.result : undefined;
      progress(
        `${row.label}: ${
          r ? `push ${r.pushInstructionsPerJob} + drain ${r.drainInstructionsPerJob} instructions/job` : outcome.status
        }`,
      );
      section.rows.push({ ...row, outcome });
    }
  } finally {
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return section;
}
