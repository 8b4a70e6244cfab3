/**
 * Scheduled-backlog promotion: N due jobs in `schedule`, moved to their
 * queue either by edgekiq's batched `Poller.promote` (one ZRANGE plus one
 * script per 100) or by a one-per-call baseline that mimics Sidekiq 6/7's
 * `Scheduled::Enq`: one EVALSHA popping one due entry, then the client's
 * MULTI [SADD queues, LPUSH queue] for it, per job.
 *
 *   --url redis://...  --transport ioredis|bun  --jobs N  --mode batched|one-per-call
 */
import { createClient, defineJob, silentLogger } from "../../mod.ts";
import { defineScript, keys } from "../../src/extend.ts";
import { Poller } from "../../src/server/poller.ts";
import { commandWindow, main, openTransport, round } from "./child.ts";

/** Sidekiq's LUA_ZPOPBYSCORE, verbatim. */
const ZPOPBYSCORE = defineScript<string | null>({
  name: "bench-zpopbyscore",
  keys: ["sorted set"],
  argv: ["now"],
  lua: `
local key, now = KEYS[1], ARGV[1]
local jobs = redis.call("zrangebyscore", key, "-inf", now, "limit", 0, 1)
if jobs[1] then
  redis.call("zrem", key, jobs[1])
  return jobs[1]
end
`,
  twin: () => {
    throw new Error("the bench baseline needs a real Redis");
  },
  decode: (reply) => (typeof reply === "string" ? reply : null),
});

main(async (a) => {
  const jobs = Number(a.jobs ?? 100_000);
  const mode = a.mode ?? "batched";
  const transport = await openTransport(a.transport ?? "ioredis", a.url);
  const admin = await openTransport(a.transport ?? "ioredis", a.url);
  const k = keys();
  const NoopJob = defineJob({ name: "NoopJob", perform(_ctx, _i: number) {} });
  const client = createClient({ transport });

  // Seed: N jobs scheduled an hour ahead; "now" for the promotion is two hours ahead.
  const at = Date.now() / 1000 + 3600;
  const now = Date.now() + 7200_000;
  for (let i = 0; i < jobs; i += 10_000) {
    const n = Math.min(10_000, jobs - i);
    await client.pushBulk(NoopJob, Array.from({ length: n }, (_, j) => [i + j]), { at });
  }
  const seeded = Number(await admin.call("ZCARD", k.schedule));
  if (seeded !== jobs) throw new Error(`seeded ${seeded} scheduled jobs, expected ${jobs}`);

  const window = await commandWindow(admin);
  const c0 = { ...transport.counters };
  const t0 = performance.now();
  let moved = 0;
  if (mode === "batched") {
    moved = await new Poller({ client, logger: silentLogger }).promote(k.schedule, now);
  } else {
    const nowSeconds = String(now / 1000);
    for (;;) {
      const raw = await transport.script(ZPOPBYSCORE, [k.schedule], [nowSeconds]);
      if (raw === null) break;
      const payload = JSON.parse(raw);
      payload.enqueued_at = Date.now() / 1000;
      await transport.pipeline([["SADD", k.queues, payload.queue], [
        "LPUSH",
        k.queue(payload.queue),
        JSON.stringify(payload),
      ]], {
        atomic: true,
      });
      moved++;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const serverCmds = await window.stop();
  const queued = Number(await admin.call("LLEN", k.queue("default")));
  const left = Number(await admin.call("ZCARD", k.schedule));
  if (moved !== jobs || queued !== jobs || left !== 0) {
    throw new Error(`promotion moved ${moved} (queue ${queued}, left ${left}), expected ${jobs}`);
  }
  const result = {
    jobs,
    jobsPerSec: round(jobs / seconds, 0),
    seconds: round(seconds, 3),
    roundTripsPerJob: round((transport.counters.roundTrips - c0.roundTrips) / jobs, 4),
    serverCommandsPerJob: round(serverCmds / jobs, 3),
  };
  await Promise.allSettled([transport.close(), admin.close()]);
  return result;
});
