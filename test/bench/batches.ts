/**
 * What batches and flows cost (issue 27), each figure in a fresh child
 * process against one private redis-server:
 *
 * - `drain`: a 100k-job backlog of no-op jobs drained by one worker
 *   (concurrency 10, then 100), plain jobs and then the same jobs in one
 *   batch (with a success callback): jobs/s of each, their ratio (aim:
 *   >= 60%), the commands per job the worker sent (their difference is
 *   what a batch job costs; aim: <= 1 extra on average, outcome writes of
 *   jobs finishing together being coalesced into one script call) and
 *   Redis's own time per job (every command, scripts' inner ones included).
 * - `register`: registering a 100k-job batch (one `add()`, pushed in chunks
 *   of 10,000): seconds, the client's RSS and heap growth (peak, and kept
 *   across chunks after a full GC: bounded by the chunk, not the batch),
 *   Redis memory per job.
 * - `flow`: 10,000 parents x 10 children, made and then processed by one
 *   worker (concurrency 50, each parent reads its children's values), beside
 *   BullMQ's FlowProducer doing the same in the same run (aim: >= 5x).
 *
 *   npx tsx test/bench/batches.ts [--jobs 100000] [--parents 10000] [--children 10] [--only drain,register,flow]
 *
 * `npm run bench -- --only batches` runs the drains and the flows as rows
 * of the main bench (`batches-scenario.ts`), in its run.
 *
 * Prints one JSON line per figure, then a summary table.
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { batchJobs } from "../../src/features/batches/mod.ts";
import { startRedis } from "../support/redis.ts";
import { args, commandWindow, heapMB, openTransport, round, rssMB } from "./child.ts";

const a = args();
const self = fileURLToPath(import.meta.url);

if (a.figure) {
  const figures: Record<string, () => Promise<Record<string, unknown>>> = {
    drain,
    register,
    flow,
    // One drain as a row of `npm run bench -- --only batches` (see batches-scenario.ts).
    plain: () => drainRow(false),
    batch: () => drainRow(true),
  };
  figures[a.figure]().then(
    (result) => {
      process.stdout.write(JSON.stringify(result) + "\n");
      process.exit(0);
    },
    (error) => {
      process.stderr.write(String((error as Error)?.stack ?? error) + "\n");
      process.stdout.write(JSON.stringify({ error: String((error as Error)?.message ?? error) }) + "\n");
      process.exit(1);
    },
  );
} else {
  await orchestrate();
}

/** Runs every figure in its own child, one redis-server, and prints the results. */
async function orchestrate(): Promise<void> {
  const only = (a.only ?? "drain,register,flow").split(",");
  const server = await startRedis();
  const rows: Record<string, unknown>[] = [];
  try {
    const run = async (command: string, argv: string[]) => {
      const line = await child(command, [...argv, "--url", server.url]);
      const result = { ...JSON.parse(line) };
      console.log(JSON.stringify(result));
      rows.push(result);
      if (result.error) throw new Error(`${argv.join(" ")}: ${result.error}`);
      return result;
    };
    const pass = (name: string) => {
      const out = ["--figure", name];
      for (const option of ["jobs", "parents", "children", "verbose"]) {
        if (a[option]) out.push(`--${option}`, a[option]);
      }
      return out;
    };
    if (only.includes("drain")) {
      await run(process.execPath, ["--import", "tsx", self, ...pass("drain"), "--concurrency", "10"]);
      await run(process.execPath, ["--import", "tsx", self, ...pass("drain"), "--concurrency", "100"]);
    }
    if (only.includes("register")) {
      await run(process.execPath, ["--expose-gc", "--import", "tsx", self, ...pass("register")]);
    }
    if (only.includes("flow")) {
      const ours = await run(process.execPath, ["--import", "tsx", self, ...pass("flow")]);
      const bullmq = await run(process.execPath, [
        fileURLToPath(new URL("./bullmq-flow.mjs", import.meta.url)),
        "--parents",
        String(ours.parents),
        "--children",
        String(ours.children),
        "--concurrency",
        "50",
      ]);
      console.log(JSON.stringify({
        figure: "flow: edgekiq / BullMQ",
        endToEnd: round(Number(ours.jobsPerSec) / Number(bullmq.jobsPerSec), 2),
        processing: round(Number(ours.processJobsPerSec) / Number(bullmq.processJobsPerSec), 2),
      }));
    }
  } finally {
    await server.stop();
  }
}

function child(command: string, argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, argv, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.on("error", reject);
    proc.on("exit", () => {
      const last = out.trim().split("\n").at(-1);
      if (last) resolve(last);
      else reject(new Error(`${argv.join(" ")} printed nothing`));
    });
  });
}

