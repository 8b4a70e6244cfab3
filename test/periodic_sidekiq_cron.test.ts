/**
 * A schedule shared with a sidekiq-cron job (`sidekiqCron: "<name>"`), against
 * the real gem: Debian's ruby-sidekiq-cron 1.8 on Sidekiq 6.4, its poller run
 * with a frozen clock. Each tick is enqueued once, by whichever side claims it
 * first; sidekiq-cron's Web UI data (last enqueue time, jid history) reads
 * edgekiq's pushes; disabling the job in Ruby stops it in edgekiq too.
 */
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createClient } from "../mod.ts";
import { keys } from "../src/keys.ts";
import { enqueueDuePeriodic, type PeriodicSchedule, registerPeriodic } from "../src/features/periodic/mod.ts";
import type { Transport } from "../src/transport/transport.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { rubyJson } from "./support/ruby.ts";

const k = keys();
const T0 = Date.UTC(2024, 0, 1); // a tick of */5

function cronSkip(): string | false {
  if (!redisAvailable()) return "no redis";
  const probe = spawnSync("ruby", ["-e", 'require "sidekiq"; require "sidekiq/cron/job"'], { timeout: 30_000 });
  if (probe.status === 0) return false;
  console.error(
    "SKIP: ruby with sidekiq-cron is missing (apt-get install ruby-sidekiq-cron) — sidekiq-cron interop skipped",
  );
  return "sidekiq-cron is not installed";
}

describe("periodic schedules shared with sidekiq-cron", { skip: cronSkip() }, () => {
  const suite = suiteRedis();
  let redis: Transport;
  before(() => void (redis = suite.redis));

  const ruby = <T = string>(now: number, ...args: string[]) =>
    rubyJson<T>("periodic_cron", { env: { REDIS_URL: suite.url, NOW: String(now / 1000) }, args });
  const queued = async () =>
    ((await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[]).map((raw) => JSON.parse(raw)).reverse();

  it("enqueues each tick once, whichever side claims it first", async () => {
    await redis.call("FLUSHDB");
    const client = createClient({ transport: redis });
    const periodic: PeriodicSchedule[] = [
      { cron: "*/5 * * * *", job: "SharedJob", args: ["edgekiq"], name: "shared", sidekiqCron: "shared" },
    ];
    const enqueue = (now: number) => enqueueDuePeriodic({ client, now, schedules: periodic });

    // Saving the job makes sidekiq-cron claim the tick before (00:00), so it is not run at start.
    assert.equal(await ruby(T0 + 10_000, "create", "shared", "*/5 * * * *", "SharedJob"), "ok");
    await registerPeriodic(client, periodic, { owner: "ts", now: T0 + 10_000 });
    assert.equal((await enqueue(T0 + 11_000)).enqueued, 0, "00:00 was claimed by sidekiq-cron");
    assert.equal(await redis.call("ZSCORE", k.periodicDue, "shared"), String(T0 / 1000 + 300), "but it moved on");

    // 00:05: edgekiq first; Ruby's poller 19 s later pushes nothing.
    const mine = await enqueue(T0 + 301_000);
    assert.equal(mine.enqueued, 1);
    assert.equal(await ruby(T0 + 320_000, "poll"), "ok");
    assert.deepEqual((await queued()).map((j) => j.args[0]), ["edgekiq"]);
    const shown = await ruby<{ last_enqueue_time: number; jid_history: { jid: string }[] }>(
      T0 + 320_000,
      "show",
      "shared",
    );
    assert.equal(shown.last_enqueue_time, T0 / 1000 + 301, "Ruby reads edgekiq's last_enqueue_time");
    assert.deepEqual(shown.jid_history.map((h) => h.jid), [mine.jobs[0].jid], "and its jid history");

    // 00:10: Ruby first; edgekiq pushes nothing.
    assert.equal(await ruby(T0 + 605_000, "poll"), "ok");
    assert.equal((await enqueue(T0 + 610_000)).enqueued, 0);
    const jobs = await queued();
    assert.deepEqual(jobs.map((j) => j.args[0]), ["edgekiq", "ruby"]);
    assert.deepEqual(
      (await redis.call("ZRANGE", k.sidekiqCronEnqueued("shared"), 0, -1)) as string[],
      ["2024-01-01T00:00:00Z", "2024-01-01T00:05:00Z", "2024-01-01T00:10:00Z"],
      "one claim per tick, in sidekiq-cron's format",
    );

    // Disabled in sidekiq-cron's Web UI: neither side enqueues.
    assert.equal(await ruby(T0 + 700_000, "disable", "shared"), "ok");
    assert.equal((await enqueue(T0 + 901_000)).enqueued, 0);
    assert.equal(await ruby(T0 + 905_000, "poll"), "ok");
    assert.equal((await queued()).length, 2);
  });
});
