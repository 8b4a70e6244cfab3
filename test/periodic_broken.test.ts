/**
 * A broken periodic schedule fails alone (issue 25, finding 2): a time zone
 * or cron this runtime cannot read, a cron of another tool, a queue key of
 * the wrong type. The other schedules are enqueued, the broken one is logged
 * once per change and shown as broken on the dashboard, and the poller's
 * other steps (promote, prune, recover) run whatever the periodic step does.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createClient, pollOnce } from "../mod.ts";
import { keys } from "../src/keys.ts";
import { createLogger, type LogFields } from "../src/logger.ts";
import { PeriodicSet } from "../src/features/mod.ts";
import { digest } from "../src/features/periodic/spec_digest.ts";
import { enqueueDuePeriodic, type PeriodicSchedule, registerPeriodic } from "../src/features/periodic/mod.ts";
import type { Transport } from "../src/transport/transport.ts";
import { dashboard } from "../src/web/mod.ts";
import { plantHeld } from "./support/held.ts";
import { matrix } from "./support/matrix.ts";

const k = keys();
const MIN = 60_000;
const T0 = Date.UTC(2024, 0, 1, 0, 0, 0);

/** Rewrites a registered schedule's stored spec, as another tool or another version of edgekiq might have. */
async function rewrite(t: Transport, name: string, edit: (spec: Record<string, unknown>) => void): Promise<void> {
  const key = k.periodicSchedule(name);
  const spec = JSON.parse((await t.call("HGET", key, "spec")) as string);
  edit(spec);
  const json = JSON.stringify(spec);
  await t.call("HSET", key, "spec", json, "sdig", digest(json));
}

/** A logger that keeps its lines. */
function recorder(): { logger: ReturnType<typeof createLogger>; lines: Array<LogFields & { msg: string }> } {
  const lines: Array<LogFields & { msg: string }> = [];
  return { lines, logger: createLogger({ json: true, level: "debug", write: (line) => lines.push(JSON.parse(line)) }) };
}

const SCHEDULES: PeriodicSchedule[] = [
  { every: 60, job: "Good", name: "good" },
  { cron: "0 * * * *", tz: "Europe/Berlin", job: "Zoned", name: "mars" },
  { cron: "0 * * * *", job: "Quartz", name: "seven" },
  { every: 60, job: "Typed", queue: "uq", name: "wrongtype" },
];

/** Registers SCHEDULES at `now`, then breaks three of them. */
async function breakThree(t: Transport, now = T0): Promise<void> {
  await registerPeriodic(createClient({ transport: t }), SCHEDULES, { now });
  await rewrite(t, "mars", (spec) => void (spec.tz = "Mars/Olympus_Mons")); // a zone this runtime's ICU lacks
  await rewrite(t, "seven", (spec) => void (spec.cron = "0 0 * * * * 2030")); // Quartz's seven fields
  await t.call("SET", k.queue("uq"), "a string where a list belongs"); // WRONGTYPE on every push
}