/** A plain drain and a batch drain of the same backlog. */
async function drain(): Promise<Record<string, unknown>> {
  const jobs = Number(a.jobs ?? 100_000);
  const concurrency = Number(a.concurrency ?? 10);
  const plain = await drainOnce(jobs, false, concurrency);
  const batch = await drainOnce(jobs, true, concurrency);
  return {
    figure: `drain ${jobs} jobs, concurrency ${concurrency}: plain vs one batch`,
    plainJobsPerSec: plain.jobsPerSec,
    batchJobsPerSec: batch.jobsPerSec,
    ratio: round(batch.jobsPerSec / plain.jobsPerSec, 3),
    plainCommandsPerJob: plain.commandsPerJob,
    batchCommandsPerJob: batch.commandsPerJob,
    extraCommandsPerBatchJob: round(batch.commandsPerJob - plain.commandsPerJob, 3),
    serverCommandsPerJob: {
      plain: plain.serverCommandsPerJob,
      batch: batch.serverCommandsPerJob,
      note: "inside scripts too",
    },
    redisUsecPerJob: { plain: plain.redisUsecPerJob, batch: batch.redisUsecPerJob },
    pushCommandsPer1000: { plain: plain.pushCommands * 1000 / jobs, batch: batch.pushCommands * 1000 / jobs },
  };
}

/** One drain (plain or in one batch) as a bench row. */
async function drainRow(inBatch: boolean): Promise<Record<string, unknown>> {
  const jobs = Number(a.jobs ?? 100_000);
  const result = await drainOnce(jobs, inBatch, Number(a.concurrency ?? 10));
  return {
    figure: `drain ${jobs} jobs ${inBatch ? "in one batch" : "(no batch)"}`,
    jobs,
    jobsPerSec: result.jobsPerSec,
    roundTripsPerJob: result.commandsPerJob,
    serverCommandsPerJob: result.serverCommandsPerJob,
    redisUsecPerJob: result.redisUsecPerJob,
  };
}

async function drainOnce(jobs: number, inBatch: boolean, concurrency: number): Promise<Record<string, number>> {
  const transport = await openTransport("ioredis", a.url);
  const admin = await openTransport("ioredis", a.url);
  await admin.call("FLUSHDB");
  const batches = batchJobs();
  let performed = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  const target = inBatch ? jobs + 1 : jobs;
  const Noop = defineJob({ name: "Noop", perform: (_ctx, _i: number) => void (++performed === target && finished()) });
  const Done = defineJob({ name: "Done", perform: () => void (++performed === target && finished()) });
  const client = createClient({ transport: admin, features: [batches] });
  const pushWindow = await commandWindow(admin);
  const seed = async (push: (args: [number][]) => Promise<unknown>) => {
    for (let i = 0; i < jobs; i += 10_000) {
      await push(Array.from({ length: Math.min(10_000, jobs - i) }, (_, j) => [i + j] as [number]));
    }
  };
  if (inBatch) {
    const batch = batches.open(client, { callbacks: { success: [Done, []] } });
    await batch.add((b) => seed((list) => b.pushBulk(Noop, list)));
  } else await seed((list) => client.pushBulk(Noop, list));
  const pushCommands = await pushWindow.stop();
  const worker = createWorker({
    transport,
    jobs: [Noop, Done],
    concurrency,
    features: inBatch ? [batches] : [],
    logger: silentLogger,
    jobLogging: false,
    handleSignals: false,
    blockSeconds: 1,
    metrics: false,
  });
  await admin.call("CONFIG", "RESETSTAT");
  const c0 = transport.counters.commands;
  const t0 = performance.now();
  await worker.run();
  await allDone;
  const seconds = (performance.now() - t0) / 1000;
  await worker.stop();
  const commands = transport.counters.commands - c0;
  const stats = String(await admin.call("INFO", "commandstats"));
  const sum = (field: string) =>
    [...stats.matchAll(new RegExp(`[,:]${field}=(\\d+)`, "g"))].reduce((n, m) => n + Number(m[1]), 0);
  const usec = sum("usec");
  const serverCommands = sum("calls");
  if (a.verbose) process.stderr.write(stats + "\n");
  await Promise.allSettled([transport.close(), admin.close()]);
  return {
    jobsPerSec: round(jobs / seconds, 0),
    commandsPerJob: round(commands / jobs, 3),
    serverCommandsPerJob: round(serverCommands / jobs, 3),
    redisUsecPerJob: round(usec / jobs, 2),
    pushCommands,
  };
}

