/**
 * Scheduled-backlog promotion: N due jobs in `schedule`, moved to their
 * queue either by edgekiq's batched `Poller.promote` (one ZRANGE plus one
 * script per 100) or by a one-per-call baseline that mimics Sidekiq 6/7's
 * `Scheduled::Enq`: one EVALSHA popping one due entry, then the client's
 * MULTI [SADD queues, LPUSH queue] for it, per job.
 *
 *   --url redis://...  --transport ioredis|bun  --jobs N  --mode batched|one-per-call
 *   [--waiting W  --idle-polls R]
 *
 * With `--waiting W`, W more jobs are scheduled a day ahead (never due here),
 * and the scaling scenarios compare Redis's cost per promoted job, and per
 * idle poll (`--idle-polls R` polls while nothing is due), with and without
 * a large schedule.
 */
import { createClient, defineJob, silentLogger } from "../../mod.ts";
import { defineScript, keys } from "../../src/extend.ts";
import { Poller } from "../../src/server/poller.ts";
import { commandWindow, main, openTransport, redisCostOf, round } from "./child.ts";

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

  const waiting = Number(a.waiting ?? 0);
  const seed = async (n: number, at: number) => {
    for (let i = 0; i < n; i += 10_000) {
      await client.pushBulk(NoopJob, Array.from({ length: Math.min(10_000, n - i) }, (_, j) => [i + j]), { at });
    }
  };
  await seed(waiting, Date.now() / 1000 + 86_400);
  // Idle polls: nothing is due yet (the promotion's jobs are seeded below).
  const polls = Number(a["idle-polls"] ?? 0);
  const poller = new Poller({ client, logger: silentLogger });
  await poller.runOnce(); // the first poll takes the once-a-minute pruning lock; not an idle poll's cost
  const idle = await redisCostOf(admin, async () => {
    for (let i = 0; i < polls; i++) await poller.runOnce();
  });
  // Seed: N jobs scheduled an hour ahead; "now" for the promotion is two hours ahead.
  await seed(jobs, Date.now() / 1000 + 3600);
  const now = Date.now() + 7200_000;
  const seeded = Number(await admin.call("ZCARD", k.schedule));
  if (seeded !== jobs + waiting) throw new Error(`seeded ${seeded} scheduled jobs, expected ${jobs + waiting}`);

  const window = await commandWindow(admin);
  const c0 = { ...transport.counters };
  const t0 = performance.now();
  let moved = 0;
  let redisUs = NaN;
  if (mode === "batched") {
    const cost = await redisCostOf(admin, () => poller.promote(k.schedule, now));
    moved = cost.value;
    redisUs = cost.cpuUs;
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
  if (moved !== jobs || queued !== jobs || left !== waiting) {
    throw new Error(`promotion moved ${moved} (queue ${queued}, left ${left}), expected ${jobs}`);
  }
  const result = {
    jobs,
    jobsPerSec: round(jobs / seconds, 0),
    seconds: round(seconds, 3),
    roundTripsPerJob: round((transport.counters.roundTrips - c0.roundTrips) / jobs, 4),
    serverCommandsPerJob: round(serverCmds / jobs, 3),
    waiting,
    redisUsPerJob: round(redisUs / jobs, 2),
    idlePolls: polls,
    idlePollUs: polls ? round(idle.cpuUs / polls, 1) : null,
    idlePollCommands: polls ? round(idle.commands / polls, 2) : null,
  };
  await Promise.allSettled([transport.close(), admin.close()]);
  return result;
});
