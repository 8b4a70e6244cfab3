/**
 * What job events cost per job: a worker (c=10) drains the same no-op jobs
 * from a queue without events, from one that opts in (an event per job,
 * written with its outcome before the ack), and with `keepResult` too (the
 * result record and a line on the results stream). Jobs/s, Redis's
 * main-thread CPU per job, and commands per job (Lua's inner ones
 * included). `npx tsx test/bench/events-cost.ts` (JOBS=20000).
 */
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { jobEvents } from "../../src/features/events/mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { startRedis } from "../support/redis.ts";
import { costBetween, redisSnapshot } from "./redis-snapshot.ts";

const jobs = Number(process.env.JOBS ?? 20_000);
const server = await startRedis();
const transport = ioredisTransport({ url: server.url });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let ran = 0;
const Noop = defineJob({
  name: "Noop",
  queue: "q",
  perform() {
    ran++;
    return ran;
  },
});

async function drainCost(name: string, queues: readonly string[], keep: boolean): Promise<void> {
  await transport.call("FLUSHDB");
  const events = jobEvents({ queues });
  const client = createClient({ transport, features: [events] });
  await client.pushBulk(Noop, Array.from({ length: jobs }, () => []), keep ? { keepResult: { for: 60 } } : {});
  ran = 0;
  const worker = createWorker({
    transport,
    jobs: [Noop],
    queues: ["q"],
    concurrency: 10,
    features: [events],
    logger: silentLogger,
    handleSignals: false,
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

await drainCost("queue without events", [], false);
await drainCost("queue with events", ["q"], false);
await drainCost("queue with events, keepResult", ["q"], true);
await transport.close();
await server.stop();
