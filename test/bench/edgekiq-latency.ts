/**
 * edgekiq enqueue-to-perform latency on an idle worker: push one job, wait
 * for it to run, repeat. Measured from just before `push` to the start of
 * `perform`, in one process (the client and the worker have their own
 * transports, as a web process and a worker would).
 *
 *   --url redis://...  --transport ioredis|bun  --jobs N  [--fetch reliable|basic]  [--warmup N]
 *
 * The warm-up jobs (2,000 by default; the bench passes 10,000; not counted) let V8's and JSC's
 * optimising compilers settle first: with only 20, Node's p99 measures the
 * compiler (3-4 ms here; 0.4 ms with --no-opt), not the steady state a
 * long-running worker lives in.
 */
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { main, openTransport, percentile, round, rssMB } from "./child.ts";

main(async (a) => {
  const jobs = Number(a.jobs ?? 1000);
  const warmup = Number(a.warmup ?? 2000);
  const fetch = (a.fetch ?? "reliable") as "reliable" | "basic";
  const workerTransport = await openTransport(a.transport ?? "ioredis", a.url);
  const clientTransport = await openTransport(a.transport ?? "ioredis", a.url);
  let sentAt = 0;
  let ran: ((ms: number) => void) | undefined;
  const PingJob = defineJob({
    name: "PingJob",
    perform(_ctx, _i: number) {
      const ms = performance.now() - sentAt;
      ran?.(ms);
    },
  });
  const worker = createWorker({
    transport: workerTransport,
    jobs: [PingJob],
    concurrency: 10,
    fetch,
    logger: silentLogger,
    jobLogging: false,
    handleSignals: false,
    onError: (error, context) => console.error("worker error", context, error),
  });
  const client = createClient({ transport: clientTransport });
  await worker.run();
  // Let the worker reach its idle state (blocked on an empty queue).
  await new Promise((r) => setTimeout(r, 300));

  const one = async (i: number): Promise<number> => {
    const done = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`job ${i} did not run within 5 s`)), 5000);
      ran = (ms) => {
        clearTimeout(timer);
        resolve(ms);
      };
    });
    sentAt = performance.now();
    await client.push(PingJob, [i]);
    return await done;
  };
  for (let i = 0; i < warmup; i++) await one(-1 - i); // warm-up, not counted
  const samples: number[] = [];
  for (let i = 0; i < jobs; i++) samples.push(await one(i));
  // Bounded: stop() waits for the idle blocking fetch (up to 2 s).
  await Promise.race([worker.stop(), new Promise((r) => setTimeout(r, 3500))]);
  await Promise.allSettled([workerTransport.close(), clientTransport.close()]);
  samples.sort((x, y) => x - y);
  return {
    jobs,
    warmup,
    p50: round(percentile(samples, 50), 3),
    p99: round(percentile(samples, 99), 3),
    max: round(samples[samples.length - 1], 3),
    mean: round(samples.reduce((s, x) => s + x, 0) / samples.length, 3),
    rssMB: rssMB(),
  };
});