for (const target of matrix(["memory", "ioredis", "bun", "upstash"])) {
  describe(`broken periodic schedules on ${target.name}`, () => {
    let t: Transport;
    beforeEach(async () => {
      t ??= await target.open();
      await target.flush();
    });

    it("each fails alone: the others are enqueued every poll, the broken ones are logged once", async () => {
      await breakThree(t);
      const { logger, lines } = recorder();
      // A process of another app: it reads every spec from Redis.
      const stranger = createClient({ transport: t });
      for (let minute = 0; minute < 3; minute++) {
        const result = await enqueueDuePeriodic({ client: stranger, now: T0 + minute * MIN + 1000, logger });
        assert.deepEqual(result.jobs.map((j) => j.name), ["good"], `minute ${minute}`);
        const broken = Object.fromEntries(result.broken.map((b) => [b.name, b.error]));
        assert.deepEqual(Object.keys(broken).sort(), ["mars", "seven", "wrongtype"], `minute ${minute}`);
        assert.match(broken.mars, /Mars\/Olympus_Mons/);
        assert.match(broken.seven, /7 parts/);
        assert.match(broken.wrongtype, /queue:uq.*string/);
      }
      const errors = lines.filter((l) => l.level === "error");
      assert.deepEqual(errors.map((l) => l.schedule).sort(), ["mars", "seven", "wrongtype"], "logged once per change");
      assert.equal(await t.call("TYPE", k.queue("uq")), "string", "nothing written to the wrong key");

      // Shown as broken to the dashboard and the API, by any process.
      const listed = await new PeriodicSet(stranger).list({ now: T0 + 3 * MIN });
      const shown = Object.fromEntries(listed.map((e) => [e.name, e.broken]));
      assert.equal(shown.good, null);
      assert.match(shown.mars ?? "", /Mars\/Olympus_Mons/);
      assert.match(shown.seven ?? "", /7 parts/);
      assert.match(shown.wrongtype ?? "", /queue:uq/);

      // Fixed: it runs again (a missed tick: once, now), says so, and is no longer shown as broken.
      await t.call("DEL", k.queue("uq"));
      const fixed = await enqueueDuePeriodic({ client: stranger, now: T0 + 3 * MIN + 1000, logger });
      assert.deepEqual(fixed.jobs.map((j) => j.name).sort(), ["good", "wrongtype"]);
      assert.deepEqual(fixed.broken.map((b) => b.name).sort(), ["mars", "seven"]);
      assert.ok(lines.some((l) => l.level === "info" && l.schedule === "wrongtype"), "its recovery is logged");
      assert.equal(lines.filter((l) => l.level === "error").length, 3, "no new error lines");
      assert.equal((await new PeriodicSet(stranger).get("wrongtype", { now: T0 + 3 * MIN }))?.broken, null);
    });

    it("a poll still promotes, prunes and recovers orphans when its periodic step fails", async () => {
      await breakThree(t);
      const c = createClient({ transport: t });
      const orphan = JSON.stringify({ class: "Orphan", args: [], queue: "default", jid: "0123456789abcdef01234567" });
      await plantHeld(t, { identity: "dead-host:1:gone", jobs: [orphan] });
      const due = JSON.stringify({ class: "Later", args: [], queue: "default", jid: "76543210fedcba9876543210" });
      await t.call("ZADD", k.schedule, T0 / 1000 - 5, due);
      const errors: unknown[] = [];
      // A tick with the broken schedules due, from a process that declares the good one.
      const result = await pollOnce({
        client: c,
        now: T0 + 1000,
        periodic: [SCHEDULES[0]],
        onError: (error) => errors.push(error),
      });
      assert.equal(result.recovered, 1, "the dead process's job is back on its queue");
      assert.equal(result.promoted, 1);
      assert.equal(result.features.periodic, 1, "the good schedule's tick");
      assert.deepEqual(result.failed, []);
      const queued = ((await t.call("LRANGE", k.queue("default"), 0, -1)) as string[]).map((raw) => JSON.parse(raw));
      assert.deepEqual(queued.map((j) => j.class).sort(), ["Good", "Later", "Orphan"]);

      // The whole periodic step failing (its key of the wrong type) stops nothing else either.
      await t.call("DEL", k.periodicDue);
      await t.call("SET", k.periodicDue, "not a sorted set");
      await plantHeld(t, { identity: "dead-host:2:gone", jobs: [orphan.replace("Orphan", "Orphan2")] });
      await t.call("ZADD", k.schedule, T0 / 1000 - 5, due.replace("Later", "Later2"));
      const second = await pollOnce({
        client: c,
        now: T0 + 2000,
        periodic: [SCHEDULES[0]],
        onError: (error) => errors.push(error),
      });
      assert.equal(second.recovered, 1);
      assert.equal(second.promoted, 1);
      assert.ok(second.failed.includes("periodic"), `failed steps: ${second.failed}`);
      assert.ok(errors.length > 0 && errors.every((e) => /WRONGTYPE/.test(String(e))), String(errors));
    });
  });
}

describe("the dashboard's Periodic page shows a broken schedule", () => {
  it("in the list and on its page, with the reason", async () => {
    const { memoryTransport } = await import("../src/transport/adapters/memory/memory_transport.ts");
    const t = memoryTransport();
    const now = Date.now();
    await breakThree(t, now);
    // The every-60-s schedules are due now; the hourly ones are found unreadable by the page itself.
    await enqueueDuePeriodic({ client: createClient({ transport: t }), now });
    const app = new Hono().route("/jobs", dashboard({ transport: t, auth: () => true }));
    const page = await (await app.request("/jobs/periodic")).text();
    const row = (name: string) =>
      [...page.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => m[1]).find((r) => r.includes(`>${name}</a>`));
    assert.match(row("mars") ?? "", /<span class="status error"[^>]*>broken<\/span>/);
    assert.match(row("wrongtype") ?? "", /broken/);
    assert.doesNotMatch(row("good") ?? "", /broken/);
    assert.match(page, /3 broken/);
    const detail = await (await app.request("/jobs/periodic/mars")).text();
    assert.match(detail, /Mars\/Olympus_Mons/);
  });
});
