/**
 * What issue 29's operational tools cost Redis, on a private redis-server:
 * `npx tsx test/bench/ops-cost.ts` (N=20000 jobs by default).
 *
 * - reliable push: a bulk push and single pushes with and without
 *   `reliablePush`: jobs/s, and Redis commands per job (`INFO commandstats`,
 *   so the commands a script runs count) and Redis CPU per job;
 * - a Prometheus scrape (`metricsHandler()`): client commands, round trips
 *   and milliseconds, with 1 and with 41 queues, 21 processes, 21 classes;
 * - leader election: Redis commands per heartbeat with and without it.
 */
import { Hono } from "hono";
import { createClient, createWorker, defineJob, drain, silentLogger } from "../../mod.ts";
import { leaderElection } from "../../src/features/mod.ts";
import { metricsHandler } from "../../src/web/mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { startRedis } from "../support/redis.ts";

const N = Number((globalThis as { process?: { env: Record<string, string> } }).process?.env.N ?? 20_000);
const server = await startRedis();
const transport = ioredisTransport({ url: server.url });
const admin = ioredisTransport({ url: server.url });
const Noop = defineJob({ name: "Noop", perform: (_ctx, _n: number) => {} });

/** Redis's own count of commands run (scripts' inner ones included) and its main-thread CPU, µs. */
async function redisUsage(): Promise<{ calls: number; cpuUs: number }> {
  const stats = String(await admin.call("INFO", "commandstats"));
  let calls = 0;
  for (const m of stats.matchAll(/calls=(\d+)/g)) calls += Number(m[1]);
  const cpu = String(await admin.call("INFO", "cpu"));
  const user = Number(/used_cpu_user_main_thread:([\d.]+)/.exec(cpu)?.[1] ?? /used_cpu_user:([\d.]+)/.exec(cpu)![1]);
  const sys = Number(/used_cpu_sys_main_thread:([\d.]+)/.exec(cpu)?.[1] ?? /used_cpu_sys:([\d.]+)/.exec(cpu)![1]);
  return { calls, cpuUs: (user + sys) * 1e6 };
}

async function measure(label: string, run: () => Promise<void>, jobs: number): Promise<void> {
  await admin.call("FLUSHALL");
  await admin.call("CONFIG", "RESETSTAT");
  const before = await redisUsage();
  const t0 = performance.now();
  await run();
  const ms = performance.now() - t0;
  const after = await redisUsage();
  // The INFO calls themselves: two per usage read.
  const calls = after.calls - before.calls - 2;
  console.log(
    `${label}: ${Math.round(jobs / (ms / 1000))} jobs/s, ${(calls / jobs).toFixed(2)} Redis commands per job, ` +
      `${((after.cpuUs - before.cpuUs) / jobs).toFixed(2)} µs Redis CPU per job`,
  );
}

const args = Array.from({ length: N }, (_, i) => [i] as [number]);
for (const reliable of [false, true]) {
  const client = createClient({ transport, reliablePush: reliable });
  await client.push(Noop, [0]); // loads the script
  await measure(
    `bulk push ${N}, reliablePush ${reliable ? "on " : "off"}`,
    () => client.pushBulk(Noop, args).then(() => {}),
    N,
  );
  const singles = Math.min(N, 5000);
  await measure(`${singles} single pushes, reliablePush ${reliable ? "on " : "off"}`, async () => {
    for (let i = 0; i < singles; i++) await client.push(Noop, [i]);
  }, singles);
}

async function scrapeCost(t: Transport, app: Hono): Promise<string> {
  await app.request("/metrics");
  const { commands, roundTrips } = t.counters;
  const t0 = performance.now();
  const runs = 50;
  for (let i = 0; i < runs; i++) await (await app.request("/metrics")).text();
  const ms = (performance.now() - t0) / runs;
  return `${(t.counters.commands - commands) / runs} commands, ${
    (t.counters.roundTrips - roundTrips) / runs
  } round trips, ${ms.toFixed(2)} ms`;
}
await admin.call("FLUSHALL");
const app = new Hono().route("/metrics", metricsHandler({ transport, auth: () => true }));
const client = createClient({ transport });
await client.push(Noop, [1]);
await drain({ transport, jobs: [Noop], budgetMs: 10_000, logger: silentLogger });
console.log(`scrape, 1 queue, 1 class: ${await scrapeCost(transport, app)}`);
const many = Array.from({ length: 20 }, (_, i) => defineJob({ name: `Job${i}`, perform: () => {} }));
for (const [i, job] of many.entries()) await client.push(job, [], { queue: `q${i}` });
await drain({ transport, jobs: many, queues: many.map((_, i) => `q${i}`), budgetMs: 10_000, logger: silentLogger });
for (let q = 0; q < 20; q++) await client.push(Noop, [q], { queue: `r${q}` });
for (let p = 0; p < 20; p++) {
  await transport.pipeline([["SADD", "processes", `h:${p}:x`], ["HSET", `h:${p}:x`, "busy", 1, "info", "{}"]]);
}
console.log(`scrape, 41 queues, 20 processes, 21 classes: ${await scrapeCost(transport, app)}`);

for (const withLeader of [false, true]) {
  await admin.call("FLUSHALL");
  const w = createWorker({
    transport,
    jobs: [Noop],
    queues: ["nothing"],
    heartbeatInterval: 3000,
    heartbeatTtl: 3600,
    poller: false,
    handleSignals: false,
    closeTransport: false,
    features: withLeader ? [leaderElection()] : [],
    logger: silentLogger,
  });
  await w.run();
  await admin.call("CONFIG", "RESETSTAT");
  const before = await redisUsage();
  const beats = 20;
  for (let i = 0; i < beats; i++) await w.beat();
  await new Promise((r) => setTimeout(r, 100));
  const after = await redisUsage();
  const scripts = /cmdstat_evalsha:calls=(\d+)/.exec(String(await admin.call("INFO", "commandstats")))?.[1];
  console.log(
    `heartbeat ${withLeader ? "with" : "without"} leader election: ${
      ((after.calls - before.calls - 2) / beats).toFixed(1)
    } Redis commands per beat (EVALSHA calls in all: ${scripts}, the blocking fetch included)`,
  );
  await w.stop();
}
await transport.close();
await admin.close();
await server.stop();
