/**
 * The Metrics query API and deploy marks: reading what Sidekiq 8 and 7's own
 * code writes (commands recorded from their Ruby source, in
 * test/interop/fixtures/metrics.json) and what edgekiq's tracker writes,
 * with the expectations of Sidekiq's own metrics_test.rb.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Client } from "../src/client.ts";
import { ConfigError } from "../src/errors.ts";
import { markDeploy, Metrics } from "../src/features/mod.ts";
import { MetricsTracker } from "../src/features/metrics/tracker.ts";
import type { Keys } from "../src/keys.ts";
import type { Command, Transport } from "../src/transport/transport.ts";
import { matrix } from "./support/matrix.ts";

const fixture = JSON.parse(readFileSync(new URL("./interop/fixtures/metrics.json", import.meta.url), "utf8")) as {
  sidekiq8: Record<string, string[][]>;
  sidekiq7: Record<string, string[][]>;
  deploy: { at: string; label: string; commands: string[][] };
};
/**
 * A key Sidekiq names `name`, under a key layout: the name itself in Sidekiq's,
 * the same name behind the namespace's hash tag in the cluster layout
 * (`20250214-marks` -> `{edgekiq}:20250214-marks`).
 */
const under = (k: Keys, name: string) => k.prefix ? `${k.prefix}:${name}` : name;
/** Sidekiq's recorded commands, sent as recorded but with each key (the first argument) under `k`'s layout. */
const replay = (redis: Transport, k: Keys, commands: string[][]) =>
  redis.pipeline(commands.map(([name, key, ...args]) => [name, under(k, key), ...args] as Command));

/** Sidekiq's metrics_test.rb `fixed_time`. */
const FIXED = new Date("2022-07-22T22:03:00Z");
const ago = (seconds: number) => new Date(FIXED.getTime() - seconds * 1000);

/** Sidekiq's `create_known_metrics`, through edgekiq's tracker. */
async function createKnownMetrics(client: Client): Promise<void> {
  const tracker = new MetricsTracker();
  const flush = (at: Date) => tracker.flush(client.transport, client.keys, { now: at });
  tracker.record("App::SomeJob", 1, false);
  tracker.record("App::FooJob", 1, false);
  tracker.record("App::SomeJob", 1, true);
  await flush(FIXED);
  for (const ms of [1, 20, 1]) tracker.record("App::FooJob", ms, false);
  tracker.record("App::SomeJob", 1, false);
  await flush(ago(60));
  for (const ms of [20, 1]) tracker.record("App::FooJob", ms, false);
  tracker.record("App::SomeJob", 1, false);
  await flush(ago(6000));
}

const at = (result: { buckets: string[] }, series: number[], bucket: string) => series[result.buckets.indexOf(bucket)];

