/**
 * Periodic claims across real processes on a real redis-server: processes
 * SIGKILLed while claiming lose no tick, and three processes polling a
 * 1-second schedule for 10 s enqueue each tick once.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient } from "../mod.ts";
import { keys } from "../src/keys.ts";
import { enqueueDuePeriodic, type PeriodicSchedule, registerPeriodic } from "../src/features/periodic/mod.ts";
import { type Child, spawnFixture } from "./support/child.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";

const k = keys();

interface Pushed {
  jid: string;
  enqueued_at: number;
  periodic: { name: string; at: number };
}

describe("periodic across processes", { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();

  const pushed = async (): Promise<Pushed[]> =>
    ((await suite.redis.call("LRANGE", k.queue("default"), 0, -1)) as string[]).map((raw) => JSON.parse(raw)).reverse();

  it("kill -9 of a process in the middle of claiming loses no tick and enqueues none twice", async () => {
    await suite.redis.call("FLUSHDB");
    // A clock 50 times faster than real time, a tick every simulated second,
    // and a grace so long that no tick counts as missed: every tick must be there.
    const base = Date.now();
    const t0 = Date.UTC(2024, 0, 1);
    const speed = 50;
    const clock = () => t0 + (Date.now() - base) * speed;
    const schedules: PeriodicSchedule[] = [{ every: 1, job: "Tick", name: "tick", grace: 1e9 }];
    const client = createClient({ transport: suite.redis });
    await registerPeriodic(client, schedules, { owner: "kill", now: clock() });
    const env = {
      EDGEKIQ_TEST_URL: suite.url,
      EVERY: "1",
      GRACE: "1e9",
      OWNER: "kill",
      T0: String(t0),
      BASE: String(base),
      SPEED: String(speed),
      END: String(Date.now() + 120_000),
    };
    let killed = 0;
    for (let round = 0; round < 10; round++) {
      // Two at once, so a kill also lands while another process races for the same tick. Each
      // kills itself inside a claim (after its reply, or with it on the wire); a SIGKILL from
      // here ends any that has not within a second.
      const children: Child[] = ["reply", "inflight"].map((at) =>
        spawnFixture("periodic-child.ts", {
          ...env,
          KILL_AT: at,
          KILL_AFTER_CLAIMS: String(1 + Math.floor(Math.random() * 20)),
        })
      );
      await Promise.all(children.map((c) => c.waitFor(/ready/)));
      const timer = setTimeout(() => children.forEach((c) => c.proc.exitCode === null && c.signal("SIGKILL")), 1000);
      for (const child of children) {
        assert.equal(await child.exited, "SIGKILL", child.output());
        killed++;
      }
      clearTimeout(timer);
    }
    // Whatever was left due is claimed by a survivor.
    const finalNow = clock();
    await registerPeriodic(client, schedules, { owner: "kill", now: finalNow, force: true });
    await enqueueDuePeriodic({ client, now: finalNow, schedules });
    const ticks = (await pushed()).map((j) => j.periodic.at).sort((a, b) => a - b);
    assert.equal(new Set(ticks).size, ticks.length, "no tick twice");
    for (let i = 1; i < ticks.length; i++) {
      assert.equal(ticks[i] - ticks[i - 1], 1, `no tick lost after ${ticks[i - 1]}`);
    }
    assert.equal(ticks.at(-1), Math.floor(finalNow / 1000), "up to now");
    assert.ok(ticks.length > 100, `${ticks.length} ticks over ${killed} killed processes`);
    console.log(`kill -9: ${killed} processes killed, ${ticks.length} ticks, each once`);
  });

  it("three processes polling a 1-second schedule for 10 s enqueue 10 ± 1 jobs, none twice", async () => {
    await suite.redis.call("FLUSHDB");
    // Starts on a half second, far enough ahead for the children to be up.
    const start = Math.ceil(Date.now() / 1000) * 1000 + 8500;
    const end = start + 10_000;
    const schedules: PeriodicSchedule[] = [{ every: 1, job: "Tick", name: "tick", grace: 60 }];
    await registerPeriodic(createClient({ transport: suite.redis }), schedules, { owner: "rt", now: start });
    const env = {
      EDGEKIQ_TEST_URL: suite.url,
      EVERY: "1",
      OWNER: "rt",
      T0: "0",
      BASE: "0",
      SPEED: "1",
      END: String(end),
      PAUSE_MS: "50",
    };
    const children = [1, 2, 3].map(() => spawnFixture("periodic-child.ts", env));
    await Promise.all(children.map((c) => c.waitFor(/ready/)));
    assert.ok(Date.now() < start, "children started before the window opened");
    for (const child of children) assert.equal(await child.exited, 0, child.output());
    const jobs = (await pushed()).filter((j) => j.periodic.at * 1000 > start && j.periodic.at * 1000 <= end);
    const ticks = jobs.map((j) => j.periodic.at);
    assert.equal(new Set(ticks).size, ticks.length, "no tick twice");
    assert.equal(new Set(jobs.map((j) => j.jid)).size, jobs.length);
    assert.ok(ticks.length >= 9 && ticks.length <= 11, `10 ± 1 enqueues, got ${ticks.length}`);
    const late = Math.max(...jobs.map((j) => j.enqueued_at - j.periodic.at));
    const calls = children.map((c) => c.output().match(/calls=(\d+) enqueued=(\d+)/)!.slice(1).map(Number));
    assert.ok(calls.every(([n]) => n > 50), "each process kept polling");
    console.log(
      `real time: ${ticks.length} ticks in 10 s, at most ${Math.round(late * 1000)} ms late; ` +
        `per process [calls, enqueued]: ${JSON.stringify(calls)}`,
    );
  });
});
