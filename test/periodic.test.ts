/**
 * Periodic jobs, driven directly (no poller): registration, claims, missed
 * ticks, DST, pausing, two apps, and five processes with skewed clocks, on
 * the memory transport, a real redis-server, the Upstash REST fixture and a
 * Redis Cluster (its key layout: the same names under one hash tag).
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { createClient } from "../mod.ts";
import { ConfigError } from "../src/errors.ts";
import { defineJob } from "../mod.ts";
import { type Keys, keys } from "../src/keys.ts";
import { PeriodicSet } from "../src/features/mod.ts";
import { enqueueDuePeriodic, type PeriodicSchedule, registerPeriodic } from "../src/features/periodic/mod.ts";
import { memoryTransport } from "../src/transport/adapters/memory/memory_transport.ts";
import type { Transport } from "../src/transport/transport.ts";
import { matrix } from "./support/matrix.ts";

const MIN = 60_000;
const T0 = Date.UTC(2024, 0, 1, 0, 0, 0);
const Report = defineJob({ name: "Report", queue: "reports", retry: 3, args: v.tuple([v.string()]), perform() {} });

interface Pushed {
  class: string;
  queue: string;
  jid: string;
  args: unknown[];
  periodic: { name: string; at: number; manual?: true };
}

/** The jobs waiting in a queue, in push order, read through the target's key layout. */
async function queued(t: Transport, k: Keys, queue = "default"): Promise<Pushed[]> {
  return ((await t.call("LRANGE", k.queue(queue), 0, -1)) as string[]).map((raw) => JSON.parse(raw)).reverse();
}

/** Ticks (epoch s) of one schedule found in a queue, in push order. */
async function ticksOf(t: Transport, k: Keys, name: string, queue = "default"): Promise<number[]> {
  return (await queued(t, k, queue)).filter((j) => j.periodic.name === name).map((j) => j.periodic.at);
}

const iso = (ticks: number[]) => ticks.map((s) => new Date(s * 1000).toISOString());

