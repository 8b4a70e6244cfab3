/**
 * Priorities as strictly ordered queues (Sidekiq's answer, and edgekiq's to
 * BullMQ's `priority`): what a band costs per job, and how far precedence
 * holds. `npx tsx test/bench/priority-cost.ts` (JOBS=30000).
 *
 * - cost: a worker (c=10, default prefetch) drains the same number of no-op
 *   jobs from one queue, from three strict bands with the jobs spread over
 *   them, and from three and ten bands with every job in the lowest (each
 *   fetch first finds the higher bands empty): jobs/s, and Redis's
 *   main-thread CPU and commands (Lua's inner ones included) per job.
 * - precedence: with 3,000 jobs waiting in the lowest band, 20 top-band jobs
 *   are pushed mid-drain; how many low jobs still start after the first
 *   top job was pushed and before the last one starts (the jobs already
 *   fetched: the prefetch buffer), with the default prefetch and with 0.
 */
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { startRedis } from "../support/redis.ts";
import { costBetween, redisSnapshot } from "./redis-snapshot.ts";

const jobs = Number(process.env.JOBS ?? 30_000);
const server = await startRedis();
const transport = ioredisTransport({ url: server.url });
const client = createClient({ transport });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let ran = 0;
const order: string[] = [];
const Noop = defineJob({
  name: "Noop",
  perform(ctx) {
    ran++;
    order.push(ctx.queue);
  },
});

async function drainCost(name: string, bands: string[], spread: (i: number) => string): Promise<void> {
  await transport.call("FLUSHDB");
  const byQueue = new Map<string, [][]>();
  for (let i = 0; i < jobs; i++) {
    const q = spread(i);
    if (!byQueue.has(q)) byQueue.set(q, []);
    byQueue.get(q)!.push([]);
  }
  for (const [queue, args] of byQueue) await client.pushBulk(Noop, args, { queue });
  ran = 0;
  const worker = createWorker({
    transport,
    jobs: [Noop],
    queues: bands,
    concurrency: 10,
    logger: silentLogger,
    handleSignals: false,
    closeTransport: false,
    jobLogging: false,
    metrics: false,
  });
  const before = await redisSnapshot(server.url);
  const started = performance.now();
  await worker.run();
  while (ran < jobs) await sleep(5);
  const seconds = (performance.now() - started) / 1000;
  const cost = costBetween(before, await redisSnapshot(server.url));
  await worker.stop();
  console.log(
    `${name}: ${Math.round(jobs / seconds)} jobs/s; Redis ${(cost.cpuUs / jobs).toFixed(2)} µs and ${
      (cost.commands / jobs).toFixed(3)
    } commands per job`,
  );
}

async function precedence(prefetch: number | undefined): Promise<void> {
  await transport.call("FLUSHDB");
  await client.pushBulk(Noop, Array.from({ length: 3000 }, () => []), { queue: "low" });
  ran = 0;
  order.length = 0;
  const capsule = { queues: ["top", "mid", "low"], concurrency: 10, ...(prefetch === undefined ? {} : { prefetch }) };
  const worker = createWorker({
    transport,
    jobs: [Noop],
    capsules: { default: capsule },
    logger: silentLogger,
    handleSignals: false,
    closeTransport: false,
    jobLogging: false,
    metrics: false,
  });
  await worker.run();
  while (ran < 500) await sleep(1);
  const pushedAt = order.length;
  await client.pushBulk(Noop, Array.from({ length: 20 }, () => []), { queue: "top" });
  while (order.filter((q) => q === "top").length < 20) await sleep(1);
  const lastTop = order.lastIndexOf("top");
  const inverted = order.slice(pushedAt, lastTop).filter((q) => q === "low").length;
  await worker.stop();
  console.log(
    `precedence, prefetch ${
      prefetch ?? "adaptive (default)"
    }: ${inverted} low-band jobs started between the push of 20 top-band jobs and the last of them`,
  );
}

await drainCost("1 queue", ["p"], () => "p");
await drainCost("3 strict bands, jobs spread", ["p1", "p2", "p3"], (i) => `p${(i % 3) + 1}`);
await drainCost("3 strict bands, all in the lowest", ["p1", "p2", "p3"], () => "p3");
await drainCost(
  "10 strict bands, all in the lowest",
  Array.from({ length: 10 }, (_, i) => `p${i + 1}`),
  () => "p10",
);
await precedence(undefined);
await precedence(0);
await transport.close();
await server.stop();
