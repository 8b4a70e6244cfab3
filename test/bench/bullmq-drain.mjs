/**
 * BullMQ drain: pre-enqueue N jobs with Queue.addBulk (untimed), then time a
 * Worker (concurrency C, removeOnComplete/removeOnFail) until N jobs have
 * completed. With --sleep-ms each job awaits a timer (I/O-bound scenario).
 * With --limit-max M --limit-duration MS the worker is rate-limited
 * (BullMQ's own `limiter: { max, duration }`).
 *
 *   --url redis://...  --jobs N  --concurrency C  [--sleep-ms 5]  [--phase seed|drain|both]  [--payload BYTES]
 *   [--windows K]  [--limit-max M --limit-duration MS]
 */
import { Queue, Worker } from "bullmq";
import {
  adminConnection,
  connection,
  main,
  peakRssMB,
  redisCpuUs,
  round,
  rssMB,
  seed,
  serverCommands,
} from "./bullmq-common.mjs";
import { cpuPerJob, drainWindows } from "./drain-figures.mjs";

main(async (a) => {
  const jobs = Number(a.jobs ?? 100_000);
  const concurrency = Number(a.concurrency ?? 10);
  const sleepMs = Number(a["sleep-ms"] ?? 0);
  const limiter = a["limit-max"] ? { max: Number(a["limit-max"]), duration: Number(a["limit-duration"] ?? 1000) } : {};
  const conn = connection(a.url);
  const admin = adminConnection(a.url);
  const queue = new Queue("bench", { connection: conn });
  // The harness seeds in a process of its own (--phase seed), so the drain's
  // RSS is the worker's.
  const phase = a.phase ?? "both";
  if (phase !== "drain") await seed(queue, jobs, "noop", undefined, Number(a.payload ?? 0));
  const waiting = await queue.getWaitingCount();
  if (waiting !== jobs) throw new Error(`found ${waiting} jobs waiting, expected ${jobs}`);
  if (phase === "seed") {
    await queue.close();
    admin.disconnect();
    return { seeded: jobs };
  }

  let completed = 0;
  let finished;
  const allDone = new Promise((resolve) => (finished = resolve));
  const windows = drainWindows(jobs, Number(a.windows ?? 0), () => redisCpuUs(admin));
  const before = await serverCommands(admin);
  const cpu = cpuPerJob(jobs);
  const t0 = performance.now();
  windows.start();
  const worker = new Worker(
    "bench",
    async () => {
      if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
    },
    {
      connection: conn,
      concurrency,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
      ...(limiter.max ? { limiter } : {}),
    },
  );
  worker.on("completed", () => {
    cpu.tick(++completed);
    windows.tick(completed);
    if (completed === jobs) finished();
  });
  worker.on("error", (error) => process.stderr.write(`worker error: ${error}\n`));
  await allDone;
  const seconds = (performance.now() - t0) / 1000;
  const cpuFigures = cpu.result();
  const rss = rssMB();
  const heap = round(process.memoryUsage().heapUsed / 1048576, 1);
  await worker.close();
  const serverCmds = (await serverCommands(admin)) - before - 1;
  const counts = await queue.getJobCounts("waiting", "active", "completed", "failed");
  await queue.close();
  admin.disconnect();
  if (counts.waiting || counts.active || counts.failed) throw new Error(`drain left ${JSON.stringify(counts)}`);
  return {
    jobs,
    jobsPerSec: round(jobs / seconds, 0),
    seconds: round(seconds, 3),
    ...cpuFigures,
    rssMB: rss,
    peakRssMB: peakRssMB(),
    windows: await windows.report(),
    heapMB: heap,
    roundTripsPerJob: null,
    serverCommandsPerJob: round(serverCmds / jobs, 3),
    pctIdeal: sleepMs > 0 ? round((100 * jobs / seconds) / (concurrency * 1000 / sleepMs), 1) : null,
  };
});
