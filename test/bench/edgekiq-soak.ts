/**
 * The soak's worker: one edgekiq worker (default options, c=10) running
 * no-op jobs until it has run `--jobs` of them, printing a JSON sample line
 * every `--every` seconds: jobs done, RSS, and the V8 heap after a full GC
 * (run with `node --expose-gc`), so a leak shows as live heap that keeps
 * growing, not as garbage not yet collected. With `--snapshots a,b` it
 * writes V8 heap snapshots after a and b jobs (Node only), for a diff.
 *
 *   --url redis://...  --jobs N  [--every 2]  [--snapshots 200000,1000000]  [--snapshot-dir dir]
 */
import process from "node:process";
import { createWorker, defineJob, silentLogger } from "../../mod.ts";
import { main, openTransport, round } from "./child.ts";

main(async (a) => {
  const jobs = Number(a.jobs ?? 1_000_000);
  const everyMs = Number(a.every ?? 2) * 1000;
  const snapshotsAt = (a.snapshots ?? "").split(",").filter(Boolean).map(Number);
  const transport = await openTransport(a.transport ?? "ioredis", a.url);
  let performed = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  const NoopJob = defineJob({
    name: "NoopJob",
    perform(_ctx, _i: number) {
      if (++performed === jobs) finished();
    },
  });
  const worker = createWorker({
    transport,
    jobs: [NoopJob],
    concurrency: 10,
    logger: silentLogger,
    jobLogging: false,
    handleSignals: false,
    blockSeconds: 1,
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  const t0 = performance.now();
  const sample = () => {
    gc?.();
    const m = process.memoryUsage();
    const line = {
      sample: true,
      seconds: round((performance.now() - t0) / 1000, 1),
      performed,
      rssMB: round(m.rss / 1048576, 1),
      heapMB: round(m.heapUsed / 1048576, 2),
      externalMB: round(m.external / 1048576, 2),
    };
    process.stdout.write(JSON.stringify(line) + "\n");
  };
  // Snapshots inflate RSS (V8 builds the whole graph): read RSS from a run without them.
  const snapshots: string[] = [];
  const snapshot = async () => {
    while (snapshotsAt.length && performed >= snapshotsAt[0]) {
      const at = snapshotsAt.shift()!;
      const { writeHeapSnapshot } = await import("node:v8");
      snapshots.push(writeHeapSnapshot(`${a["snapshot-dir"] ?? "."}/soak-${at}.heapsnapshot`));
    }
  };
  const timer = setInterval(() => {
    sample();
    void snapshot();
  }, everyMs);
  await worker.run();
  await allDone;
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  sample();
  await snapshot();
  await worker.stop();
  await transport.close();
  return { jobs, seconds: round(seconds, 1), jobsPerSec: round(jobs / seconds, 0), snapshots };
});
