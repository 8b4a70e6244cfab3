/**
 * Why large payloads cost reliable fetch so much Redis time (the payload
 * cliff in docs/performance.md), and what the alternatives would cost: the
 * pieces of the fetch script run alone in EVAL on a private redis-server,
 * per job, for several payload sizes. Redis's own time per call comes from
 * INFO commandstats (`usec` of eval), so the client and the network do not
 * count.
 *
 *   npx tsx test/bench/held-batch-cost.ts [--calls 10]
 *
 * Variants (each pops a batch of the payload's jobs from a list first):
 * - pop only: RPOP count, the jobs converted into Lua strings;
 * - now: the held-hash batch as the fetch script stores it (table.concat
 *   into one NUL-joined field, HSET, the blob returned, HDEL on ack);
 * - field per job: HSET one field per job, the array returned, HDEL;
 * - recovered check, whole: the unanchored `"edgekiq_recovered":%d+}%s*$`
 *   pattern the fetch script runs on the first startNow jobs of a batch;
 * - recovered check, tail: the same pattern on the last 64 bytes only.
 */
import { startRedis } from "../support/redis.ts";
import { args, filler, openTransport } from "./child.ts";

const VARIANTS: Record<string, string> = {
  "pop only": `local j = redis.call("RPOP", KEYS[1], ARGV[1]) return #j`,
  "now: one NUL-joined field": `local j = redis.call("RPOP", KEYS[1], ARGV[1])
local b = table.concat(j, "\\0") redis.call("HSET", KEYS[2], "1", b) redis.call("HDEL", KEYS[2], "1") return b`,
  "field per job": `local j = redis.call("RPOP", KEYS[1], ARGV[1])
local a, d = {}, {} for i = 1, #j do a[#a + 1] = "1:" .. i a[#a + 1] = j[i] d[i] = "1:" .. i end
redis.call("HSET", KEYS[2], unpack(a)) redis.call("HDEL", KEYS[2], unpack(d)) return j`,
  "recovered check, whole payload": `local j = redis.call("RPOP", KEYS[1], ARGV[1]) local n = 0
for i = 1, #j do if string.find(j[i], '"edgekiq_recovered":%d+}%s*$') then n = n + 1 end end return n`,
  "recovered check, last 64 bytes": `local j = redis.call("RPOP", KEYS[1], ARGV[1]) local n = 0
for i = 1, #j do if string.find(string.sub(j[i], -64), '"edgekiq_recovered":%d+}%s*$') then n = n + 1 end end return n`,
};

const calls = Number(args().calls ?? 10);
const server = await startRedis();
const redis = await openTransport("ioredis", server.url);
try {
  console.log(`Redis µs per job inside EVAL (${calls} calls per cell; batch = jobs per call)`);
  const sizes: Array<[number, number]> = [[200, 100], [10_000, 100], [100_000, 30], [1_000_000, 10]];
  console.log(["variant".padEnd(32), ...sizes.map(([b, n]) => `${b} B x${n}`.padStart(14))].join(""));
  for (const [name, lua] of Object.entries(VARIANTS)) {
    const cells: string[] = [];
    for (const [bytes, batch] of sizes) {
      const job = JSON.stringify({ class: "NoopJob", args: [1, filler(bytes)], jid: "0123456789abcdef01234567" });
      await redis.call("DEL", "q", "h");
      for (let i = 0; i < batch * calls; i += 10) await redis.call("LPUSH", "q", ...Array(10).fill(job));
      await redis.call("CONFIG", "RESETSTAT");
      for (let i = 0; i < calls; i++) await redis.call("EVAL", lua, 2, "q", "h", batch);
      const stats = String(await redis.call("INFO", "commandstats"));
      const usec = Number(/cmdstat_eval:calls=\d+,usec=(\d+)/.exec(stats)?.[1]);
      cells.push((usec / calls / batch).toFixed(1).padStart(14));
    }
    console.log(name.padEnd(32) + cells.join(""));
  }
} finally {
  await redis.close();
  await server.stop();
}