for (const target of matrix(["memory", "ioredis", "bun", "upstash", "cluster"])) {
  describe(`Metrics on ${target.name}`, () => {
    let client: Client;
    beforeEach(async () => {
      client ??= new Client({ transport: await target.open() });
      await target.flush();
    });

    it("reads Sidekiq 8's own writes: top jobs, most time first, with totals and series", async () => {
      await replay(client.transport, client.keys, fixture.sidekiq8["2022-07-22T22:03:00Z"]);
      const result = await new Metrics(client).topJobs({ now: FIXED });
      assert.equal(result.granularity, "minutely");
      assert.deepEqual([result.startsAt, result.endsAt], [ago(3600), FIXED]);
      assert.equal(result.buckets.length, 60);
      assert.deepEqual([result.buckets[0], result.buckets[59]], ["2022-07-22T21:04:00Z", "2022-07-22T22:03:00Z"]);
      assert.deepEqual(result.jobs.map((j) => j.name), ["App::SomeJob", "App::FooJob"]);
      const [some, foo] = result.jobs;
      assert.deepEqual(some.totals, { p: 2, f: 1, ms: 400000, x: 0 });
      assert.equal(some.success, 1);
      assert.equal(some.avgMs, 400000);
      assert.deepEqual(foo.totals, { p: 3, f: 0, ms: 301, x: 0 });
      assert.equal(foo.series.p[59], 3);
      assert.equal(foo.series.p.slice(0, 59).reduce((a, b) => a + b), 0);

      const filtered = await new Metrics(client).topJobs({ now: FIXED, filter: "SOME" });
      assert.deepEqual(filtered.jobs.map((j) => j.name), ["App::SomeJob"]);
    });

    it("reads one class with its histogram, as Sidekiq's for_job", async () => {
      await replay(client.transport, client.keys, fixture.sidekiq8["2022-07-22T22:03:00Z"]);
      const result = await new Metrics(client).forJob("App::FooJob", { now: new Date("2022-07-22T22:03:40Z") });
      assert.deepEqual(result.job.totals, { p: 3, f: 0, ms: 301, x: 0 });
      const expected = new Array(26).fill(0);
      expected[0] = expected[1] = expected[7] = 1; // 1 ms, 20 ms, 280 ms
      assert.deepEqual(result.histogram!.at(-1), expected);
      assert.deepEqual(result.histogramTotals, expected);
      const missing = await new Metrics(client).forJob("DoesntExist", { now: FIXED });
      assert.deepEqual(missing.job.totals, { p: 0, f: 0, ms: 0, x: 0 });
      assert.equal(missing.job.avgMs, 0);
    });

    it("matches Sidekiq's metrics_test.rb over edgekiq's own writes, marks included", async () => {
      await createKnownMetrics(client);
      assert.equal(await markDeploy(client, "cafed00d - some git summary line", { at: ago(300) }), true);
      const metrics = new Metrics(client);

      const top = await metrics.topJobs({ now: FIXED });
      assert.deepEqual(top.jobs.map((j) => j.name).sort(), ["App::FooJob", "App::SomeJob"]);
      const some = top.jobs.find((j) => j.name === "App::SomeJob")!;
      assert.equal(at(top, some.series.p, "2022-07-22T22:03:00Z"), 2);
      assert.equal(some.totals.p, 3);
      assert.equal(some.avgMs, 1);
      assert.deepEqual(top.marks.map((m) => [m.label, m.bucket]), [[
        "cafed00d - some git summary line",
        "2022-07-22T21:58:00Z",
      ]]);

      const day = await metrics.topJobs({ now: FIXED, period: "24h" });
      assert.equal(day.granularity, "hourly");
      assert.equal(day.buckets.length, 144);
      const daySome = day.jobs.find((j) => j.name === "App::SomeJob")!;
      assert.equal(at(day, daySome.series.p, "2022-07-22T22:00:00Z"), 3);
      assert.equal(at(day, daySome.series.p, "2022-07-22T20:20:00Z"), 1);
      assert.equal(daySome.series.p.reduce((a, b) => a + b), 4);
      assert.deepEqual(day.marks.map((m) => m.bucket), ["2022-07-22T21:50:00Z"]);

      const foo = await metrics.forJob("App::FooJob", { now: FIXED });
      assert.equal(at(foo, foo.job.series.p, "2022-07-22T22:03:00Z"), 1);
      assert.equal(foo.job.totals.p, 4);
      const minute = foo.histogram![foo.buckets.indexOf("2022-07-22T22:02:00Z")];
      assert.deepEqual(minute.slice(0, 2), [2, 1]);
      assert.equal(foo.marks.length, 1);

      const fooDay = await metrics.forJob("App::FooJob", { now: FIXED, period: "24h" });
      assert.equal(at(fooDay, fooDay.job.series.p, "2022-07-22T22:00:00Z"), 4);
      assert.equal(at(fooDay, fooDay.job.series.p, "2022-07-22T20:20:00Z"), 2);
      assert.equal(fooDay.histogram, null, "no histograms for 10-minute buckets");
    });

    it("reads Sidekiq 7's minute-only format when told to", async () => {
      await replay(client.transport, client.keys, fixture.sidekiq7["2025-02-14T08:05:00Z"]);
      const now = new Date("2025-02-14T08:05:30Z");
      const v7 = new Metrics(client, { format: "sidekiq7" });
      const result = await v7.forJob("App::FooJob", { now });
      assert.deepEqual(result.job.totals, { p: 3, f: 0, ms: 301, x: 0 });
      assert.deepEqual(result.histogram!.at(-1)!.slice(0, 8), [1, 1, 0, 0, 0, 0, 0, 1]);
      assert.deepEqual((await v7.topJobs({ now })).jobs.map((j) => j.name), ["App::SomeJob", "App::FooJob"]);
      assert.deepEqual((await new Metrics(client).topJobs({ now })).jobs, [], "Sidekiq 8's keys are elsewhere");
      await assert.rejects(
        v7.topJobs({ now, period: "24h" }),
        /Cannot query metrics as 'period' must be at most 8h when reading Sidekiq 7's format/,
      );
    });

    it("costs one round trip per query, whatever the period", async () => {
      const metrics = new Metrics(client);
      await metrics.forJob("HardJob", { period: "8h" }); // loads the script
      for (
        const query of [() => metrics.topJobs({ period: "72h" }), () => metrics.forJob("HardJob", { period: "8h" })]
      ) {
        const before = { ...client.transport.counters };
        await query();
        assert.equal(client.transport.counters.roundTrips - before.roundTrips, 1);
        assert.equal(client.transport.counters.commands - before.commands, 1);
      }
    });

    it("refuses bad input with errors that name it", async () => {
      const metrics = new Metrics(client);
      const cases: [() => Promise<unknown>, RegExp][] = [
        [
          () => metrics.topJobs({ period: "3h" as "1h" }),
          /^Cannot query metrics as 'period' must be one of 1h, 2h, 4h, 8h, 24h, 48h, 72h: current value is "3h"$/,
        ],
        [() => metrics.topJobs({ filter: 5 as unknown as string }), /'filter' must be a string/],
        [() => metrics.forJob(""), /'name' must be a job class name/],
        [() => metrics.forJob("x".repeat(1001)), /'name' must be a job class name/],
        [() => metrics.forJob("HardJob", { now: new Date(NaN) }), /'now' must be a valid Date/],
        [() => markDeploy(client, "  "), /^Cannot mark deploy as 'label' must be a non-blank string/],
        [() => markDeploy(client, "x", { at: new Date("soon") }), /'at' must be a valid Date/],
      ];
      for (const [call, message] of cases) {
        await assert.rejects(
          async () => await call(),
          (e: Error) => e instanceof ConfigError && message.test(e.message),
        );
      }
      assert.throws(() => new Metrics(client, { format: "sidekiq6" as "sidekiq7" }), /'format' must be/);
    });
  });

  describe(`markDeploy on ${target.name}`, () => {
    let client: Client;
    beforeEach(async () => {
      client ??= new Client({ transport: await target.open() });
      await target.flush();
    });

    /** The deploy keys at Sidekiq's names, under the client's key layout. */
    const state = async (redis: Transport, k: Keys) => ({
      marks: await redis.call("HGETALL", under(k, "20250214-marks")),
      // 90 days and 60 seconds, give or take the second the test may cross.
      marksTtl: Math.round(((await redis.call("TTL", under(k, "20250214-marks"))) as number) / 10),
      lock: await redis.call("GET", under(k, `deploylock-${fixture.deploy.label}`)),
      lockTtl: Math.round(((await redis.call("TTL", under(k, `deploylock-${fixture.deploy.label}`))) as number) / 10),
    });

    it("writes what Sidekiq's Deploy#mark! writes", async () => {
      await replay(client.transport, client.keys, fixture.deploy.commands);
      const ruby = await state(client.transport, client.keys);
      await target.flush();
      assert.equal(await markDeploy(client, fixture.deploy.label, { at: new Date(fixture.deploy.at) }), true);
      assert.deepEqual(await state(client.transport, client.keys), ruby);
      assert.deepEqual(ruby.marks, ["2025-02-14T08:05:00Z", "cafed00d fix the mailer"]);
    });

    it("leaves one mark per minute and locks a label for a minute (Sidekiq's deploy_test.rb)", async () => {
      const t = new Date("2026-05-29T10:15:30Z");
      const plus = (s: number) => new Date(t.getTime() + s * 1000);
      assert.equal(await markDeploy(client, "first", { at: t }), true);
      assert.equal(await markDeploy(client, "first", { at: plus(20) }), false);
      assert.equal(await markDeploy(client, "second", { at: plus(25) }), true);
      const marks = under(client.keys, "20260529-marks");
      assert.deepEqual(await client.transport.call("HGETALL", marks), ["2026-05-29T10:15:00Z", "first"]);
      assert.equal(await markDeploy(client, "third", { at: plus(60) }), true);
      assert.equal(await client.transport.call("HGET", marks, "2026-05-29T10:16:00Z"), "third");
    });

    it("shows marks from every day a period spans, under a prefix too", async () => {
      const prefixed = new Client({ transport: client.transport, prefix: "app" });
      await markDeploy(prefixed, "yesterday deploy", { at: ago(26 * 3600) });
      await markDeploy(prefixed, "today deploy", { at: FIXED });
      const days = ["20220721-marks", "20220722-marks"].map((name) => under(prefixed.keys, name));
      assert.equal(await client.transport.call("EXISTS", ...days), 2);
      const { marks } = await new Metrics(prefixed).topJobs({ now: FIXED, period: "72h" });
      assert.deepEqual(marks.map((m) => m.label), ["yesterday deploy", "today deploy"]);
      assert.deepEqual((await new Metrics(client).topJobs({ now: FIXED, period: "72h" })).marks, []);
    });
  });
}
