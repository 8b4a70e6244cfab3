/**
 * edgekiq bulk push: time `client.pushBulk` of N no-op jobs (one round trip
 * per 1,000, pipelined). Runs on Node, Bun and Deno.
 *
 *   --url redis://...  --transport ioredis|bun  --jobs N
 */
import { createClient, defineJob } from "../../mod.ts";
import { commandWindow, main, openTransport, round, rssMB } from "./child.ts";

main(async (a) => {
  const jobs = Number(a.jobs ?? 100_000);
  const transport = await openTransport(a.transport ?? "ioredis", a.url);
  const admin = await openTransport(a.transport ?? "ioredis", a.url);
  const NoopJob = defineJob({ name: "NoopJob", perform(_ctx, _i: number) {} });
  const client = createClient({ transport });
  const argsList = Array.from({ length: jobs }, (_, i) => [i] as [number]);
  // Warm up the connection and the code paths (not timed, then removed).
  await client.pushBulk(NoopJob, argsList.slice(0, 1000), { queue: "warmup" });
  await admin.call("DEL", "queue:warmup");

  const window = await commandWindow(admin);
  const c0 = { ...transport.counters };
  const t0 = performance.now();
  const jids = await client.pushBulk(NoopJob, argsList);
  const seconds = (performance.now() - t0) / 1000;
  const serverCmds = await window.stop();
  const queued = Number(await admin.call("LLEN", "queue:default"));
  if (queued !== jobs || jids.length !== jobs) throw new Error(`pushed ${queued} jobs, expected ${jobs}`);
  const result = {
    jobs,
    jobsPerSec: round(jobs / seconds, 0),
    seconds: round(seconds, 3),
    rssMB: rssMB(),
    roundTripsPerJob: round((transport.counters.roundTrips - c0.roundTrips) / jobs, 4),
    serverCommandsPerJob: round(serverCmds / jobs, 4),
  };
  await Promise.allSettled([transport.close(), admin.close()]);
  return result;
});
