/**
 * BullMQ push-to-start latency under an open-loop load; the roles and
 * arguments of edgekiq-openloop.ts (a Queue in the producer, a Worker in the
 * worker, removeOnComplete/removeOnFail as in the drain scenarios).
 *
 *   --role worker|producer  --url redis://...  (worker: --jobs N [--concurrency 10]; producer: --rate R --seconds T)
 */
import process from "node:process";
import { Queue, Worker } from "bullmq";
import { connection, main, peakRssMB, rssMB } from "./bullmq-common.mjs";
import { latencyRecorder, openLoop } from "./open-loop.mjs";

main(async (a) => {
  const conn = connection(a.url);
  if (a.role === "producer") {
    const queue = new Queue("latency", { connection: conn });
    await queue.waitUntilReady();
    const opts = { removeOnComplete: true, removeOnFail: true };
    const result = await openLoop({
      rate: Number(a.rate),
      seconds: Number(a.seconds),
      warmupSeconds: Number(a["warmup-seconds"] ?? 1),
      preludeJobs: Number(a["prelude-jobs"] ?? 0),
      preludeRate: a["prelude-rate"] === undefined ? undefined : Number(a["prelude-rate"]),
      push: (batch) =>
        batch.length === 1
          ? queue.add("ping", { at: batch[0][0], counted: batch[0][1] }, opts)
          : queue.addBulk(batch.map(([at, counted]) => ({ name: "ping", data: { at, counted }, opts }))),
    });
    await queue.close();
    return result;
  }
  const jobs = Number(a.jobs);
  const recorder = latencyRecorder(jobs);
  const worker = new Worker("latency", async (job) => recorder.record(job.data.at, job.data.counted), {
    connection: conn,
    concurrency: Number(a.concurrency ?? 10),
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  });
  worker.on("error", (error) => process.stderr.write(`worker error: ${error}\n`));
  await worker.waitUntilReady();
  await new Promise((r) => setTimeout(r, 300));
  const cpu0 = process.cpuUsage();
  process.stdout.write("ready\n");
  await recorder.done;
  const cpu = process.cpuUsage(cpu0);
  const rss = rssMB();
  await Promise.race([worker.close(), new Promise((r) => setTimeout(r, 3000))]);
  return {
    ...recorder.summary(),
    cpuUsPerJob: Math.round(((cpu.user + cpu.system) / jobs) * 100) / 100,
    rssMB: rss,
    peakRssMB: peakRssMB(),
  };
});
