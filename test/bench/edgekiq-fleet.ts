/**
 * One process of the fleet benchmark: an edgekiq worker that starts on
 * "go" and stops on "stop" (stdin lines), printing `progress <performed>
 * <epoch ms of its last job>` every 50 ms meanwhile; the harness starts N of
 * them against one redis-server and measures the fleet, and Redis.
 *
 *   --url redis://...  --transport ioredis|bun  --concurrency C
 */
import process from "node:process";
import { createInterface } from "node:readline";
import { createWorker, defineJob, silentLogger } from "../../mod.ts";
import { main, openTransport, rssMB } from "./child.ts";

main(async (a) => {
  const transport = await openTransport(a.transport ?? "ioredis", a.url);
  let performed = 0;
  let lastAt = 0;
  const NoopJob = defineJob({
    name: "NoopJob",
    perform(_ctx, _i: number) {
      performed++;
      lastAt = Date.now();
    },
  });
  const worker = createWorker({
    transport,
    jobs: [NoopJob],
    concurrency: Number(a.concurrency ?? 50),
    logger: silentLogger,
    jobLogging: false,
    handleSignals: false,
    blockSeconds: 1,
  });
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write("ready\n");
  await lines.next(); // go
  const cpu0 = process.cpuUsage();
  await worker.run();
  const timer = setInterval(() => process.stdout.write(`progress ${performed} ${lastAt}\n`), 50);
  await lines.next(); // stop
  clearInterval(timer);
  const cpu = process.cpuUsage(cpu0);
  const rss = rssMB();
  await worker.stop();
  await transport.close();
  return { performed, lastAt, rssMB: rss, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
});
