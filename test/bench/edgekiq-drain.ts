/**
 * edgekiq drain: pre-enqueue N jobs with pushBulk (untimed), then time a
 * worker draining them. With `--sleep-ms` each job awaits a timer (the
 * I/O-bound scenario). Runs on Node, Bun and Deno.
 *
 *   --url redis://...  --transport ioredis|bun  --jobs N  --concurrency C
 *   --fetch reliable|basic  [--sleep-ms 5]  [--phase seed|drain|both]
 *   [--payload BYTES]  [--queues N --queue-mode strict|weighted]  [--windows K]  [--prefetch N]
 *
 * The scaling scenarios use the rest: `--payload` adds an argument of that
 * many bytes; `--queues N` has the worker fetch from N queues of which only
 * "default" holds jobs (see benchQueues); `--windows K` reports jobs/s and
 * Redis CPU per job for each K-th of the drain (a backlog's start vs its end);
 * `--prefetch N` fixes the capsule's prefetch instead of letting it adapt.
 */
import process from "node:process";
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { heldCount } from "../support/held.ts";
import {
  benchQueues,
  commandWindow,
  filler,
  heapMB,
  main,
  openTransport,
  peakRssMB,
  redisCounters,
  round,
  rssMB,
} from "./child.ts";
import { cpuPerJob, drainWindows } from "./drain-figures.mjs";

/** Seconds an idle fetch blocks (default 2); shorter so a clean stop is quick. */
const BLOCK_SECONDS = 1;
/** Longest a clean stop may take: the in-flight blocking fetch plus margin. */
const STOP_LIMIT_MS = BLOCK_SECONDS * 1000 + 1500;

main(async (a) => {
  const jobs = Number(a.jobs ?? 100_000);
  const concurrency = Number(a.concurrency ?? 10);
  const fetch = (a.fetch ?? "reliable") as "reliable" | "basic";
  const sleepMs = Number(a["sleep-ms"] ?? 0);
  const payload = Number(a.payload ?? 0);
  const queues = benchQueues(Number(a.queues ?? 1), a["queue-mode"] === "weighted" ? "weighted" : "strict");
  const windows = Number(a.windows ?? 0);
  const transport = await openTransport(a.transport ?? "ioredis", a.url);
  const admin = await openTransport(a.transport ?? "ioredis", a.url);

  let performed = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  const drainWindow = drainWindows(jobs, windows, () => redisCounters(admin).then((c) => c.cpuUs));
  const NoopJob = defineJob({
    name: "NoopJob",
    async perform(_ctx, _i: number, _pad?: string) {
      if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
      cpu.tick(++performed);
      drainWindow.tick(performed);
      if (performed === jobs) finished();
    },
  });

  // Seed (untimed). The harness seeds in a process of its own (--phase seed)
  // so the drain's RSS is the worker's, not the seeder's garbage.
  const phase = a.phase ?? "both";
  if (phase !== "drain") {
    // The client refuses payloads over 512 KB unless told otherwise (maxPayloadBytes); the 1 MB row tells it.
    const client = createClient({ transport: admin, maxPayloadBytes: Math.max(512 * 1024, payload + 4096) });
    // Large payloads go in smaller batches: a 1,000-job MULTI of 1 MB jobs would be a 1 GB request.
    const batchSize = Math.max(1, Math.min(1000, Math.floor(8e6 / Math.max(payload, 1))));
    const chunk = Math.max(batchSize, Math.min(10_000, batchSize * 10));
    const pad = payload > 0 ? filler(payload) : undefined;
    for (let i = 0; i < jobs; i += chunk) {
      const n = Math.min(chunk, jobs - i);
      const list = Array.from({ length: n }, (_, j): [number, string?] => pad ? [i + j, pad] : [i + j]);
      await client.pushBulk(NoopJob, list, { batchSize });
    }
  }
  const queued = Number(await admin.call("LLEN", "queue:default"));
  if (queued !== jobs) throw new Error(`found ${queued} jobs queued, expected ${jobs}`);
  if (phase === "seed") {
    await Promise.allSettled([transport.close(), admin.close()]);
    return { seeded: jobs };
  }

  const prefetch = a.prefetch === undefined ? undefined : Number(a.prefetch);
  const worker = createWorker({
    transport,
    jobs: [NoopJob],
    ...(prefetch === undefined
      ? { queues, concurrency }
      : { capsules: { default: { queues, concurrency, prefetch } } }),
    fetch,
    logger: silentLogger,
    jobLogging: false,
    handleSignals: false,
    blockSeconds: BLOCK_SECONDS,
    onError: (error, context) => console.error("worker error", context, error),
  });
  const window = await commandWindow(admin);
  const c0 = { ...transport.counters };
  const cpu = cpuPerJob(jobs);
  // The drain's window on the monotonic clock V8's CPU profiles use, in µs (the profile scenario keeps only it).
  const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
  const window0 = monotonicUs();
  const t0 = performance.now();
  drainWindow.start();
  await worker.run();
  await allDone;
  const seconds = (performance.now() - t0) / 1000;
  const drainWindowUs = [window0, monotonicUs()];
  const cpuFigures = cpu.result();
  const rss = rssMB();
  const heap = heapMB();
  const stopStarted = performance.now();
  // A guard, not a workaround: a fetcher that missed a wake-up (fixed, with a
  // regression test) would hang stop(). Bound it; if it ever hangs again, the
  // bench sends the pending acks itself and says so in the result's notes.
  const stopped = await Promise.race([
    worker.stop().then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), STOP_LIMIT_MS)),
  ]);
  const stopSeconds = (performance.now() - stopStarted) / 1000;
  const trips = transport.counters.roundTrips - c0.roundTrips;
  const commands = transport.counters.commands - c0.commands;
  const serverCmds = await window.stop();

  // Nothing may be left behind: not in the queue, not in a private list.
  const left = Number(await admin.call("LLEN", "queue:default"));
  const inflightLeft = await heldCount(admin, worker.identity);
  await Promise.allSettled([transport.close(), admin.close()]);
  if (left !== 0 || inflightLeft !== 0) {
    throw new Error(`drain left ${left} jobs queued and ${inflightLeft} held`);
  }
  return {
    jobs,
    jobsPerSec: round(jobs / seconds, 0),
    seconds: round(seconds, 3),
    ...cpuFigures,
    rssMB: rss,
    peakRssMB: peakRssMB(),
    heapMB: heap,
    windows: await drainWindow.report(),
    drainWindowUs,
    roundTripsPerJob: round(trips / jobs, 4),
    clientCommandsPerJob: round(commands / jobs, 4),
    serverCommandsPerJob: round(serverCmds / jobs, 3),
    stopSeconds: round(stopSeconds, 3),
    notes: stopped ? [] : [`worker.stop() did not return within ${STOP_LIMIT_MS / 1000} s`],
    pctIdeal: sleepMs > 0 ? round((100 * jobs / seconds) / (concurrency * 1000 / sleepMs), 1) : null,
  };
});
