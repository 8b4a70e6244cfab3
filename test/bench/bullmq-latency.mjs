/**
 * BullMQ enqueue-to-perform latency on an idle worker: Queue.add one job,
 * wait for the processor to run it, repeat. Measured from just before add
 * to the start of the processor, in one process.
 *
 *   --url redis://...  --jobs N  [--warmup N]
 */
import { Queue, Worker } from "bullmq";
import { connection, main, percentile, round, rssMB } from "./bullmq-common.mjs";

main(async (a) => {
  const jobs = Number(a.jobs ?? 1000);
  const warmup = Number(a.warmup ?? 2000);
  const conn = connection(a.url);
  const queue = new Queue("latency", { connection: conn });
  let sentAt = 0;
  let ran;
  const worker = new Worker("latency", async () => ran?.(performance.now() - sentAt), {
    connection: conn,
    concurrency: 10,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  });
  await worker.waitUntilReady();
  await new Promise((r) => setTimeout(r, 300));
  const opts = { removeOnComplete: true, removeOnFail: true };
  const one = async (i) => {
    const done = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`job ${i} did not run within 5 s`)), 5000);
      ran = (ms) => {
        clearTimeout(timer);
        resolve(ms);
      };
    });
    sentAt = performance.now();
    await queue.add("ping", { i }, opts);
    return await done;
  };
  for (let i = 0; i < warmup; i++) await one(-1 - i);
  const samples = [];
  for (let i = 0; i < jobs; i++) samples.push(await one(i));
  await worker.close();
  await queue.close();
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
