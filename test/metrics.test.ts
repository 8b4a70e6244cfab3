/**
 * Execution metrics in Sidekiq's format: bucket names, the histogram, and
 * the tracker's flush, checked against Redis commands recorded from
 * Sidekiq 8.1.7's and 7.3.9's own Ruby code (test/interop/fixtures/metrics.json),
 * on the memory transport, a real redis-server, @upstash/redis through the
 * REST gateway and a Redis Cluster (the same names under the cluster layout's
 * hash tag).
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type Keys, keys } from "../src/keys.ts";
import { Discard } from "../src/control.ts";
import { TransportError } from "../src/transport/transport_error.ts";
import { defineJob } from "../mod.ts";
import { Client } from "../src/client.ts";
import { drain } from "../src/server/drain.ts";
import { silentLogger } from "../src/logger.ts";
import {
  histogramWindow,
  iso8601,
  legacyHistogramWindow,
  legacyMinuteBucket,
  minuteBucket,
  tenMinuteBucket,
  utcDay,
} from "../src/features/metrics/buckets.ts";
import { HISTOGRAM_LABELS, HISTOGRAM_READ, HISTOGRAM_SIZE, histogramIndex } from "../src/features/metrics/histogram.ts";
import { MetricsTracker } from "../src/features/metrics/tracker.ts";
import { displayClass } from "../src/activejob.ts";
import { metricsMiddleware } from "../src/features/metrics/metrics_middleware.ts";
import { METRICS_FLUSH } from "../src/features/metrics/flush_script.ts";
import type { Script } from "../src/transport/script.ts";
import type { Command, RedisArg, Transport } from "../src/transport/transport.ts";
import { matrix } from "./support/matrix.ts";

type Recorded = string[][];
const fixture = JSON.parse(readFileSync(new URL("./interop/fixtures/metrics.json", import.meta.url), "utf8")) as {
  jobs: [string, number, boolean][];
  sidekiq8: Record<string, Recorded>;
  sidekiq7: Record<string, Recorded>;
};
const k = keys();

describe("metric buckets", () => {
  it("formats minute, 10-minute and histogram buckets as Sidekiq 8 and 7 do", () => {
    const t = new Date("2025-02-14T08:05:00Z");
    assert.equal(minuteBucket(t), "250214|8:05");
    assert.equal(tenMinuteBucket(t), "250214|8:0");
    assert.equal(legacyMinuteBucket(t), "20250214|8:5");
    assert.equal(histogramWindow(t), "14-8:5");
    assert.equal(legacyHistogramWindow(t), "14-08:5");
    assert.equal(utcDay(t), "20250214");
    const late = new Date("2022-07-22T22:43:59.999Z");
    assert.equal(minuteBucket(late), "220722|22:43");
    assert.equal(tenMinuteBucket(late), "220722|22:4");
    assert.equal(histogramWindow(late), "22-22:43");
    assert.equal(iso8601(late.getTime()), "2022-07-22T22:43:59Z");
    // UTC whatever the local zone: 23:59 UTC on the last day of a year.
    const edge = new Date("2024-12-31T23:59:00Z");
    assert.equal(minuteBucket(edge), "241231|23:59");
    assert.equal(legacyHistogramWindow(edge), "31-23:59");
  });

  it("puts durations in Sidekiq's 26 histogram buckets (the bound itself goes up)", () => {
    assert.equal(HISTOGRAM_LABELS.length, HISTOGRAM_SIZE);
    const cases: [number, number][] = [[0, 0], [10, 0], [19.99, 0], [20, 1], [46, 3], [48, 3], [280, 7], [300, 7]];
    cases.push([334.9, 7], [335, 8], [334_999, 24], [335_000, 25], [3e8, 25], [Infinity, 25]);
    for (const [ms, index] of cases) assert.equal(histogramIndex(ms), index, `${ms} ms`);
    assert.equal(HISTOGRAM_READ.length, 78);
    assert.deepEqual(HISTOGRAM_READ.slice(-3), ["GET", "u16", "#25"]);
  });

  it("counts ActiveJob wrappers under their wrapped class", () => {
    const wrapper = "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper";
    assert.equal(
      displayClass({ class: wrapper, wrapped: "ImportJob", args: [], queue: "q", jid: "j" }),
      "ImportJob",
    );
    assert.equal(displayClass({ class: "HardJob", args: [], queue: "q", jid: "j" }), "HardJob");
  });
});

/** A transport whose next script calls fail before or after reaching Redis. */
function faulty(
  inner: Transport,
): Transport & { failNext(mode: "before" | "after"): void; sent: [string[], RedisArg[]][] } {
  const modes: ("before" | "after")[] = [];
  const sent: [string[], RedisArg[]][] = [];
  return {
    get kind() {
      return inner.kind;
    },
    get blocking() {
      return inner.blocking;
    },
    get counters() {
      return inner.counters;
    },
    sent,
    failNext: (mode) => void modes.push(mode),
    call: (command: string, ...args: RedisArg[]) => inner.call(command, ...args),
    block: (command, options) => inner.block(command, options),
    pipeline: (commands: readonly Command[], options) => inner.pipeline(commands, options),
    async script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      sent.push([[...keys], [...args]]);
      const mode = modes.shift();
      if (mode === "before") throw new TransportError("connection", "ECONNREFUSED (test)");
      const reply = await inner.script(script, keys, args);
      if (mode === "after") throw new TransportError("connection", "socket closed before the reply (test)");
      return reply;
    },
    close: () => inner.close(),
  };
}