/** Registers one 100k-job batch: time, client memory, Redis memory. */
async function register(): Promise<Record<string, unknown>> {
  const jobs = Number(a.jobs ?? 100_000);
  const admin = await openTransport("ioredis", a.url);
  await admin.call("FLUSHDB");
  const batches = batchJobs();
  const client = createClient({ transport: admin, features: [batches] });
  const Noop = defineJob({ name: "Noop", perform: (_ctx, _i?: number) => {} });
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(String(await admin.call("INFO", "memory")))?.[1]);
  // Warm up the scripts and the code paths, then measure from a settled heap.
  await batches.open(client, {}).add((b) => b.pushBulk(Noop, [[0]]));
  await admin.call("FLUSHDB");
  (globalThis as { gc?: () => void }).gc?.();
  const redisBefore = await usedMemory();
  const rss0 = rssMB();
  const heap0 = heapMB();
  let peakRss = rss0;
  let peakHeap = heap0;
  let kept = 0;
  const t0 = performance.now();
  const batch = batches.open(client, { callbacks: { success: [Noop, []] } });
  await batch.add(async (b) => {
    for (let i = 0; i < jobs; i += 10_000) {
      await b.pushBulk(Noop, Array.from({ length: Math.min(10_000, jobs - i) }, (_, j) => [i + j]));
      peakRss = Math.max(peakRss, rssMB());
      peakHeap = Math.max(peakHeap, heapMB());
      // What the registration keeps between chunks (the peaks above include garbage not yet collected).
      (globalThis as { gc?: () => void }).gc?.();
      kept = Math.max(kept, heapMB() - heap0);
    }
  });
  const seconds = (performance.now() - t0) / 1000;
  const status = await batch.status();
  const redisAfter = await usedMemory();
  const queued = Number(await admin.call("LLEN", "queue:default"));
  await admin.close();
  if (status?.total !== jobs || status.pending !== jobs || queued !== jobs) {
    throw new Error(`registered ${status?.total} (pending ${status?.pending}), queued ${queued}: expected ${jobs}`);
  }
  return {
    figure: `register a ${jobs}-job batch (one add(), chunks of 10,000)`,
    seconds: round(seconds, 2),
    jobsPerSec: round(jobs / seconds, 0),
    clientRssGrowthMB: round(peakRss - rss0, 1),
    clientHeapGrowthMB: round(peakHeap - heap0, 1),
    clientHeapKeptMB: round(kept, 1),
    redisBytesPerJob: round((redisAfter - redisBefore) / jobs, 0),
  };
}

/** 10,000 flows of 10 children, made and processed. */
async function flow(): Promise<Record<string, unknown>> {
  const parents = Number(a.parents ?? 10_000);
  const children = Number(a.children ?? 10);
  const transport = await openTransport("ioredis", a.url);
  const admin = await openTransport("ioredis", a.url);
  await admin.call("FLUSHDB");
  const batches = batchJobs();
  const client = createClient({ transport: admin, features: [batches] });
  let done = 0;
  let sum = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  const Child = defineJob({ name: "Child", perform: (_ctx, c: number) => c });
  const Parent = defineJob({
    name: "Parent",
    async perform(ctx, _p: number) {
      for (const child of await batches.childResults(ctx)) sum += child.value as number;
      if (++done === parents) finished();
    },
  });
  const window = await commandWindow(admin);
  const t0 = performance.now();
  for (let p = 0; p < parents; p += 100) {
    await Promise.all(Array.from({ length: Math.min(100, parents - p) }, (_, i) =>
      batches.flow(client, {
        job: [Parent, [p + i]],
        children: Array.from({ length: children }, (_, c) => ({ job: [Child, [c]] as const })),
      })));
  }
  const created = (performance.now() - t0) / 1000;
  const worker = createWorker({
    transport,
    jobs: [Child, Parent],
    concurrency: 50,
    features: [batches],
    logger: silentLogger,
    jobLogging: false,
    handleSignals: false,
    blockSeconds: 1,
    metrics: false,
  });
  const t1 = performance.now();
  await worker.run();
  await allDone;
  const processed = (performance.now() - t1) / 1000;
  const rss = rssMB();
  await worker.stop();
  const commands = await window.stop();
  await Promise.allSettled([transport.close(), admin.close()]);
  const expected = parents * (children * (children - 1)) / 2;
  if (sum !== expected) throw new Error(`parents read ${sum} from their children, expected ${expected}`);
  const jobs = parents * (children + 1);
  return {
    figure: `flow: ${parents} parents x ${children} children, concurrency 50 (edgekiq)`,
    parents,
    children,
    createSeconds: round(created, 2),
    processSeconds: round(processed, 2),
    jobsPerSec: round(jobs / (created + processed), 0),
    processJobsPerSec: round(jobs / processed, 0),
    serverCommandsPerJob: round(commands / jobs, 2),
    rssMB: rss,
  };
}
