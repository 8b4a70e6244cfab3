/**
 * Iterable jobs across a real SIGTERM and a real SIGKILL, in a child process
 * on this same runtime (Node, Bun or Deno).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, silentLogger } from "../mod.ts";
import { spawnFixture } from "./support/child.ts";
import { redisAvailable, waitFor } from "./support/matrix.ts";
import { heldCount } from "./support/held.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { testWorker } from "./support/worker.ts";
import { DONE_KEY, sweepJob } from "./fixtures/sweep-job.ts";
import { upTo } from "./support/iterable.ts";

const ITEMS = 300;

describe("iterable jobs in a worker process", { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();
  const done = async () => ((await suite.redis.call("LRANGE", DONE_KEY, 0, -1)) as string[]).map(Number);

  /** Runs the job here until its state is gone (completed); `poller` recovers a dead process's jobs. */
  async function finishHere(jid: string, poller: boolean) {
    const worker = testWorker(suite.redis, {
      jobs: [sweepJob({ itemMs: 1 })],
      concurrency: 1,
      poller,
      pollIntervalAverage: 0.5,
      pollInitialWait: 0,
      logger: silentLogger,
    });
    await worker.run();
    try {
      await waitFor(
        async () => (await suite.redis.call("EXISTS", `it-${jid}`)) === 0 && (await done()).length >= ITEMS,
        "the job to complete here",
        20_000,
      );
    } finally {
      await worker.stop();
    }
  }

  it("SIGTERM mid-iteration: stops after the item in flight, goes back unchanged, resumes with nothing skipped", async () => {
    await suite.redis.call("FLUSHDB");
    const child = spawnFixture("iterable-worker.ts", { EDGEKIQ_TEST_URL: suite.url, ITEM_MS: "10" });
    const [, identity] = await child.waitFor(/ready (\S+)/);
    const jid = "5eed0000000000000000000a";
    const raw = JSON.stringify({
      class: "Sweep",
      args: [ITEMS],
      queue: "default",
      jid,
      retry: true,
      enqueued_at: 1.5e9,
    });
    await suite.redis.call("LPUSH", "queue:default", raw);
    await waitFor(async () => (await done()).length >= 20, "20 items in the child");
    child.signal("SIGTERM");
    assert.equal(await child.exited, 0, child.output());
    const [, stoppedAt] = child.output().match(/stopped at (\d+)/)!;
    const before = await done();
    assert.equal(Number(stoppedAt), before.length, "the cursor is right after the last item done");
    assert.equal(await suite.redis.call("HGET", `it-${jid}`, "c"), stoppedAt, "and that is what it saved");
    assert.deepEqual(
      await suite.redis.call("LRANGE", "queue:default", 0, -1),
      [raw],
      "back as pushed: same jid, no retry_count",
    );
    assert.equal(await heldCount(suite.redis, identity), 0);

    await finishHere(jid, false);
    const all = await done();
    const repeated = all.length - ITEMS;
    assert.ok(repeated <= 1, `at most the in-flight item repeated (${repeated})`);
    assert.deepEqual([...new Set(all)].sort((a, b) => a - b), upTo(ITEMS), "no item skipped");
    assert.equal(await suite.redis.call("ZCARD", "retry"), 0);
  });

  it("SIGKILL mid-iteration: orphan recovery runs it again from the last saved cursor", async () => {
    await suite.redis.call("FLUSHDB");
    const child = spawnFixture("iterable-worker.ts", {
      EDGEKIQ_TEST_URL: suite.url,
      ITEM_MS: "10",
      FLUSH: "0.1",
      HB: "1",
      TTL: "2",
    });
    await child.waitFor(/ready (\S+)/);
    const jid = (await createClient({ transport: suite.redis }).push("Sweep", [ITEMS]))!;
    await waitFor(async () => (await done()).length >= 60, "60 items in the child");
    child.signal("SIGKILL");
    await child.exited;
    const saved = Number(await suite.redis.call("HGET", `it-${jid}`, "c"));
    const ranBefore = (await done()).length;
    assert.ok(saved > 0 && saved <= ranBefore, `saved cursor ${saved}, ${ranBefore} items ran`);
    assert.ok(ranBefore - saved <= 30, `at most about a flush interval lost (${ranBefore - saved} items)`);

    await finishHere(jid, true);
    const all = await done();
    assert.deepEqual(all, [...upTo(ranBefore), ...upTo(ITEMS).slice(saved)], "resumed exactly at the saved cursor");
    assert.match(child.output(), /run 1 from null/);
  });
});