/** What a set of keys holds: hashes whole, histograms as their 26 counters, every TTL. */
async function snapshot(redis: Transport, names: Iterable<string>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of [...new Set(names)].sort()) {
    const type = await redis.call("TYPE", key);
    const ttl = await redis.call("TTL", key);
    let value: unknown;
    if (type === "hash") {
      const flat = (await redis.call("HGETALL", key)) as string[];
      const entries: [string, string][] = [];
      for (let i = 0; i < flat.length; i += 2) entries.push([flat[i], String(flat[i + 1])]);
      value = Object.fromEntries(entries.sort());
    } else if (type === "string") value = await redis.call("BITFIELD_RO", key, ...HISTOGRAM_READ);
    out[key] = { type, ttl, value };
  }
  return out;
}

/**
 * A key Sidekiq names `name`, under a key layout: the name itself in Sidekiq's,
 * the same name behind the namespace's hash tag in the cluster layout
 * (`j|250214|8:05` -> `{edgekiq}:j|250214|8:05`).
 */
const under = (k: Keys, name: string) => k.prefix ? `${k.prefix}:${name}` : name;

/** Sidekiq's recorded commands, sent as recorded but with each key (the first argument) under `k`'s layout. */
async function replay(redis: Transport, k: Keys, commands: Recorded): Promise<void> {
  await redis.pipeline(commands.map(([name, key, ...args]) => [name, under(k, key), ...args] as Command));
}

/**
 * Loads the flush script, so round trips count the steady state (a restarted server costs one more, EVAL after
 * NOSCRIPT). Its key is in `k`'s namespace, so on a cluster it loads on the node the flush will run on.
 */
async function warm(redis: Transport, k: Keys): Promise<void> {
  const key = k.metricsFlushed("warm");
  await redis.script(METRICS_FLUSH, [key], [60, 0]);
  await redis.call("DEL", key);
}

/** The keys recorded commands write, under `k`'s layout. */
const keysOf = (k: Keys, commands: Recorded) => commands.map((c) => under(k, c[1]));

/** Every key there is, by SCAN (on a cluster, over every primary). */
async function allKeys(redis: Transport): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, items] = (await redis.call("SCAN", cursor, "COUNT", 1000)) as [string, string[]];
    found.push(...items);
    cursor = next;
  } while (cursor !== "0");
  return found;
}

function trackFixtureJobs(tracker: MetricsTracker): void {
  for (const [name, ms, failed] of fixture.jobs) tracker.record(name, ms, failed);
}

