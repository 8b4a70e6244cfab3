/**
 * What the issue-29 features cost a worker: a no-op drain at c=10 on a
 * private redis-server, with none of them, with expiring jobs and encrypted
 * arguments on but unused, with cancellation on (nothing cancelled), and
 * with all three, rounds interleaved so drift hits every configuration
 * alike. Prints, per configuration, the median jobs/s, commands and round
 * trips per job. Then the cancel latency: from `cancelJob` to the running
 * job's `ctx.stopping`, at the default 10 s heartbeat and at 1 s.
 *
 *   npx tsx test/bench/operations-cost.ts [--jobs 20000] [--rounds 5] [--latency 1]
 *
 * EDGEKIQ_ROOT=/path/to/another/checkout/ runs the "none" configuration on
 * that checkout's code (a before/after of the core's seams).
 */
import { startRedis } from "../support/redis.ts";
import { args } from "./child.ts";

const a = args();
const JOBS = Number(a.jobs ?? 20_000);
const ROUNDS = Number(a.rounds ?? 5);
const LATENCY = Number(a.latency ?? 1);
const root = process.env.EDGEKIQ_ROOT ?? new URL("../../", import.meta.url).pathname;
// deno-lint-ignore no-explicit-any
const edgekiq: any = await import(`${root}mod.ts`);
// deno-lint-ignore no-explicit-any
const { ioredisTransport }: any = await import(`${root}src/transport/adapters/ioredis/ioredis_transport.ts`);
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

const configs: Record<string, () => unknown[]> = { none: () => [] };
if (edgekiq.jobCancellation) {
  configs["expiry+encryption, unused"] = () => [
    edgekiq.expiringJobs(),
    edgekiq.encryptedArgs({ keys: { 1: KEY } }),
  ];
  configs["cancel, nothing cancelled"] = () => [edgekiq.jobCancellation()];
  configs["all three"] = () => [
    edgekiq.expiringJobs(),
    edgekiq.encryptedArgs({ keys: { 1: KEY } }),
    edgekiq.jobCancellation(),
  ];
}

const server = await startRedis();
const transport = ioredisTransport({ url: server.url });
const admin = ioredisTransport({ url: server.url });

async function drainOnce(features: unknown[]): Promise<{ rate: number; commands: number; trips: number }> {
  await admin.call("FLUSHDB");
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((r) => (finished = r));
  const Noop = edgekiq.defineJob({ name: "Noop", perform: () => void (++done === JOBS && finished()) });
  const client = edgekiq.createClient({ transport: admin });
  for (let i = 0; i < JOBS; i += 10_000) {
    await client.pushBulk(Noop, Array.from({ length: Math.min(10_000, JOBS - i) }, () => []));
  }
  const worker = edgekiq.createWorker({
    transport,
    jobs: [Noop],
    concurrency: 10,
    features,
    logger: edgekiq.silentLogger,
    jobLogging: false,
    handleSignals: false,
    closeTransport: false,
    blockSeconds: 1,
  });
  const c0 = { ...transport.counters };
  const t0 = performance.now();
  await worker.run();
  await all;
  const seconds = (performance.now() - t0) / 1000;
  const commands = transport.counters.commands - c0.commands;
  const trips = transport.counters.roundTrips - c0.roundTrips;
  await worker.stop();
  return { rate: JOBS / seconds, commands: commands / JOBS, trips: trips / JOBS };
}

const samples = new Map<string, { rate: number; commands: number; trips: number }[]>();
// One round of each first, not counted: the JIT warms up on it.
for (const features of Object.values(configs)) await drainOnce(features());
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, features] of Object.entries(configs)) {
    const sample = await drainOnce(features());
    samples.set(name, [...(samples.get(name) ?? []), sample]);
  }
}
console.log(`drain of ${JOBS} no-op jobs, c=10, ${ROUNDS} interleaved rounds (median):`);
for (const [name, list] of samples) {
  console.log(
    `  ${name.padEnd(28)} ${Math.round(median(list.map((s) => s.rate))).toString().padStart(7)} jobs/s  ` +
      `${median(list.map((s) => s.commands)).toFixed(4)} commands/job  ${
        median(list.map((s) => s.trips)).toFixed(4)
      } round trips/job  (rates: ${list.map((s) => Math.round(s.rate)).join(", ")})`,
  );
}

if (edgekiq.jobCancellation) {
  for (const beat of [10, 1]) {
    const waits: number[] = [];
    for (let i = 0; i < LATENCY; i++) {
      await admin.call("FLUSHDB");
      let started!: () => void;
      const running = new Promise<void>((r) => (started = r));
      let stoppedAt = 0;
      const Wait = edgekiq.defineJob({
        name: "Wait",
        async perform(ctx: { stopping: AbortSignal }) {
          started();
          await new Promise((r) => ctx.stopping.addEventListener("abort", r, { once: true }));
          stoppedAt = performance.now();
        },
      });
      const worker = edgekiq.createWorker({
        transport,
        jobs: [Wait],
        features: [edgekiq.jobCancellation()],
        heartbeatInterval: beat,
        logger: edgekiq.silentLogger,
        handleSignals: false,
        closeTransport: false,
        blockSeconds: 1,
      });
      await worker.run();
      const jid = await edgekiq.createClient({ transport: admin }).push(Wait, []);
      await running;
      // A random point in the heartbeat cycle, as a cancel from an operator would land.
      await new Promise((r) => setTimeout(r, Math.random() * beat * 1000));
      const t0 = performance.now();
      await edgekiq.cancelJob(edgekiq.createClient({ transport: admin }), jid);
      while (!stoppedAt) await new Promise((r) => setTimeout(r, 5));
      waits.push(stoppedAt - t0);
      await worker.stop();
    }
    console.log(
      `cancel to ctx.stopping with a ${beat} s heartbeat: ${
        waits.map((w) => `${(w / 1000).toFixed(2)} s`).join(", ")
      } (at most one beat)`,
    );
  }
}

await transport.close();
await admin.close();
await server.stop();