for (const target of matrix(["memory", "ioredis", "bun", "upstash", "cluster"])) {
  // The cluster target gets the cluster key layout ({edgekiq}:queue:...), as every client on it does.
  const k = keys("", target.name === "cluster" ? "cluster" : "sidekiq");
  describe(`periodic on ${target.name}`, () => {
    let t: Transport;
    beforeEach(async () => {
      t ??= await target.open();
      await target.flush();
    });
    const client = () => createClient({ transport: t });

    it("claims a due tick and pushes Sidekiq's wire format in one script; idle costs one command", async () => {
      const c = client();
      const periodic: PeriodicSchedule[] = [{ cron: "*/5 * * * *", job: Report, args: ["daily"] }];
      const reg = await registerPeriodic(c, periodic, { now: T0 + 1000 });
      assert.equal(reg.status, "registered");
      assert.match(reg.names[0], /^Report \*\/5 \* \* \* \* [0-9a-f]{14}$/, "job, timing and an args digest");
      // At T0+1 s the 00:00 tick is within grace: it is due at once.
      const first = await enqueueDuePeriodic({ client: c, now: T0 + 1000, schedules: periodic });
      assert.equal(first.enqueued, 1);
      const idle = t.counters.commands;
      const none = await enqueueDuePeriodic({ client: c, now: T0 + 2 * MIN, schedules: periodic });
      assert.equal(none.enqueued, 0);
      assert.equal(t.counters.commands - idle, 1, "nothing due: one command");
      const before = t.counters.commands;
      const second = await enqueueDuePeriodic({ client: c, now: T0 + 5 * MIN + 300, schedules: periodic });
      assert.equal(second.enqueued, 1);
      assert.equal(t.counters.commands - before, 2, "a due tick: one read, one claim");
      assert.equal(second.commands, 2);

      assert.deepEqual(await t.call("SMEMBERS", k.queues), ["reports"]);
      const raw = ((await t.call("LRANGE", k.queue("reports"), 0, -1)) as string[]).reverse();
      assert.equal(raw.length, 2);
      const job = JSON.parse(raw[0]);
      assert.equal(job.class, "Report");
      assert.equal(job.queue, "reports");
      assert.deepEqual(job.args, ["daily"]);
      assert.equal(job.retry, 3);
      assert.match(job.jid, /^[0-9a-f]{24}$/);
      assert.equal(job.created_at, (T0 + 1000) / 1000);
      assert.match(
        raw[0],
        /"created_at":1704067201\.0,"enqueued_at":1704067201\.0/,
        "float seconds, as Ruby reads them",
      );
      assert.deepEqual(job.periodic, { name: reg.names[0], at: T0 / 1000 });
      assert.equal(JSON.parse(raw[1]).periodic.at, (T0 + 5 * MIN) / 1000);
      assert.equal(first.jobs[0].jid, job.jid);
    });

    it("claims every due schedule a page at a time, and any process can claim schedules it never declared", async () => {
      const periodic: PeriodicSchedule[] = [1, 2, 3, 4, 5].map((n) => ({ every: 60, job: `Job${n}` }));
      await registerPeriodic(client(), periodic, { now: T0 });
      const stranger = client(); // declares nothing: learns each spec from its first claim
      const result = await enqueueDuePeriodic({ client: stranger, now: T0 + 1000, batch: 2 });
      assert.equal(result.enqueued, 5);
      assert.deepEqual((await queued(t, k)).map((j) => j.class).sort(), ["Job1", "Job2", "Job3", "Job4", "Job5"]);
      assert.equal(result.commands, 3 * 3, "three pages: a read, a round that learns the specs, a claim");
      const next = await enqueueDuePeriodic({ client: stranger, now: T0 + MIN + 1000, batch: 10 });
      assert.equal(next.enqueued, 5);
      assert.equal(next.commands, 2, "specs known now: one read, one claim");
    });

    it("registration is idempotent and cached: 0 commands while fresh, 1 to refresh", async () => {
      const c = client();
      const periodic: PeriodicSchedule[] = [{ every: 60, job: "Ping" }];
      assert.equal((await registerPeriodic(c, periodic, { now: T0 })).status, "registered");
      const sent = t.counters.commands;
      assert.equal((await registerPeriodic(c, periodic, { now: T0 + MIN })).status, "cached");
      assert.equal(t.counters.commands, sent, "nothing sent while the lease is fresh");
      const refreshed = await registerPeriodic(c, periodic, { now: T0 + 11 * MIN });
      assert.equal(refreshed.status, "unchanged");
      assert.equal(t.counters.commands - sent, 1);
      // Another process registering the same set changes nothing either.
      assert.equal((await registerPeriodic(client(), periodic, { now: T0 + 12 * MIN })).status, "unchanged");
      assert.equal(await t.call("ZSCORE", k.periodicDue, "Ping every 60s"), String(T0 / 1000));
    });

    it("never enqueues a tick twice: five processes with clocks skewed by up to ±2 s over three simulated hours", async () => {
      const periodic: PeriodicSchedule[] = [
        { every: 7, job: "Fast" },
        { cron: "*/5 * * * *", job: "Five" },
        { cron: "0 * * * *", tz: "Europe/Berlin", job: "Hourly" },
        { cron: "*/20 * * * * *", job: "Seconds", args: [1] },
      ];
      const skews = [-2000, -1100, 0, 900, 2000];
      const processes = skews.map((skew) => ({ skew, client: createClient({ transport: t }) }));
      const start = T0 + 30_000;
      const end = start + 3 * 60 * MIN;
      let now = start;
      let step = 0;
      let lastRound = now;
      const random = seeded(42);
      while (now < end) {
        // All five at once, in a shuffled order: their claims race in Redis.
        const order = [...processes].sort(() => random() - 0.5);
        await Promise.all(order.map(async (p) => {
          await registerPeriodic(p.client, periodic, { now: now + p.skew });
          await enqueueDuePeriodic({ client: p.client, now: now + p.skew, schedules: periodic });
        }));
        lastRound = now;
        now += 2000 + Math.floor(random() * (target.name === "upstash" ? 40_000 : 15_000));
        step++;
      }
      const jobs = await queued(t, k);
      const byName = new Map<string, number[]>();
      for (const job of jobs) {
        byName.set(job.periodic.name, [...(byName.get(job.periodic.name) ?? []), job.periodic.at]);
      }
      // Every process's clock has passed this.
      const settled = (lastRound - 2000) / 1000;
      const expect = (prefix: string, period: number) => {
        const name = [...byName.keys()].find((n) => n.startsWith(prefix))!;
        const got = byName.get(name) ?? [];
        assert.equal(new Set(got).size, got.length, `${name}: no tick twice`);
        const sorted = [...got].sort((a, b) => a - b);
        for (let i = 1; i < sorted.length; i++) assert.equal(sorted[i] - sorted[i - 1], period, `${name}: no gap`);
        assert.ok(
          sorted[0] <= (start + 2000) / 1000 && sorted[0] > (start - 2000) / 1000 - period,
          `${name}: from the start`,
        );
        assert.ok(sorted.at(-1)! > settled - period, `${name}: up to the end`);
      };
      expect("Fast", 7);
      expect("Five", 300);
      expect("Hourly", 3600);
      expect("Seconds", 20);
      assert.ok(step > 300, `simulated ${step} rounds`);
    });

    it("skip runs a missed schedule once, now; catchUp enqueues the latest n missed ticks", async () => {
      const c = client();
      const periodic: PeriodicSchedule[] = [
        { every: 60, job: "Skip", name: "skip" },
        { every: 60, job: "Catch", name: "catch", missed: { catchUp: 5 } },
        { every: 10, job: "Late", name: "late" },
      ];
      await registerPeriodic(c, periodic, { now: T0 });
      await enqueueDuePeriodic({ client: c, now: T0, schedules: periodic });
      // 50 s late is within grace: every tick since runs.
      await enqueueDuePeriodic({ client: c, now: T0 + 50_000, schedules: periodic });
      assert.deepEqual(await ticksOf(t, k, "late"), [0, 10, 20, 30, 40, 50].map((s) => T0 / 1000 + s));
      // An hour with every process down.
      const later = T0 + 60 * MIN + 30_000;
      await registerPeriodic(c, periodic, { now: later }); // the processes come back
      await enqueueDuePeriodic({ client: c, now: later, schedules: periodic });
      assert.deepEqual(await ticksOf(t, k, "skip"), [T0 / 1000, T0 / 1000 + 3600], "once for the outage");
      assert.deepEqual(
        await ticksOf(t, k, "catch"),
        [0, 3360, 3420, 3480, 3540, 3600].map((s) => T0 / 1000 + s),
        "the latest five",
      );
      // Then on time again.
      await enqueueDuePeriodic({ client: c, now: T0 + 61 * MIN + 1000, schedules: periodic });
      assert.deepEqual((await ticksOf(t, k, "skip")).slice(-1), [T0 / 1000 + 3660]);
      assert.deepEqual((await ticksOf(t, k, "catch")).slice(-1), [T0 / 1000 + 3660]);
    });

    it("pause, resume, enqueue now, and the PeriodicSet listing", async () => {
      const c = client();
      const periodic: PeriodicSchedule[] = [{ every: 60, job: Report, args: ["x"], name: "rep" }];
      await registerPeriodic(c, periodic, { now: T0 });
      const set = new PeriodicSet(c);
      await enqueueDuePeriodic({ client: c, now: T0 + 1000 });
      let [entry] = await set.list({ now: T0 + 2000 });
      assert.equal(entry.name, "rep");
      assert.equal(entry.job, "Report");
      assert.equal(entry.queue, "reports");
      assert.equal(entry.every, 60);
      assert.equal(entry.enabled, true);
      assert.equal(entry.next?.getTime(), T0 + MIN);
      assert.equal(entry.lastRun?.getTime(), T0);
      assert.equal(entry.lastJid, (await queued(t, k, "reports"))[0].jid);
      assert.equal(entry.owners.length, 1);

      assert.equal(await set.pause("rep"), true);
      assert.equal((await enqueueDuePeriodic({ client: c, now: T0 + 5 * MIN })).enqueued, 0, "paused: nothing");
      assert.equal((await set.get("rep"))?.enabled, false);
      // A deploy (re-registration) keeps it paused.
      await registerPeriodic(c, periodic, { now: T0 + 6 * MIN, force: true });
      assert.equal((await enqueueDuePeriodic({ client: c, now: T0 + 7 * MIN })).enqueued, 0);
      assert.equal(await set.resume("rep", { now: T0 + 7 * MIN + 5000 }), true);
      [entry] = await set.list({ now: T0 + 7 * MIN + 5000 });
      assert.equal(entry.next?.getTime(), T0 + 8 * MIN, "from the next tick, paused ticks not run");
      assert.equal((await enqueueDuePeriodic({ client: c, now: T0 + 8 * MIN })).enqueued, 1);

      const jid = await set.enqueueNow("rep", { now: T0 + 8 * MIN + 10_000 });
      const jobs = await queued(t, k, "reports");
      assert.equal(jobs.at(-1)?.jid, jid);
      assert.equal(jobs.at(-1)?.periodic.manual, true);
      assert.equal((await set.get("rep"))?.next?.getTime(), T0 + 9 * MIN, "next tick unchanged");
      assert.equal(await set.pause("nope"), false);
      assert.equal(await set.enqueueNow("nope"), null);
    });

    it("two apps with different schedule sets keep each other's; a removed schedule stops", async () => {
      const a = client();
      const b = client();
      const appA: PeriodicSchedule[] = [{ every: 60, job: "A1" }, { every: 60, job: "A2" }];
      const appB: PeriodicSchedule[] = [{ every: 60, job: "B1" }];
      await registerPeriodic(a, appA, { owner: "app-a", now: T0 });
      await registerPeriodic(b, appB, { owner: "app-b", now: T0 });
      await enqueueDuePeriodic({ client: b, now: T0 + 1000 }); // B enqueues A's ticks too: it reads their specs
      assert.deepEqual((await queued(t, k)).map((j) => j.class).sort(), ["A1", "A2", "B1"]);

      // App A deploys without A2: it stops at once; B's schedule is untouched.
      const a2 = client();
      const reg = await registerPeriodic(a2, [appA[0]], { owner: "app-a", now: T0 + 30_000 });
      assert.equal(reg.status, "registered");
      await enqueueDuePeriodic({ client: b, now: T0 + MIN + 1000 });
      assert.deepEqual((await queued(t, k)).slice(3).map((j) => j.class).sort(), ["A1", "B1"]);
      // The old process of app A refreshing later is superseded: A2 stays gone.
      assert.equal((await registerPeriodic(a, appA, { owner: "app-a", now: T0 + 11 * MIN })).status, "superseded");
      assert.deepEqual(
        (await new PeriodicSet(a).list({ now: T0 + 11 * MIN })).map((s) => s.name),
        ["A1 every 60s", "B1 every 60s"],
      );
      // App B goes away: once its lease runs out, its schedule is dropped, A's keeps running.
      await registerPeriodic(a2, [appA[0]], { owner: "app-a", now: T0 + 40 * MIN });
      const after = await enqueueDuePeriodic({ client: a2, now: T0 + 40 * MIN + 1000 });
      assert.deepEqual(after.expired, ["B1 every 60s"]);
      assert.deepEqual(after.jobs.map((j) => j.name), ["A1 every 60s"]);
      assert.equal(await t.call("ZSCORE", k.periodicDue, "B1 every 60s"), null);
    });

    it("an owner that declares nothing any more stops its schedules; declaring one again does not repeat a tick", async () => {
      const c = client();
      const periodic: PeriodicSchedule[] = [{ every: 60, job: "Once", name: "once" }];
      await registerPeriodic(c, periodic, { owner: "app", now: T0 });
      assert.equal((await enqueueDuePeriodic({ client: c, now: T0 + 1000 })).enqueued, 1);
      await registerPeriodic(c, [], { owner: "app", now: T0 + 10_000 });
      assert.equal(await new PeriodicSet(c).size(), 0);
      // Back within the grace period of the 00:00 tick it already enqueued: it starts at 00:01.
      await registerPeriodic(c, periodic, { owner: "app", now: T0 + 20_000 });
      assert.equal(await t.call("ZSCORE", k.periodicDue, "once"), String(T0 / 1000 + 60));
      assert.equal((await enqueueDuePeriodic({ client: c, now: T0 + 21_000 })).enqueued, 0);
      assert.deepEqual(await ticksOf(t, k, "once"), [T0 / 1000]);
    });

    it("without an owner each schedule set holds its own lease: versions never remove each other's", async () => {
      const v1: PeriodicSchedule[] = [{ every: 60, job: "Keep" }, { every: 60, job: "Gone" }];
      const v2: PeriodicSchedule[] = [v1[0]];
      const old = client();
      const fresh = client();
      await registerPeriodic(old, v1, { now: T0 });
      await registerPeriodic(fresh, v2, { now: T0 + 1000 });
      // Old and new code run side by side during the deploy: both schedules run, once each.
      await enqueueDuePeriodic({ client: fresh, now: T0 + MIN });
      await enqueueDuePeriodic({ client: old, now: T0 + MIN + 500 });
      assert.deepEqual(
        (await queued(t, k)).filter((j) => j.periodic.at === T0 / 1000 + 60).map((j) => j.class).sort(),
        [
          "Gone",
          "Keep",
        ],
      );
      // The old process stops; 30 minutes after its last refresh, "Gone" is dropped.
      for (let m = 2; m <= 40; m++) {
        await registerPeriodic(fresh, v2, { now: T0 + m * MIN });
        await enqueueDuePeriodic({ client: fresh, now: T0 + m * MIN });
      }
      const gone = await ticksOf(t, k, "Gone every 60s");
      assert.equal(gone.at(-1), T0 / 1000 + 30 * 60, "runs until the old lease ends, then stops");
      assert.equal((await ticksOf(t, k, "Keep every 60s")).length, 41);
    });

    it("a schedule edited in a deploy is claimed with its new spec, also by a process that has the old one", async () => {
      const old = client();
      const fresh = client();
      const v1: PeriodicSchedule[] = [{ every: 60, job: "Mail", args: ["v1"], name: "mail" }];
      const v2: PeriodicSchedule[] = [{ every: 60, job: "Mail", args: ["v2"], name: "mail" }];
      await registerPeriodic(old, v1, { owner: "app", now: T0 });
      await registerPeriodic(fresh, v2, { owner: "app", now: T0 + 1000 });
      const result = await enqueueDuePeriodic({ client: old, now: T0 + MIN, schedules: v1 });
      assert.equal(result.enqueued, 2, "ticks 00:00 and 00:01");
      assert.deepEqual((await queued(t, k)).map((j) => j.args[0]), ["v2", "v2"]);
    });

    it("follows DST in Europe/Berlin and America/New_York", async () => {
      const c = client();
      const periodic: PeriodicSchedule[] = [
        { cron: "30 2 * * *", tz: "Europe/Berlin", job: "BerlinFixed", name: "bf" },
        { cron: "*/30 1-3 * * *", tz: "Europe/Berlin", job: "BerlinInterval", name: "bi" },
        { cron: "30 2 * * *", tz: "America/New_York", job: "NyFixed", name: "nf" },
        { cron: "30 1 * * *", tz: "America/New_York", job: "NyFallBack", name: "nb" },
      ];
      const run = async (from: number, to: number) => {
        await registerPeriodic(c, periodic, { now: from, force: true });
        for (let now = from; now <= to; now += 10 * MIN) {
          await registerPeriodic(c, periodic, { now }); // as the poller does each cycle: it refreshes the lease
          await enqueueDuePeriodic({ client: c, now, schedules: periodic });
        }
      };
      // Spring forward: Berlin 2024-03-31 02:00 CET -> 03:00 CEST; New York 2024-03-10 02:00 EST -> 03:00 EDT.
      await run(Date.UTC(2024, 2, 9, 12), Date.UTC(2024, 2, 11, 12));
      await run(Date.UTC(2024, 2, 30, 12), Date.UTC(2024, 3, 1, 12));
      // Each window starts with one "skip" run for the ticks missed since the last: filtered out by day.
      const on = async (name: string, ...days: string[]) =>
        iso(await ticksOf(t, k, name)).filter((s) => days.some((day) => s.startsWith(day)));
      assert.deepEqual(await on("nf", "2024-03-10", "2024-03-11"), [
        "2024-03-10T07:00:00.000Z", // 02:30 does not exist: runs at 03:00 EDT
        "2024-03-11T06:30:00.000Z",
      ]);
      assert.deepEqual(await on("bf", "2024-03-31", "2024-04-01"), [
        "2024-03-31T01:00:00.000Z", // 02:30 does not exist: runs at 03:00 CEST
        "2024-04-01T00:30:00.000Z",
      ]);
      assert.deepEqual(await on("bi", "2024-03-31"), [
        "2024-03-31T00:00:00.000Z", // 01:00 CET
        "2024-03-31T00:30:00.000Z", // 01:30 CET; 02:00 and 02:30 do not exist
        "2024-03-31T01:00:00.000Z", // 03:00 CEST
        "2024-03-31T01:30:00.000Z", // 03:30 CEST
        "2024-03-31T23:00:00.000Z", // 01:00 CEST on April 1st
        "2024-03-31T23:30:00.000Z",
      ]);
      // Fall back: Berlin 2024-10-27 03:00 CEST -> 02:00 CET; New York 2024-11-03 02:00 EDT -> 01:00 EST.
      await run(Date.UTC(2024, 9, 26, 12), Date.UTC(2024, 9, 27, 12));
      await run(Date.UTC(2024, 10, 2, 12), Date.UTC(2024, 10, 3, 12));
      assert.deepEqual(await on("bf", "2024-10-27"), ["2024-10-27T00:30:00.000Z"], "02:30 happens twice, runs once");
      assert.deepEqual(await on("bi", "2024-10-27T0"), [
        "2024-10-27T00:00:00.000Z", // 02:00 CEST
        "2024-10-27T00:30:00.000Z", // 02:30 CEST
        "2024-10-27T01:00:00.000Z", // 02:00 CET (again)
        "2024-10-27T01:30:00.000Z", // 02:30 CET (again)
        "2024-10-27T02:00:00.000Z", // 03:00 CET
        "2024-10-27T02:30:00.000Z",
      ]);
      assert.deepEqual(await on("nb", "2024-11-03"), [
        "2024-11-03T05:30:00.000Z", // 01:30 EDT only, not 01:30 EST an hour later
      ]);
    });
  });
}