for (const target of matrix(["memory", "ioredis", "bun", "upstash", "cluster"])) {
  // The cluster target gets the cluster key layout ({edgekiq}:queue:...), as every client on it does.
  const k = keys("", target.name === "cluster" ? "cluster" : "sidekiq");
  describe(`MetricsTracker on ${target.name}`, () => {
    let redis: Transport;
    beforeEach(async () => {
      redis ??= await target.open();
      await target.flush();
    });

    for (const at of Object.keys(fixture.sidekiq8)) {
      it(`writes what Sidekiq 8's flush writes at ${at}, in one round trip`, async () => {
        await replay(redis, k, fixture.sidekiq8[at]);
        const ruby = await snapshot(redis, keysOf(k, fixture.sidekiq8[at]));
        await target.flush();

        const tracker = new MetricsTracker();
        trackFixtureJobs(tracker);
        await warm(redis, k);
        const before = { ...redis.counters };
        const result = await tracker.flush(redis, k, { now: new Date(at) });
        assert.deepEqual(result, { sent: 1, applied: 1 });
        assert.equal(redis.counters.roundTrips - before.roundTrips, 1);
        assert.equal(redis.counters.commands - before.commands, 1);
        assert.deepEqual(await snapshot(redis, keysOf(k, fixture.sidekiq8[at])), ruby);
        // Nothing else but the tracker's own bookkeeping key.
        const all = await allKeys(redis);
        const expected = new Set([...keysOf(k, fixture.sidekiq8[at]), k.metricsFlushed(tracker.id)]);
        assert.deepEqual(all.sort(), [...expected].sort());
      });
    }

    it("writes Sidekiq 7's keys as well with sidekiq7: true", async () => {
      const at = "2025-02-14T08:05:00Z";
      const both = [...fixture.sidekiq8[at], ...fixture.sidekiq7[at]];
      await replay(redis, k, both);
      const ruby = await snapshot(redis, keysOf(k, both));
      assert.ok(
        under(k, "j|20250214|8:5") in ruby && under(k, "App::FooJob-14-08:5") in ruby,
        "the fixture names Sidekiq 7's keys",
      );
      await target.flush();

      const tracker = new MetricsTracker({ sidekiq7: true });
      trackFixtureJobs(tracker);
      await tracker.flush(redis, k, { now: new Date(at) });
      assert.deepEqual(await snapshot(redis, keysOf(k, both)), ruby);
    });

    it("adds to what is there, writes no histogram when told not to, and namespaces by prefix", async () => {
      const at = new Date("2025-02-14T08:05:00Z");
      const p = keys("app", k.keyspace);
      const tracker = new MetricsTracker({ histogram: false });
      tracker.record("HardJob", 1.4, false);
      tracker.record("HardJob", 1.4, false);
      await tracker.flush(redis, p, { now: at });
      tracker.record("HardJob", 5, true);
      await tracker.flush(redis, p, { now: at });
      const named = k.keyspace === "cluster" ? "{app}:j|250214|8:05" : "app:j|250214|8:05";
      assert.equal(p.metrics("250214|8:05"), named, "Sidekiq's name under the namespace");
      const hash = await redis.call("HGETALL", p.metrics("250214|8:05"));
      assert.deepEqual(hash, ["HardJob|p", "3", "HardJob|ms", "3", "HardJob|f", "1"]);
      // One EXISTS each: on a cluster the two namespaces are in different slots.
      for (
        const key of [p.histogram("HardJob", "14-8:5"), k.histogram("HardJob", "14-8:5"), k.metrics("250214|8:05")]
      ) {
        assert.equal(await redis.call("EXISTS", key), 0, key);
      }
    });

    it("does not write when nothing ran", async () => {
      const tracker = new MetricsTracker();
      const before = redis.counters.roundTrips;
      assert.deepEqual(await tracker.flush(redis, k), { sent: 0, applied: 0 });
      assert.equal(redis.counters.roundTrips, before);
    });

    it("saturates a histogram bucket at 65535, as OVERFLOW SAT u16 does", async () => {
      const tracker = new MetricsTracker();
      for (let i = 0; i < 70_000; i++) tracker.record("FastJob", 0.01, false);
      const at = new Date("2025-02-14T08:05:00Z");
      await tracker.flush(redis, k, { now: at });
      const counts = (await redis.call("BITFIELD_RO", k.histogram("FastJob", "14-8:5"), ...HISTOGRAM_READ)) as number[];
      assert.equal(counts[0], 65535);
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "FastJob|p"), "70000");
    });

    it("keeps a batch whose write failed and sends it with the next flush", async () => {
      const t = faulty(redis);
      const at = new Date("2025-02-14T08:05:00Z");
      const later = new Date("2025-02-14T08:06:00Z");
      const tracker = new MetricsTracker();
      tracker.record("HardJob", 10, false);
      t.failNext("before");
      await assert.rejects(tracker.flush(t, k, { now: at }), TransportError);
      assert.equal(tracker.pendingBatches, 1);
      assert.equal(await redis.call("EXISTS", k.metrics("250214|8:05")), 0);

      tracker.record("HardJob", 20, false);
      await warm(redis, k);
      const before = redis.counters.roundTrips;
      assert.deepEqual(await tracker.flush(t, k, { now: later }), { sent: 2, applied: 2 });
      assert.equal(redis.counters.roundTrips - before, 1, "both batches in one script call");
      assert.equal(tracker.pendingBatches, 0);
      // Each batch lands in the minute it was taken in.
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "HardJob|ms"), "10");
      assert.equal(await redis.call("HGET", k.metrics("250214|8:06"), "HardJob|ms"), "20");
      assert.equal(await redis.call("HGET", k.metrics("250214|8:0"), "HardJob|p"), "2");
    });

    it("counts a batch once when its first write landed but the reply was lost", async () => {
      const t = faulty(redis);
      const at = new Date("2025-02-14T08:05:00Z");
      const tracker = new MetricsTracker();
      tracker.record("HardJob", 10, false);
      tracker.record("HardJob", 10, true);
      t.failNext("after");
      await assert.rejects(tracker.flush(t, k, { now: at }));
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "HardJob|p"), "2", "the write did land");

      tracker.record("OtherJob", 1, false);
      assert.deepEqual(await tracker.flush(t, k, { now: at }), { sent: 2, applied: 1 });
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "HardJob|p"), "2");
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "HardJob|f"), "1");
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "OtherJob|p"), "1");
      const gram = (await redis.call("BITFIELD_RO", k.histogram("HardJob", "14-8:5"), ...HISTOGRAM_READ)) as number[];
      assert.equal(gram[0], 1);

      // A late duplicate of either request changes nothing.
      assert.equal(t.sent.length, 2);
      for (const [keys, args] of t.sent) assert.equal(await redis.script(METRICS_FLUSH, keys, args), 0);
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "HardJob|p"), "2");
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "OtherJob|p"), "1");
      assert.ok((await redis.call("TTL", k.metricsFlushed(tracker.id))) as number > 8 * 3600 - 60);
    });

    it("applies a batch at most once when its write fails half-way (BITFIELD refused after the HINCRBYs)", async () => {
      const at = new Date("2025-02-14T08:05:00Z");
      const tracker = new MetricsTracker();
      // A histogram key of the wrong type: the hashes are written, then BITFIELD fails.
      await redis.call("RPUSH", k.histogram("HardJob", "14-8:5"), "not a histogram");
      tracker.record("HardJob", 10, false);
      await assert.rejects(tracker.flush(redis, k, { now: at }), /WRONGTYPE/);
      assert.equal(tracker.pendingBatches, 1, "kept: the tracker cannot tell how far a failed flush got");
      // Each heartbeat sends the kept batch again: it must not count again.
      for (let beat = 2; beat <= 4; beat++) {
        await tracker.flush(redis, k, { now: at }).catch(() => {});
        assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "HardJob|p"), "1", `after ${beat} flushes`);
      }
      await redis.call("DEL", k.histogram("HardJob", "14-8:5"));
      tracker.record("HardJob", 20, false);
      assert.equal((await tracker.flush(redis, k, { now: at })).applied, 1);
      assert.equal(tracker.pendingBatches, 0);
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "HardJob|p"), "2");
      assert.equal(await redis.call("HGET", k.metrics("250214|8:05"), "HardJob|ms"), "30");
    });

    it("drops the oldest unsent batch past maxPending, and says so", async () => {
      const t = faulty(redis);
      const tracker = new MetricsTracker({ maxPending: 2 });
      for (let minute = 1; minute <= 3; minute++) {
        tracker.record("HardJob", minute, false);
        t.failNext("before");
        await assert.rejects(tracker.flush(t, k, { now: new Date(`2025-02-14T08:0${minute}:00Z`) }));
      }
      assert.equal(tracker.pendingBatches, 2);
      assert.equal(tracker.droppedBatches, 1);
      await tracker.flush(t, k, { now: new Date("2025-02-14T08:09:00Z") });
      assert.equal(await redis.call("HGET", k.metrics("250214|8:0"), "HardJob|ms"), "5", "minutes 2 and 3 only");
    });

    it("runs flushes one at a time", async () => {
      let inFlight = 0, most = 0, calls = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => release = resolve);
      let reached!: () => void;
      const first = new Promise<void>((resolve) => reached = resolve);
      const slow: Transport = Object.create(redis, {
        script: {
          value: async (...a: Parameters<Transport["script"]>) => {
            most = Math.max(most, ++inFlight);
            if (++calls === 1) {
              reached();
              await gate;
            }
            try {
              return await redis.script(...a);
            } finally {
              inFlight--;
            }
          },
        },
      });
      const tracker = new MetricsTracker();
      const at = new Date("2025-02-14T08:05:00Z");
      tracker.record("A", 1, false);
      const one = tracker.flush(slow, k, { now: at });
      await first;
      tracker.record("B", 1, false);
      const two = tracker.flush(slow, k, { now: at });
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(calls, 1, "the second flush waits for the first");
      release();
      assert.deepEqual(await Promise.all([one, two]), [{ sent: 1, applied: 1 }, { sent: 1, applied: 1 }]);
      assert.equal(most, 1);
      assert.deepEqual(await redis.call("HMGET", k.metrics("250214|8:05"), "A|p", "B|p"), ["1", "1"]);
    });
  });
}

