/**
 * Unique jobs through a worker killed with SIGKILL mid-job, in a child
 * process on this same runtime: the lock outlives the process only up to
 * `for`, and orphan recovery keeps lock and job consistent (the recovered
 * copy runs under the same jid and lets its own lock go, never another's).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, silentLogger } from "../mod.ts";
import { uniqueJobs } from "../src/features/mod.ts";
import { UniqueLocks } from "../src/features/mod.ts";
import { uniqueDigest } from "../src/features/unique/unique_digest.ts";
import { spawnFixture } from "./support/child.ts";
import { redisAvailable, waitFor } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { testWorker } from "./support/worker.ts";

const unique = uniqueJobs();

describe("unique jobs through a worker killed with SIGKILL", { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();

  /** Pushes one UniqueSleep job and kills the worker running it; resolves to its jid and lock key. */
  async function killMidJob(forSeconds: number): Promise<{ jid: string; key: string; identity: string }> {
    await suite.redis.call("FLUSHDB");
    const client = createClient({ transport: suite.redis, features: [unique] });
    const child = spawnFixture("unique-worker.ts", { EDGEKIQ_TEST_URL: suite.url, HB: "1", TTL: "2" });
    const [, identity] = await child.waitFor(/ready (\S+)/);
    const jid = (await client.push("UniqueSleep", [1], { unique: { for: forSeconds } }))!;
    await child.waitFor(new RegExp(`performing ${jid}`));
    child.signal("SIGKILL");
    await child.exited;
    const key = client.keys.uniqueLock(await uniqueDigest("UniqueSleep", "default", [1]));
    return { jid, key, identity };
  }

  function survivor(ran: string[], gate?: Promise<void>) {
    const Rerun = defineJob({
      name: "UniqueSleep",
      async perform(ctx) {
        ran.push(ctx.jid);
        await gate;
      },
    });
    return testWorker(suite.redis, {
      jobs: [Rerun],
      features: [unique],
      poller: true,
      pollIntervalAverage: 0.5,
      pollInitialWait: 0,
      logger: silentLogger,
    });
  }

  it("recovery runs the job again under its lock, which it then lets go", async () => {
    const { jid, key } = await killMidJob(60);
    const client = createClient({ transport: suite.redis, features: [unique] });
    assert.equal(await suite.redis.call("GET", key), jid, "the dead process's job still holds its lock");
    assert.deepEqual(await new UniqueLocks(client).orphans(), [], "held by a dead process is not nowhere");
    assert.equal(await client.push("UniqueSleep", [1], { unique: { for: 60 } }), null, "a duplicate is refused");
    const ran: string[] = [];
    const worker = survivor(ran);
    await worker.run();
    try {
      await waitFor(() => ran.includes(jid), "the recovered job to run again", 15_000);
      await waitFor(async () => (await suite.redis.call("GET", key)) === null, "its lock to go on success", 5_000);
    } finally {
      await worker.stop();
    }
    assert.deepEqual(ran, [jid], "one copy ran");
  });

  it("a lock outlives its killed worker only up to `for`; the recovered copy never frees a newer copy's lock", async () => {
    const { jid, key } = await killMidJob(2);
    const ttl = Number(await suite.redis.call("PTTL", key));
    assert.ok(ttl > 0 && ttl <= 2000, `ttl ${ttl}`);
    await waitFor(async () => (await suite.redis.call("GET", key)) === null, "the lock to expire by `for`", 5_000);
    // A newer copy may now be pushed (scheduled, so the survivor runs only the old one).
    const client = createClient({ transport: suite.redis, features: [unique] });
    const newer = (await client.push("UniqueSleep", [1], { unique: { for: 60 }, in: 600 }))!;
    assert.ok(newer && newer !== jid);
    const ran: string[] = [];
    const worker = survivor(ran);
    await worker.run();
    try {
      await waitFor(() => ran.includes(jid), "the recovered job to run", 15_000);
    } finally {
      await worker.stop(); // flushes its acks and releases
    }
    assert.equal(await suite.redis.call("GET", key), newer, "the old copy's release left the newer copy's lock alone");
  });
});
