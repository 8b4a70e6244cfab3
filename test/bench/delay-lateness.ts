/**
 * Scheduled-job lateness and idle cost at a worker's default settings over
 * TCP: `npx tsx test/bench/delay-lateness.ts` (WINDOW=90 for each
 * scenario's push window, IDLE=120 for the idle windows).
 *
 * - lateness: jobs pushed at random moments with `in: 2` (the delay the
 *   issue measured 11-13 s late), then with `in` spread over 3-30 s, then
 *   `in: 2` one job at a time with nothing else scheduled (the worst case:
 *   only the next regular poll learns of it); each job's lateness is its
 *   start minus its scheduled time. ONLY=stream|alone runs one part.
 * - idle cost: commands per minute of a worker with nothing to do, then with
 *   one job scheduled an hour ahead (an idle poller must not poll more).
 */
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { startRedis } from "../support/redis.ts";

const window = Number(process.env.WINDOW ?? 90);
const idle = Number(process.env.IDLE ?? 120);
const server = await startRedis();
const transport = ioredisTransport({ url: server.url });
const client = createClient({ transport });
const lateness = new Map<string, number>();
const due = new Map<string, number>();
const Timed = defineJob({
  name: "Timed",
  perform(ctx) {
    lateness.set(ctx.jid, Date.now() - due.get(ctx.jid)!);
  },
});
const worker = createWorker({ transport, jobs: [Timed], logger: silentLogger, handleSignals: false });
await worker.run();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
await sleep(5000);

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function scenario(name: string, delay: () => number): Promise<void> {
  const jids: string[] = [];
  const end = Date.now() + window * 1000;
  let longest = 0;
  while (Date.now() < end) {
    const seconds = delay();
    longest = Math.max(longest, seconds);
    const pushedAt = Date.now(); // the client scores the job pushedAt + seconds (within a millisecond)
    const jid = (await client.push(Timed, [], { in: seconds }))!;
    due.set(jid, pushedAt + seconds * 1000);
    jids.push(jid);
    await sleep(500 + Math.random() * 1000);
  }
  const deadline = Date.now() + (longest + 30) * 1000;
  while (jids.some((j) => !lateness.has(j)) && Date.now() < deadline) await sleep(100);
  const xs = jids.map((j) => lateness.get(j)).filter((x): x is number => x !== undefined);
  console.log(
    `${name}: ${xs.length}/${jids.length} jobs ran; lateness p50 ${percentile(xs, 50)} ms, p99 ${
      percentile(xs, 99)
    } ms, max ${Math.max(...xs)} ms`,
  );
}

/** One job at a time, nothing else scheduled: the poller knows of it only from its next regular poll. */
async function alone(name: string, seconds: number): Promise<void> {
  const xs: number[] = [];
  const end = Date.now() + window * 1000;
  while (Date.now() < end) {
    const pushedAt = Date.now();
    const jid = (await client.push(Timed, [], { in: seconds }))!;
    due.set(jid, pushedAt + seconds * 1000);
    while (!lateness.has(jid)) await sleep(20);
    xs.push(lateness.get(jid)!);
    await sleep(Math.random() * 3000);
  }
  console.log(
    `${name}: ${xs.length} jobs; lateness p50 ${percentile(xs, 50)} ms, p99 ${percentile(xs, 99)} ms, max ${
      Math.max(...xs)
    } ms`,
  );
}

const only = process.env.ONLY;
if (!only || only === "stream") {
  await scenario("in: 2, pushed every 0.5-1.5 s", () => 2);
  await scenario("in: 3-30 s, pushed every 0.5-1.5 s", () => 3 + Math.random() * 27);
}
if (!only || only === "alone") await alone("in: 2, one at a time", 2);
if (only === "alone") {
  await worker.stop();
  await transport.close();
  await server.stop();
  process.exit(0);
}

async function idleCost(name: string): Promise<void> {
  await sleep(3000);
  const c0 = transport.counters.commands;
  await sleep(idle * 1000);
  console.log(`idle, ${name}: ${((transport.counters.commands - c0) * 60 / idle).toFixed(1)} commands per minute`);
}
await idleCost("nothing scheduled");
await client.push(Timed, [], { in: 3600 });
await idleCost("one job scheduled an hour ahead");

await worker.stop();
await transport.close();
await server.stop();
