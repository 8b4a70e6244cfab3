/**
 * Real signals and a real crash, in a child process on this same runtime.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, silentLogger } from "../mod.ts";
import { spawnFixture } from "./support/child.ts";
import { redisAvailable, waitFor } from "./support/matrix.ts";
import { heldCount } from "./support/held.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { testWorker } from "./support/worker.ts";

const SleepJob = defineJob({ name: "SleepJob", perform() {} });

describe("worker process", { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();

  it("SIGTERM: finishes the running job, unregisters, and exits with nothing left open", async () => {
    await suite.redis.call("FLUSHDB");
    const child = spawnFixture("signal-worker.ts", { EDGEKIQ_TEST_URL: suite.url, JOB_MS: "300" });
    const [, identity] = await child.waitFor(/ready (\S+)/);
    const jid = await createClient({ transport: suite.redis }).push(SleepJob, []);
    await child.waitFor(new RegExp(`performing ${jid}`));
    child.signal("SIGTERM");
    assert.equal(await child.exited, 0, child.output());
    assert.match(child.output(), new RegExp(`performed ${jid}`));
    assert.match(child.output(), /worker exited/);
    assert.deepEqual(await suite.redis.call("SMEMBERS", "processes"), []);
    assert.equal(await heldCount(suite.redis, identity), 0);
    assert.equal(await suite.redis.call("LLEN", "queue:default"), 0);
  });

  it("SIGTSTP quiets, SIGTTIN dumps running jobs, a second SIGINT requeues and exits at once", async () => {
    await suite.redis.call("FLUSHDB");
    const child = spawnFixture("signal-worker.ts", { EDGEKIQ_TEST_URL: suite.url, JOB_MS: "forever", TIMEOUT: "60" });
    const [, identity] = await child.waitFor(/ready (\S+)/);
    const jid = await createClient({ transport: suite.redis }).push(SleepJob, []);
    await child.waitFor(new RegExp(`performing ${jid}`));
    child.signal("SIGTTIN");
    await child.waitFor(new RegExp(`running job.*${jid}`));
    child.signal("SIGTSTP");
    await waitFor(async () => (await suite.redis.call("HGET", identity, "quiet")) === "true", "quiet flag");
    child.signal("SIGINT");
    await child.waitFor(/shutting down/);
    const t0 = Date.now();
    child.signal("SIGINT");
    await child.exited;
    assert.ok(Date.now() - t0 < 5000, "second INT exits well before the 60 s timeout");
    const queued = (await suite.redis.call("LRANGE", "queue:default", 0, -1)) as string[];
    assert.deepEqual(queued.map((r) => JSON.parse(r).jid), [jid], "the running job went back");
    assert.equal(await heldCount(suite.redis, identity), 0);
  });

  it("SIGKILL mid-job: a survivor recovers the job within the heartbeat TTL plus one poll", async () => {
    await suite.redis.call("FLUSHDB");
    const child = spawnFixture("signal-worker.ts", {
      EDGEKIQ_TEST_URL: suite.url,
      JOB_MS: "forever",
      HB: "1",
      TTL: "2",
    });
    await child.waitFor(/ready (\S+)/);
    const jid = await createClient({ transport: suite.redis }).push(SleepJob, []);
    await child.waitFor(new RegExp(`performing ${jid}`));
    child.signal("SIGKILL");
    await child.exited;
    const killedAt = Date.now();
    const ran: string[] = [];
    const Rerun = defineJob({
      name: "SleepJob",
      perform(ctx) {
        ran.push(ctx.jid);
      },
    });
    const survivor = testWorker(suite.redis, {
      jobs: [Rerun],
      poller: true,
      pollIntervalAverage: 0.5,
      pollInitialWait: 0,
      logger: silentLogger,
    });
    await survivor.run();
    try {
      await waitFor(() => ran.includes(jid!), "recovered job to run again", 15_000);
    } finally {
      await survivor.stop();
    }
    const seconds = (Date.now() - killedAt) / 1000;
    console.log(`recovery after SIGKILL: ${seconds.toFixed(2)} s (TTL 2 s, poll ~0.5 s)`);
    assert.ok(seconds < 2 + 0.75 + 2, `recovered in ${seconds} s`);
  });
});
