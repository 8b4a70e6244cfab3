/**
 * What two of the dashboard's choices cost Redis (issue 30), on a private
 * redis-server:
 *
 * - The case-insensitive `substr` filter: one request's 10 ZSCANs (COUNT
 *   1,000) over a big retry set with the pattern as typed (`*ChargeCard*`,
 *   case-sensitive, as before) and as the dashboard now sends it
 *   (`*[cC][hH]...*`), Redis's own time per call (INFO commandstats).
 * - Flushing the job counters more often than the heartbeat, as the live
 *   chart could have asked for: what one heartbeat costs Redis, and so what
 *   a 1 s cadence costs a fleet against the 10 s default (20 s over HTTP).
 *
 *   npx tsx test/bench/dashboard-cost.ts [--entries 300000] [--beats 5000]
 */
import { caselessPattern } from "../../src/web/dashboard/page_routes.tsx";
import { keys } from "../../src/keys.ts";
import { HEARTBEAT } from "../../src/scripts/heartbeat.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { statKeys, STATS_TTL } from "../../src/server/job_counters.ts";
import { startRedis } from "../support/redis.ts";
import { args } from "./child.ts";

const a = args();
const ENTRIES = Number(a.entries ?? 300_000);
const BEATS = Number(a.beats ?? 5_000);

/** Redis's own time for `command` since the last reset: [calls, microseconds]. */
async function commandStats(redis: Transport, command: string): Promise<[number, number]> {
  const info = String(await redis.call("INFO", "commandstats"));
  const line = new RegExp(`cmdstat_${command}:calls=(\\d+),usec=(\\d+)`).exec(info);
  return line ? [Number(line[1]), Number(line[2])] : [0, 0];
}

async function filterCost(redis: Transport): Promise<void> {
  const now = Date.now() / 1000;
  for (let i = 0; i < ENTRIES; i += 1000) {
    const members: Array<string | number> = [];
    for (let j = i; j < i + 1000; j++) {
      const klass = j % 500 === 0 ? "ChargeCard" : ["SyncStripeCharges", "DeliverWebhook", "ImportCsvJob"][j % 3];
      members.push(
        now + j,
        JSON.stringify({
          class: klass,
          args: [{ account: j, cents: 1999 }],
          queue: "default",
          jid: j.toString(16).padStart(24, "0"),
          retry: true,
          created_at: now,
          enqueued_at: now,
          failed_at: now,
          retry_count: 2,
          error_class: "Net::ReadTimeout",
          error_message: "Net::ReadTimeout with #<TCPSocket:(closed)>",
        }),
      );
    }
    await redis.call("ZADD", "retry", ...members);
  }
  for (
    const [name, pattern] of [
      ["as typed", "*ChargeCard*"],
      ["caseless", caselessPattern("chargecard")],
      ["none (every entry sent, matched in JavaScript)", "*"],
    ]
  ) {
    const rounds: number[] = [];
    let found = 0;
    for (let round = 0; round < 5; round++) {
      await redis.call("CONFIG", "RESETSTAT");
      let cursor = "0";
      found = 0;
      for (let step = 0; step < 10; step++) {
        const [next, items] = (await redis.call("ZSCAN", "retry", cursor, "MATCH", pattern, "COUNT", 1000)) as [
          string,
          string[],
        ];
        cursor = next;
        found += items.length / 2;
      }
      const [calls, usec] = await commandStats(redis, "zscan");
      rounds.push(usec / calls);
    }
    rounds.sort((x, y) => x - y);
    console.log(
      `filter ${name} (${pattern}): ${rounds[2].toFixed(0)} µs of Redis time per ZSCAN of 1,000 entries, ` +
        `${(rounds[2] * 10 / 1000).toFixed(1)} ms per request (10 ZSCANs, ${found} found); ` +
        `the whole set: ${(rounds[2] * ENTRIES / 1000 / 1000).toFixed(0)} ms`,
    );
  }
}

async function beatCost(redis: Transport): Promise<void> {
  const k = keys();
  const info = {
    hostname: "web-1",
    started_at: Date.now() / 1000,
    pid: 4242,
    tag: "app",
    concurrency: 10,
    queues: ["default", "mail"],
    weights: [{ default: 0, mail: 0 }],
    capsules: { default: { concurrency: 10, mode: "weighted", weights: { default: 0, mail: 0 } } },
    labels: ["blue"],
    identity: "web-1:4242:abcdef",
    version: "0.1.0",
    embedded: false,
  };
  const work = Array.from({ length: 5 }, (_, i) => [
    `default:${i}`,
    JSON.stringify({ queue: "default", payload: JSON.stringify({ class: "X", args: [i], jid: `j${i}` }), run_at: 1 }),
  ]).flat();
  await redis.call("CONFIG", "RESETSTAT");
  const started = performance.now();
  for (let i = 0; i < BEATS; i++) {
    const fields = ["info", JSON.stringify(info), "busy", 5, "beat", String(Date.now() / 1000), "quiet", "false"];
    await redis.script(HEARTBEAT, [
      k.processes,
      k.process(info.identity),
      k.work(info.identity),
      k.legacyWork(info.identity),
      k.signals(info.identity),
      ...statKeys(k, new Date()),
    ], [info.identity, 60, STATS_TTL, 3, 0, String(i + 1), 1, "", fields.length, ...fields, ...work]);
  }
  const wall = (performance.now() - started) / BEATS;
  const [calls, usec] = await commandStats(redis, "evalsha");
  const perBeat = usec / calls;
  console.log(
    `heartbeat (with a flush and 5 running jobs): ${perBeat.toFixed(1)} µs of Redis time, ` +
      `${(wall * 1000).toFixed(0)} µs round trip on loopback`,
  );
  for (const [label, seconds] of [["10 s (default)", 10], ["20 s (HTTP default)", 20], ["1 s", 1]] as const) {
    const perMinute = 60 / seconds;
    console.log(
      `  every ${label}: ${perMinute} commands a minute per process (${perMinute * 60 * 24} a day), ` +
        `${(perMinute * perBeat / 1000).toFixed(2)} ms of Redis a minute; a fleet of 100: ` +
        `${(perMinute * 100 * perBeat / 60 / 1e6 * 100).toFixed(3)}% of one Redis core`,
    );
  }
}

const server = await startRedis();
const redis = ioredisTransport({ url: server.url });
try {
  await filterCost(redis);
  await redis.call("FLUSHDB");
  await beatCost(redis);
} finally {
  await redis.close();
  await server.stop();
}
