/**
 * edgekiq drain: pre-enqueue N jobs with pushBulk (untimed), then time a
 * worker draining them. With `--sleep-ms` each job awaits a timer (the
 * I/O-bound scenario). Runs on Node, Bun and Deno.
 *
 *   --url redis://...  --transport ioredis|bun  --jobs N  --concurrency C
 *   --fetch reliable|basic  [--sleep-ms 5]  [--phase seed|drain|both]
 */
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { heldCount } from "../support/held.ts";
import { commandWindow, heapMB, main, openTransport, round, rssMB } from "./child.ts";

/** Seconds an idle fetch blocks (default 2); shorter so a clean stop is quick. */
const BLOCK_SECONDS = 1;
/** Longest a clean stop may take: the in-flight blocking fetch plus margin. */
const STOP_LIMIT_MS = BLOCK_SECONDS * 1000 + 1500;

main(async (a) => {
  const jobs = Number(a.jobs ?? 100_000);
  const concurrency = Number(a.concurrency ?? 10);
  const fetch = (a.fetch ?? "reliable") as "reliable" | "basic";
  const sleepMs = Number(a["sleep-ms"] ?? 0);
  const transport = await openTransport(a.transport ?? "ioredis", a.url);
  const admin = await openTransport(a.transport ?? "ioredis", a.url);

  let performed = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  const NoopJob = defineJob({
    name: "NoopJob",
    async perform(_ctx, _i: number) {
      if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
      if (++performed === jobs) finished();
    },
  });

  // Seed (untimed). The harness seeds in a process of its own (--phase seed)
  // so the drain's RSS is the worker's, not the seeder's garbage.
  const phase = a.phase ?? "both";
  if (phase !== "drain") {
    const client = createClient({ transport: admin });
    for (let i = 0; i < jobs; i += 10_000) {
      const n = Math.min(10_000, jobs - i);
      await client.pushBulk(NoopJob, Array.from({ length: n }, (_, j) => [i + j]));
    }
  }
  const queued = Number(await admin.call("LLEN", "queue:default"));
  if (queued !== jobs) throw new Error(`found ${queued} jobs queued, expected ${jobs}`);
  if (phase === "seed") {
    await Promise.allSettled([transport.close(), admin.close()]);
    return { seeded: jobs };
  }

  const worker = createWorker({
    transport,
    jobs: [NoopJob],
    concurrency,
    fetch,
    logger: silentLogger,
    jobLogging: false,
    handleSignals: false,
    blockSeconds: BLOCK_SECONDS,
    onError: (error, context) => console.error("worker error", context, error),
  });
  const window = await commandWindow(admin);
  const c0 = { ...transport.counters };
  const t0 = performance.now();
  await worker.run();
  await allDone;
  const seconds = (performance.now() - t0) / 1000;
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
    rssMB: rss,
    heapMB: heap,
    roundTripsPerJob: round(trips / jobs, 4),
    clientCommandsPerJob: round(commands / jobs, 4),
    serverCommandsPerJob: round(serverCmds / jobs, 3),
    stopSeconds: round(stopSeconds, 3),
    notes: stopped ? [] : [`worker.stop() did not return within ${STOP_LIMIT_MS / 1000} s`],
    pctIdeal: sleepMs > 0 ? round((100 * jobs / seconds) / (concurrency * 1000 / sleepMs), 1) : null,
  };
});
