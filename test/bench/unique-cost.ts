/**
 * What unique jobs cost: billed commands per push and per job processed
 * (counted by the Upstash REST gateway fixture in front of a private
 * redis-server, so every command is one Upstash bills), and the client's CPU
 * time for a 100k bulk push with and without the unique middleware (a
 * transport that answers at once, so only the client's work is timed).
 *
 *   npx tsx test/bench/unique-cost.ts [--jobs 10000] [--bulk 100000] [--runs 7]
 *
 * Prints one JSON line per figure.
 */
import { createClient, createWorker, defineJob, drain, silentLogger } from "../../mod.ts";
import { uniqueJobs } from "../../src/features/mod.ts";
import { upstashTransport } from "../../src/transport/adapters/upstash/upstash_transport.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { startRedis } from "../support/redis.ts";
import { startUpstashGateway } from "../support/upstash-gateway.ts";
import { args, runtimeName } from "./child.ts";

const a = args();
const jobs = Number(a.jobs ?? 10_000);
const bulkJobs = Number(a.bulk ?? 100_000);
const runs = Number(a.runs ?? 7);
const unique = uniqueJobs();
const Plain = defineJob({ name: "Plain", perform(_ctx, _i: number) {} });
const Start = defineJob({ name: "Start", unique: { for: 600, until: "start" }, perform(_ctx, _i: number) {} });
const Success = defineJob({ name: "Success", unique: { for: 600, until: "success" }, perform(_ctx, _i: number) {} });
const report = (figure: string, value: Record<string, unknown>) =>
  console.log(JSON.stringify({ runtime: runtimeName(), figure, ...value }));

// 1. The client's CPU: a transport that answers every batch at once.
const nullTransport: Transport = {
  kind: "null",
  blocking: false,
  ordered: true,
  counters: { commands: 0, roundTrips: 0 },
  call: () => Promise.resolve(null),
  block: () => Promise.resolve(null),
  pipeline: (batch) => Promise.resolve(batch.map(() => "OK")),
  // A guard script's reply: every job pushed.
  script: (script, _keys, argv) =>
    Promise.resolve(script.decode(Array.from({ length: (argv.length - 2) / 6 }, () => [1, ""]).flat())),
  close: () => Promise.resolve(),
};
const argsList = Array.from({ length: bulkJobs }, (_, i) => [i] as [number]);
async function time(label: string, push: () => Promise<unknown>): Promise<void> {
  await push(); // warm up
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await push();
    times.push(performance.now() - t0);
  }
  times.sort((x, y) => x - y);
  report(`client CPU, bulk push of ${bulkJobs}: ${label}`, {
    medianMs: Math.round(times[runs >> 1]),
    bestMs: Math.round(times[0]),
  });
}
const bare = createClient({ transport: nullTransport });
const withUnique = createClient({ transport: nullTransport, features: [unique] });
await time("plain job, no middleware", () => bare.pushBulk(Plain, argsList));
await time("plain job, unique middleware installed", () => withUnique.pushBulk(Plain, argsList));
await time("unique job (lock + push in one script per batch)", () => withUnique.pushBulk(Success, argsList));

// 2. Billed commands, through the Upstash gateway.
const server = await startRedis();
const gw = await startUpstashGateway({ redisUrl: server.url, token: "t" });
const t = upstashTransport({ url: gw.url, token: "t" });
const client = createClient({ transport: t, features: [unique] });
const billed = async (work: () => Promise<unknown>): Promise<number> => {
  const before = gw.commands;
  await work();
  return gw.commands - before;
};
await client.push(Success, [-1]); // loads the script once
const pushes = 200;
for (const job of [Plain, Success]) {
  const n = await billed(async () => {
    for (let i = 0; i < pushes; i++) await client.push(job, [i]);
  });
  report(`billed commands per single push: ${job.name}`, { perPush: n / pushes });
}
report("billed commands per duplicate push (refused)", {
  perPush: (await billed(async () => {
    for (let i = 0; i < pushes; i++) await client.push(Success, [i]);
  })) / pushes,
});
await t.call("FLUSHDB");
for (const job of [Plain, Success]) {
  const n = await billed(() => client.pushBulk(job, Array.from({ length: jobs }, (_, i) => [i])));
  report(`billed commands per job, bulk push of ${jobs}: ${job.name}`, { perJob: n / jobs });
}
for (const job of [Plain, Start, Success]) {
  await t.call("FLUSHDB");
  await client.pushBulk(job, Array.from({ length: jobs }, (_, i) => [i]));
  const r = await drain({ transport: t, jobs: [job], budgetMs: 120_000, features: [unique], metrics: false });
  const locks = (await t.call("KEYS", "edgekiq:unique:*")) as string[];
  report(`drain ${jobs} (reliable fetch): ${job.name}`, {
    processed: r.processed,
    commandsPerJob: Number(r.commandsPerJob.toFixed(4)),
    locksLeft: locks.length,
  });
}
for (const job of [Plain, Start, Success]) {
  await t.call("FLUSHDB");
  await client.pushBulk(job, Array.from({ length: jobs }, (_, i) => [i]));
  const worker = createWorker({
    transport: t,
    jobs: [job],
    features: [unique],
    logger: silentLogger,
    handleSignals: false,
    poller: false,
    metrics: false,
  });
  const n = await billed(async () => {
    await worker.run();
    while (Number(await t.call("LLEN", "queue:default")) > 0) await new Promise((r) => setTimeout(r, 20));
    await worker.stop();
  });
  report(`always-on worker, ${jobs} backlog (includes start, heartbeats, stop): ${job.name}`, {
    commandsPerJob: Number((n / jobs).toFixed(4)),
    locksLeft: ((await t.call("KEYS", "edgekiq:unique:*")) as string[]).length,
  });
}
await t.close();
await gw.stop();
await server.stop();