describe("periodic schedule checks", () => {
  const c = createClient({ transport: memoryTransport() });
  const bad = async (schedule: unknown, pattern: RegExp) => {
    await assert.rejects(registerPeriodic(c, [schedule as PeriodicSchedule], { force: true }), (error: Error) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, pattern);
      return true;
    });
  };

  it("names what is wrong, before anything is written", async () => {
    await bad({ cron: "61 * * * *", job: "X" }, /periodic\[0\] as its timing is invalid/);
    await bad({ cron: "* * * * *", tz: "Mars/Olympus", job: "X" }, /timing is invalid.*Mars\/Olympus/);
    await bad({ cron: "0 0 31 2 *", job: "X" }, /'cron' never matches/);
    await bad({ cron: "* * * * *", every: 5, job: "X" }, /exactly one of 'cron' and 'every'/);
    await bad({ job: "X" }, /exactly one of 'cron' and 'every'/);
    await bad({ every: 1.5, job: "X" }, /'every' must be a whole number of seconds >= 1: current value is 1.5/);
    await bad({ every: 5, tz: "UTC", job: "X" }, /'tz' must be an IANA time zone name, and only with 'cron'/);
    await bad({ every: 5, job: "" }, /'job' must be a defineJob\(\) result or a class name/);
    await bad({ every: 5, job: Report, args: [42] }, /periodic\[0\] as its args do not fit Report/);
    await bad({ every: 5, job: "X", missed: { catchUp: 0 } }, /'missed' must be "skip" or \{ catchUp: 1..100 \}/);
    await bad({ every: 5, job: "X", args: [() => 1] }, /periodic\[0\] as args\[0\] is a function/);
    await bad({ every: 5, job: "X", name: "a\nb" }, /'name' must be 1 to 200 characters/);
    await bad(
      { every: 5, job: "X", sidekiqCron: "x" },
      /'sidekiqCron' must name a sidekiq-cron job, and only with 'cron'/,
    );
    await assert.rejects(
      registerPeriodic(c, [{ every: 5, job: "X" }, { every: 5, job: "X" }]),
      /two are named 'X every 5s': give one of them its own 'name'/,
    );
    await assert.rejects(registerPeriodic(c, [], { owner: "has space" }), /'owner' must be 1 to 100 characters/);
    assert.equal(await c.transport.call("DBSIZE"), 0, "nothing written");
  });
});

/** A small seeded PRNG (mulberry32), so a failing interleaving can be replayed. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
