/**
 * edgekiq push-to-start latency under an open-loop load (open-loop.mjs says
 * why open loop). Two roles, two processes, as a web process and a worker:
 *
 *   --role worker    --url redis://...  --transport ioredis|bun  --jobs N  [--concurrency 10]  [--fetch reliable|basic]
 *                    [--current-job false]
 *                    prints "ready" once idle, then the latency summary once N jobs have started
 *   --role producer  --url redis://...  --transport ioredis|bun  --rate R  --seconds T  [--warmup-seconds W]
 *                    [--prelude-jobs N --prelude-rate R2]
 */
import process from "node:process";
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { cpuWindow, main, openTransport, peakRssMB, rssMB } from "./child.ts";
import { latencyRecorder, openLoop } from "./open-loop.mjs";

main(async (a) => {
  const transport = await openTransport(a.transport ?? "ioredis", a.url);
  if (a.role === "producer") {
    const PingJob = defineJob({ name: "PingJob", perform(_ctx, _at: number, _counted: number) {} });
    const client = createClient({ transport });
    const result = await openLoop({
      rate: Number(a.rate),
      seconds: Number(a.seconds),
      warmupSeconds: Number(a["warmup-seconds"] ?? 1),
      preludeJobs: Number(a["prelude-jobs"] ?? 0),
      preludeRate: a["prelude-rate"] === undefined ? undefined : Number(a["prelude-rate"]),
      push: (batch) => batch.length === 1 ? client.push(PingJob, batch[0]) : client.pushBulk(PingJob, batch),
    });
    await transport.close();
    return { ...result };
  }
  const recorder = latencyRecorder(Number(a.jobs));
  const PingJob = defineJob({
    name: "PingJob",
    perform(_ctx, at: number, counted: number) {
      recorder.record(at, counted);
    },
  });
  const worker = createWorker({
    transport,
    jobs: [PingJob],
    concurrency: Number(a.concurrency ?? 10),
    fetch: (a.fetch ?? "reliable") as "reliable" | "basic",
    currentJob: a["current-job"] !== "false",
    logger: silentLogger,
    jobLogging: false,
    handleSignals: false,
    blockSeconds: 1,
    onError: (error, context) => console.error("worker error", context, error),
  });
  await worker.run();
  // Let the worker reach its idle state (blocked on an empty queue) before the load starts.
  await new Promise((r) => setTimeout(r, 300));
  const cpu = cpuWindow();
  process.stdout.write("ready\n");
  await recorder.done;
  const cpuUs = cpu.stop();
  const rss = rssMB();
  await Promise.race([worker.stop(), new Promise((r) => setTimeout(r, 3000))]);
  await transport.close();
  return {
    ...recorder.summary(),
    cpuUsPerJob: Math.round((cpuUs / Number(a.jobs)) * 100) / 100,
    rssMB: rss,
    peakRssMB: peakRssMB(),
  };
});