describe("metricsMiddleware", () => {
  it("records runs, failures, Discard and ActiveJob wrappers through a real drain", async () => {
    const { memoryTransport } = await import("../src/transport/adapters/memory/memory_transport.ts");
    const transport = memoryTransport();
    const client = new Client({ transport });
    const Ok = defineJob({ name: "OkJob", perform() {} });
    const Bad = defineJob({ name: "BadJob", retry: false, perform: () => Promise.reject(new Error("boom")) });
    const Skip = defineJob({
      name: "SkipJob",
      perform() {
        throw new Discard("not needed");
      },
    });
    const Import = defineJob({ name: "ImportJob", perform() {} });
    await client.push(Ok, []);
    await client.push(Ok, []);
    await client.push(Bad, []);
    await client.push(Skip, []);
    await client.push("ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", [{
      job_class: "ImportJob",
      arguments: [],
    }], {
      extra: { wrapped: "ImportJob" },
    });
    const tracker = new MetricsTracker();
    const result = await drain(
      {
        transport,
        jobs: [Ok, Bad, Skip, Import],
        budgetMs: 5000,
        logger: silentLogger,
        jobLogging: false,
        middleware: [metricsMiddleware(tracker)],
        activeJob: true,
      } as Parameters<typeof drain>[0],
    );
    assert.equal(result.processed, 5);
    const at = new Date("2025-02-14T08:05:00Z");
    await tracker.flush(transport, k, { now: at });
    const hash = await transport.call("HGETALL", "j|250214|8:05");
    const fields = new Map<string, string>();
    for (let i = 0; i < (hash as string[]).length; i += 2) fields.set((hash as string[])[i], (hash as string[])[i + 1]);
    assert.equal(fields.get("OkJob|p"), "2");
    assert.equal(fields.get("BadJob|p"), "1");
    assert.equal(fields.get("BadJob|f"), "1");
    assert.equal(fields.has("BadJob|ms"), false, "no time for failures");
    assert.equal(fields.get("SkipJob|p"), "1");
    assert.equal(fields.has("SkipJob|f"), false, "a Discard is not a failure");
    assert.equal(fields.get("ImportJob|p"), "1");
    assert.equal([...fields.keys()].some((f) => f.startsWith("ActiveJob")), false);
  });
});
