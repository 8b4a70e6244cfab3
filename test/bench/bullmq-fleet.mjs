/**
 * One process of the fleet benchmark, BullMQ's side: a Worker (not running
 * until "go" on stdin, stopped by "stop"), printing `progress <completed>
 * <epoch ms of its last job>` every 50 ms meanwhile.
 *
 *   --url redis://...  --concurrency C
 */
import process from "node:process";
import { createInterface } from "node:readline";
import { Worker } from "bullmq";
import { connection, main, rssMB } from "./bullmq-common.mjs";

main(async (a) => {
  let performed = 0;
  let lastAt = 0;
  const worker = new Worker("bench", async () => {}, {
    connection: connection(a.url),
    concurrency: Number(a.concurrency ?? 50),
    autorun: false,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  });
  worker.on("completed", () => {
    performed++;
    lastAt = Date.now();
  });
  worker.on("error", (error) => process.stderr.write(`worker error: ${error}\n`));
  await worker.waitUntilReady();
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write("ready\n");
  await lines.next(); // go
  const cpu0 = process.cpuUsage();
  void worker.run();
  const timer = setInterval(() => process.stdout.write(`progress ${performed} ${lastAt}\n`), 50);
  await lines.next(); // stop
  clearInterval(timer);
  const cpu = process.cpuUsage(cpu0);
  const rss = rssMB();
  await worker.close();
  return { performed, lastAt, rssMB: rss, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
});
