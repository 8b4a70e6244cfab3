/**
 * What execution metrics cost: `MetricsTracker.record()` per call, a flush
 * in commands and round trips, and a no-op drain at c=10 on a private
 * redis-server with the worker's metrics off (`metrics: false`) and on (the
 * default), rounds interleaved so drift hits both alike.
 *
 *   npx tsx test/bench/metrics-cost.ts [--jobs 100000] [--rounds 3]
 *   npx bun test/bench/metrics-cost.ts   |   npx deno run -A test/bench/metrics-cost.ts
 */
import { createClient, createWorker, defineJob, silentLogger } from "../../mod.ts";
import { keys } from "../../src/extend.ts";
import { MetricsTracker } from "../../src/features/metrics/tracker.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { startRedis } from "../support/redis.ts";
import { args, runtimeName } from "./child.ts";

const a = args();
const JOBS = Number(a.jobs ?? 100_000);
const ROUNDS = Number(a.rounds ?? 3);
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

/** ns per record() call for `classes` distinct classes, 1% failures, realistic durations. */
function recordCost(classes: number): number {
  const names = Array.from({ length: classes }, (_, i) => `App::Job${i}`);
  const durations = Array.from({ length: 1024 }, (_, i) => (i % 97) * 0.37);
  const n = 2_000_000;
  const samples: number[] = [];
  for (let round = 0; round < 7; round++) {
    const tracker = new MetricsTracker();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) tracker.record(names[i % classes], durations[i & 1023], i % 100 === 0);
    samples.push(((performance.now() - t0) * 1e6) / n);
  }
  return median(samples.slice(2));
}

function clockCost(): number {
  const n = 2_000_000;
  let sink = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) sink += performance.now();
  const ns = ((performance.now() - t0) * 1e6) / n;
  return sink > 0 ? ns : ns;
}

console.log(`runtime ${runtimeName()}`);
for (const classes of [1, 10, 100]) {
  console.log(`record(): ${recordCost(classes).toFixed(1)} ns/call, ${classes} classes`);
}
console.log(
  `performance.now(): ${clockCost().toFixed(1)} ns/call (the engine takes one more per job for the duration)`,
);

const server = await startRedis();
try {
  const transport = ioredisTransport({ url: server.url });
  const k = keys();

  // One flush, whatever the number of classes: commands and round trips.
  for (const classes of [1, 10, 100]) {
    const tracker = new MetricsTracker();
    for (let i = 0; i < 10_000; i++) tracker.record(`App::Job${i % classes}`, (i % 50) * 3, i % 20 === 0);
    await tracker.flush(transport, k); // loads the script once
    for (let i = 0; i < 10_000; i++) tracker.record(`App::Job${i % classes}`, (i % 50) * 3, i % 20 === 0);
    await transport.call("CONFIG", "RESETSTAT");
    const c0 = { ...transport.counters };
    await tracker.flush(transport, k);
    const sent = transport.counters.commands - c0.commands, trips = transport.counters.roundTrips - c0.roundTrips;
    const stats = String(await transport.call("INFO", "commandstats"));
    const inside = [...stats.matchAll(/cmdstat_(\w+):calls=(\d+)/g)]
      .filter(([, name]) => !["evalsha", "config", "info"].includes(name))
      .reduce((sum, [, , calls]) => sum + Number(calls), 0);
    console.log(
      `flush of ${classes} classes: ${sent} command(s) sent, ${trips} round trip(s); ${inside} run inside the script`,
    );
  }

  // No-op drain at c=10 with the worker's own metrics off and on.
  const variants: Record<string, { metrics: boolean }> = { off: { metrics: false }, on: { metrics: true } };
  const results: Record<string, number[]> = { off: [], on: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, variant] of Object.entries(variants)) {
      await transport.call("FLUSHDB");
      let performed = 0;
      let done!: () => void;
      const allDone = new Promise<void>((resolve) => (done = resolve));
      const NoopJob = defineJob({
        name: "NoopJob",
        perform() {
          if (++performed === JOBS) done();
        },
      });
      const client = createClient({ transport });
      for (let i = 0; i < JOBS; i += 10_000) await client.pushBulk(NoopJob, Array.from({ length: 10_000 }, () => []));
      const worker = createWorker({
        transport,
        jobs: [NoopJob],
        concurrency: 10,
        metrics: variant.metrics,
        logger: silentLogger,
        jobLogging: false,
        handleSignals: false,
        blockSeconds: 1,
      });
      const t0 = performance.now();
      await worker.run();
      await allDone;
      results[name].push(JOBS / ((performance.now() - t0) / 1000));
      await worker.stop();
    }
  }
  const base = median(results.off);
  for (const [name, rates] of Object.entries(results)) {
    console.log(
      `drain c=10 ${name}: median ${Math.round(median(rates))} jobs/s (${rates.map(Math.round).join(", ")})${
        name === "off" ? "" : `, ${((1 - median(rates) / base) * 100).toFixed(1)}% below off`
      }`,
    );
  }
  await transport.close();
} finally {
  await server.stop();
}
