/**
 * The dashboard's small parts on their own: formatting, parameter bounds,
 * bounded backtrace decoding, the same-origin rule, and the read-only batch
 * script (on every transport: it is Lua on Redis and a twin in memory).
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Transport } from "../mod.ts";
import { compressBacktrace } from "../src/server/backtrace_codec.ts";
import { MAX_BACKTRACE_BYTES, readBacktrace } from "../src/web/dashboard/backtrace_view.ts";
import { checkSameOrigin } from "../src/web/dashboard/csrf.ts";
import { redisFacts } from "../src/web/dashboard/redis_info.ts";
import {
  formatArgs,
  formatCount,
  formatDuration,
  formatKib,
  formatLatency,
  relativeTime,
} from "../src/web/dashboard/format.ts";
import { entryKey, parseEntryKey } from "../src/web/dashboard/job_sets.ts";
import { filterText, historyDays, liveInterval, paging, ParamError } from "../src/web/dashboard/params.ts";
import { keys } from "../src/keys.ts";
import { READ_BATCH, readBatch } from "../src/scripts/read_batch.ts";
import { matrix } from "./support/matrix.ts";

describe("dashboard: formatting", () => {
  it("counts, durations, latencies, sizes, relative times, arguments", () => {
    assert.equal(formatCount(1234567), "1,234,567");
    assert.equal(formatCount(NaN), "0");
    assert.deepEqual([0, 59, 192, 3600, 90061].map(formatDuration), ["0s", "59s", "3m 12s", "1h 0m", "1d 1h"]);
    assert.deepEqual([0, 0.4213, 12.34, 1234.5].map(formatLatency), ["0", "0.42", "12.3", "1,235"]);
    assert.deepEqual([0, 512, 100_000, 3_000_000].map(formatKib), ["0", "512 KB", "97.7 MB", "2.9 GB"]);
    const now = 1_700_000_000_000;
    assert.equal(relativeTime(new Date(now - 2_000), now), "just now");
    assert.equal(relativeTime(new Date(now - 180_000), now), "3 minutes ago");
    assert.equal(relativeTime(new Date(now + 3_600_000), now), "in 1 hour");
    assert.equal(formatArgs([1, "two", { a: [3] }]), '1, "two", {"a":[3]}');
    assert.equal(formatArgs(["x".repeat(500)], 20).length, 20);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.doesNotThrow(() => formatArgs([cyclic, 10n]));
  });
});

describe("dashboard: parameters", () => {
  it("bounds days, pages, counts, the live interval and the filter", () => {
    assert.equal(historyDays(undefined), 30);
    assert.equal(historyDays("180"), 180);
    assert.throws(() => historyDays("181"), ParamError);
    assert.deepEqual(paging("3", "40"), { page: 3, count: 40, start: 80 });
    assert.deepEqual(paging(undefined, "5000"), { page: 1, count: 100, start: 0 });
    assert.throws(() => paging("0", undefined), /'page' must be a whole number/);
    assert.deepEqual(["0", "1", "2.4", "7", "21", "Infinity", ""].map(liveInterval), [2, 2, 2, 7, 20, 5, 5]);
    assert.equal(filterText("  x  "), "x");
    assert.throws(() => filterText("y".repeat(201)), ParamError);
  });

  it("entry keys round-trip scores exactly", () => {
    for (const score of [1700000000.1234567, 1700000000, 1.7e12]) {
      const parsed = parseEntryKey(entryKey(score, "abc-def"));
      assert.deepEqual(parsed, { score, jid: "abc-def" });
    }
    for (const bad of ["", "x-abc", "1700000000", "-1-abc", `1-${"a".repeat(300)}`, 42]) {
      assert.equal(parseEntryKey(bad), null);
    }
  });
});

describe("dashboard: backtraces", () => {
  it("decodes Sidekiq 7's deflated base64 and Sidekiq 6's arrays; bounded against bombs", async () => {
    assert.deepEqual(await readBacktrace(await compressBacktrace(["a.rb:1", "b.rb:2"])), {
      lines: ["a.rb:1", "b.rb:2"],
    });
    assert.deepEqual(await readBacktrace(["x", 1]), { lines: ["x", "1"] });
    assert.equal(await readBacktrace(undefined), null);
    assert.deepEqual(await readBacktrace("not base64 !!"), { error: "The backtrace could not be decoded." });
    const bomb = await compressBacktrace(["x".repeat(MAX_BACKTRACE_BYTES * 4)]);
    assert.ok(bomb.length < 20_000, "a small string");
    assert.match(JSON.stringify(await readBacktrace(bomb)), /larger than 256 KB/);
    const many = await readBacktrace(Array.from({ length: 1000 }, (_, i) => `line ${i}`));
    assert.ok(many && "lines" in many && many.lines.length === 201 && many.lines[200] === "… 800 more lines");
  });
});

describe("dashboard: same-origin rule", () => {
  const req = (method: string, headers: Record<string, string>, url = "https://jobs.example/x") => ({
    method,
    url,
    header: (n: string) => headers[n.toLowerCase()],
  });
  it("lets safe methods through and checks unsafe ones", () => {
    assert.equal(checkSameOrigin(req("GET", { "sec-fetch-site": "cross-site" })), true);
    assert.equal(checkSameOrigin(req("POST", { "sec-fetch-site": "same-origin" })), true);
    assert.equal(
      checkSameOrigin(req("DELETE", { "sec-fetch-site": "cross-site", origin: "https://jobs.example" })),
      false,
    );
    assert.equal(checkSameOrigin(req("PUT", { origin: "https://JOBS.example" })), true);
    assert.equal(checkSameOrigin(req("PATCH", { origin: "https://jobs.example:8443" })), false);
    assert.equal(checkSameOrigin(req("POST", {})), false);
  });
});

for (const target of matrix(["memory", "ioredis", "bun", "upstash", "cluster"])) {
  // One script's keys must share a slot on a Redis Cluster: there they take the cluster layout's hash tag.
  const { prefix } = keys("", target.name === "cluster" ? "cluster" : "sidekiq");
  const [a, h, l, z, missing, nope] = ["a", "h", "l", "z", "missing", "nope"].map((name) =>
    prefix ? `${prefix}:${name}` : name
  );
  describe(`dashboard: readBatch on ${target.name}`, () => {
    let transport: Transport;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
    });
    it("answers as a pipeline would, in one command, and refuses writes", async () => {
      await transport.pipeline([["SET", a, "1"], ["HSET", h, "f", "v", "g", "w"], ["RPUSH", l, "x", "y"], [
        "ZADD",
        z,
        1.5,
        "m",
      ]]);
      const commands = [
        ["GET", a],
        ["GET", missing],
        ["MGET", a, missing, a],
        ["HMGET", h, "f", "nope"],
        ["HGETALL", h],
        ["LINDEX", l, -1],
        ["LLEN", l],
        ["ZRANGE", z, 1.5, 1.5, "BYSCORE", "WITHSCORES"],
        ["HGET", nope, "x"],
      ] as const;
      const before = transport.counters.commands;
      const batched = await readBatch(transport, commands);
      assert.ok(transport.counters.commands - before <= 2, "one command (two the first time: NOSCRIPT, then EVAL)");
      const piped = await transport.pipeline(commands);
      assert.deepEqual(
        batched.map((r, i) => (i === 4 ? [...(r as string[])].sort() : r)),
        piped.map((r, i) => (i === 4 ? [...(r as string[])].sort() : r)),
      );
      assert.equal(batched[1], null);
      await assert.rejects(readBatch(transport, [["SET", a, "2"]]), /only read commands/);
      await assert.rejects(transport.script(READ_BATCH, [a], ["DEL", 1, 0]), /read commands only/);
      assert.equal(await transport.call("GET", a), "1");
    });
  });
}

describe("dashboard: Redis facts on a cluster", () => {
  it("sums the primaries that answered, lists the one that did not, and says 'mixed' where policies differ", async () => {
    const info = (memory: number, clients: number, policy: string, uptime: number) =>
      `# Server\r\nredis_version:7.2.4\r\nuptime_in_seconds:${uptime}\r\n# Clients\r\nconnected_clients:${clients}\r\n` +
      `# Memory\r\nused_memory:${memory}\r\nused_memory_human:${memory}B\r\nused_memory_peak:${memory}\r\n` +
      `maxmemory_policy:${policy}\r\n# Stats\r\ninstantaneous_ops_per_sec:7\r\n`;
    const cluster = {
      eachPrimary: () =>
        Promise.resolve([
          { node: "10.0.0.1:6379", reply: info(1024 * 1024, 3, "noeviction", 50) },
          { node: "10.0.0.2:6379", error: new Error("connect ECONNREFUSED") },
          { node: "10.0.0.3:6379", reply: info(3 * 1024 * 1024, 4, "allkeys-lru", 40) },
        ]),
      call: () => Promise.reject(new Error("one node's INFO must not be asked")),
    } as unknown as Transport;
    const facts = (await redisFacts(cluster))!;
    assert.equal(facts.memory, "4.0 MB");
    assert.equal(facts.clients, 7);
    assert.equal(facts.uptimeSeconds, 40, "the shortest uptime");
    assert.equal(facts.maxmemoryPolicy, "mixed");
    assert.equal(facts.primaries![0].memory, "1.0 MB", "a row is spelled as the total is");
    assert.deepEqual(facts.primaries!.map((p) => [p.node, p.up, p.opsPerSec]), [
      ["10.0.0.1:6379", true, 7],
      ["10.0.0.2:6379", false, undefined],
      ["10.0.0.3:6379", true, 7],
    ]);
  });
});
