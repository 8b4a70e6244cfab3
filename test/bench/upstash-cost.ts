/**
 * Upstash cost: billed commands per job while draining a 10k backlog (cron
 * drain and an always-on worker) and per idle minute, counted by the REST
 * gateway fixture in front of a private redis-server:
 * `npx tsx test/bench/upstash-cost.ts` (IDLE=120 for a longer idle window).
 */
import { createClient, createWorker, defineJob, drain, silentLogger } from "../../mod.ts";
import { upstashTransport } from "../../src/transport/adapters/upstash/upstash_transport.ts";
import { startRedis } from "../support/redis.ts";
import { startUpstashGateway } from "../support/upstash-gateway.ts";
const server = await startRedis();
const gw = await startUpstashGateway({ redisUrl: server.url, token: "t" });
const t = upstashTransport({ url: gw.url, token: "t" });
const Noop = defineJob({ name: "Noop", perform() {} });
await createClient({ transport: t }).pushBulk(Noop, Array.from({ length: 10000 }, () => []));
const before = gw.commands;
const r = await drain({ transport: t, jobs: [Noop], budgetMs: 60000, concurrency: 10 });
console.log(
  `drain 10k backlog over upstash: ${r.processed} jobs, ${(gw.commands - before)} billed commands, ${
    ((gw.commands - before) / r.processed).toFixed(3)
  } per job`,
);
await createClient({ transport: t }).pushBulk(Noop, Array.from({ length: 10000 }, () => []));
const w = createWorker({ transport: t, jobs: [Noop], logger: silentLogger, handleSignals: false });
const b2 = gw.commands;
await w.run();
while (Number(await t.call("LLEN", "queue:default")) > 0) await new Promise((r) => setTimeout(r, 50));
console.log(
  `always-on worker over upstash, 10k backlog: ${((gw.commands - b2 - 1) / 10000).toFixed(3)} commands per job`,
);
const secs = Number(process.env.IDLE ?? 60);
await new Promise((r) => setTimeout(r, 15000)); // past the poller's initial wait and the fetch back-off ramp
const c0 = gw.commands;
await new Promise((r) => setTimeout(r, secs * 1000));
console.log(
  `idle always-on worker over upstash: ${gw.commands - c0} commands in ${secs} s = ${
    ((gw.commands - c0) * 60 / secs).toFixed(1)
  } per minute`,
);
await w.stop();
await gw.stop();
await server.stop();
