/**
 * `npm run soak`: a million no-op jobs through one edgekiq worker (Node,
 * ioredis, c=10, default options) while a producer keeps pushing, with the
 * worker's RSS and live heap (after a full GC) sampled every second. Reports
 * the growth after warm-up (the first 20% of the jobs); the goal is flat
 * within 10%.
 *
 *   npm run soak                               # 1,000,000 jobs
 *   npm run soak -- --jobs 5000000 --every 5
 *   npm run soak -- --snapshots 200000,1000000 # V8 heap snapshots into bench/ for a diff
 *
 * Writes bench/soak.json. Starts its own redis-server (never 6379).
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { createClient } from "../../mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { buildDir, bundleForNode } from "./commands.ts";
import { live, progress, repoRoot, sleep, startRedis } from "./support.ts";

interface Sample {
  seconds: number;
  performed: number;
  rssMB: number;
  heapMB: number;
  externalMB: number;
}

function flag(name: string, fallback: string): string {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : fallback;
}

async function main(): Promise<void> {
  const jobs = Number(flag("jobs", "1000000"));
  const every = flag("every", "1");
  if (!Number.isInteger(jobs) || jobs < 10_000) throw new Error(`--jobs must be a whole number >= 10,000: got ${jobs}`);
  await bundleForNode([`${repoRoot}test/bench/edgekiq-soak.ts`], buildDir);
  const redis = await startRedis();
  const transport = ioredisTransport({ url: redis.url });
  const client = createClient({ transport });
  try {
    const worker = spawn(process.execPath, [
      "--expose-gc",
      `${buildDir}edgekiq-soak.mjs`,
      "--url",
      redis.url,
      "--jobs",
      String(jobs),
      "--every",
      every,
      "--snapshots",
      flag("snapshots", ""),
      "--snapshot-dir",
      `${repoRoot}bench`,
      "--deadline",
      "3600",
    ], { stdio: ["ignore", "pipe", "inherit"], detached: true });
    live.add(worker);
    const samples: Sample[] = [];
    let last = "";
    createInterface({ input: worker.stdout! }).on("line", (line) => {
      const parsed = JSON.parse(line);
      if (parsed.sample) {
        samples.push(parsed);
        progress(`soak: ${parsed.performed} jobs, RSS ${parsed.rssMB} MB, live heap ${parsed.heapMB} MB`);
      } else last = line;
    });
    const exited = new Promise<number | null>((resolve) => worker.on("exit", resolve));
    // The producer keeps a backlog of 20k-100k jobs ahead of the worker.
    for (let pushed = 0; pushed < jobs;) {
      const backlog = Number(await transport.call("LLEN", "queue:default"));
      if (backlog > 100_000) {
        await sleep(20);
        continue;
      }
      const n = Math.min(20_000, jobs - pushed);
      await client.pushBulk("NoopJob", Array.from({ length: n }, (_, i) => [pushed + i]));
      pushed += n;
    }
    const code = await exited;
    live.delete(worker);
    const result = JSON.parse(last || "{}");
    if (code !== 0 || result.error) throw new Error(`soak worker failed (exit ${code}): ${result.error ?? last}`);
    const warm = samples.filter((s) => s.performed >= jobs * 0.2);
    const first = warm[0];
    const end = samples[samples.length - 1];
    const peak = (key: "rssMB" | "heapMB") => Math.max(...warm.map((s) => s[key]));
    const low = (key: "rssMB" | "heapMB") => Math.min(...warm.map((s) => s[key]));
    const growth = (key: "rssMB" | "heapMB") => first ? Math.round((end[key] / first[key] - 1) * 1000) / 10 : NaN;
    const report = {
      date: new Date().toISOString(),
      node: process.version,
      jobs,
      jobsPerSec: result.jobsPerSec,
      seconds: result.seconds,
      afterWarmup: first,
      end,
      rssGrowthPct: growth("rssMB"),
      heapGrowthPct: growth("heapMB"),
      rssRangeMB: [low("rssMB"), peak("rssMB")],
      heapRangeMB: [low("heapMB"), peak("heapMB")],
      snapshots: result.snapshots,
      samples,
    };
    writeFileSync(`${repoRoot}bench/soak.json`, JSON.stringify(report, null, 2) + "\n");
    process.stdout.write(
      [
        `soak: ${jobs.toLocaleString("en-US")} no-op jobs through one worker in ${result.seconds} s ` +
        `(${result.jobsPerSec} jobs/s, producer pushing alongside)`,
        `after warm-up (${first?.performed} jobs, ${first?.seconds} s): RSS ${first?.rssMB} MB, live heap ${first?.heapMB} MB`,
        `at the end (${end.performed} jobs, ${end.seconds} s): RSS ${end.rssMB} MB, live heap ${end.heapMB} MB`,
        `after warm-up, over ${warm.length} samples: RSS ${report.rssRangeMB.join("-")} MB, ` +
        `live heap ${report.heapRangeMB.join("-")} MB`,
        `growth after warm-up (end vs first): RSS ${report.rssGrowthPct}%, live heap ${report.heapGrowthPct}%; ` +
        `goal: flat within 10% -> ${Math.abs(report.rssGrowthPct) <= 10 ? "met" : "MISSED"}`,
        "wrote bench/soak.json",
      ].join("\n") + "\n",
    );
  } finally {
    await transport.close();
    await redis.stop();
  }
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`soak failed: ${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
