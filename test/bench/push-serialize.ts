/**
 * The client's share of a bulk push: validate and serialise N no-op jobs,
 * with a transport that answers every pipeline at once, so only the client's
 * own work is timed (no Redis, no network). Runs on Node, Bun and Deno:
 *
 *   npx tsx test/bench/push-serialize.ts [--jobs 100000] [--runs 7]
 *   npx bun test/bench/push-serialize.ts
 *   npx deno run -A test/bench/push-serialize.ts
 *
 * Prints the median and best of `runs` timings, in milliseconds.
 */
import { createClient, defineJob } from "../../mod.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { args, runtimeName } from "./child.ts";

const a = args();
const jobs = Number(a.jobs ?? 100_000);
const runs = Number(a.runs ?? 7);
// --in 60 times the scheduled path (ZADD) instead of the queue path (LPUSH).
const options = a.in ? { in: Number(a.in) } : {};
let commands = 0;
const nullTransport: Transport = {
  kind: "null",
  blocking: false,
  ordered: true,
  counters: { commands: 0, roundTrips: 0 },
  call: () => Promise.resolve(null),
  block: () => Promise.resolve(null),
  pipeline: (batch) => {
    commands += batch.length;
    return Promise.resolve(batch.map(() => "OK"));
  },
  script: () => Promise.reject(new Error("no scripts")),
  close: () => Promise.resolve(),
};
const NoopJob = defineJob({ name: "NoopJob", perform(_ctx, _i: number) {} });
const client = createClient({ transport: nullTransport });
const argsList = Array.from({ length: jobs }, (_, i) => [i] as [number]);
await client.pushBulk(NoopJob, argsList.slice(0, 5000), options); // warm up
const times: number[] = [];
for (let r = 0; r < runs; r++) {
  commands = 0;
  const t0 = performance.now();
  const jids = await client.pushBulk(NoopJob, argsList, options);
  times.push(performance.now() - t0);
  if (jids.length !== jobs) throw new Error("lost jobs");
}
times.sort((x, y) => x - y);
console.log(JSON.stringify({
  runtime: runtimeName(),
  jobs,
  scheduled: Boolean(a.in),
  medianMs: Math.round(times[runs >> 1]),
  bestMs: Math.round(times[0]),
  commands,
}));
