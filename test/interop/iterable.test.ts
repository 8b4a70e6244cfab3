/**
 * Iterable-job state next to Ruby: `test/interop/ruby/iterable_state.rb`
 * transcribes Sidekiq 8.1's `flush_state`, `Client#cancel!`, `is_cancelled?`
 * and `IterableJobQuery` with plain Redis calls (Debian's Sidekiq 6.4 has no
 * iterable jobs), so the JSON, the Float text and the commands are real
 * Ruby's. Both directions: Ruby cancels edgekiq jobs, reads their state as
 * the Busy page does, and writes the same hash edgekiq writes.
 */
import { before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { cancelJob, createClient, defineIterableJob, iterateArray, type Transport } from "../../mod.ts";
import { rubyFloat } from "../../src/features/iterable/state.ts";
import { createTestHarness } from "../../src/testing.ts";
import { redisAvailable, waitFor } from "../support/matrix.ts";
import { suiteRedis } from "../support/suite_redis.ts";
import { rubyJson, rubySkip } from "../support/ruby.ts";
import { testWorker } from "../support/worker.ts";
import { sleep, walker } from "../support/iterable.ts";

const TTL = 30 * 86_400;

describe(
  "iterable jobs and Sidekiq 8's state code (Ruby)",
  { skip: rubySkip() || (!redisAvailable() && "no redis") },
  () => {
    const suite = suiteRedis();
    let redis: Transport;
    const ruby = <T>(...args: string[]) => rubyJson<T>("iterable_state", { env: { REDIS_URL: suite.url }, args });
    const hash = async (key: string) => {
      const flat = (await redis.call("HGETALL", key)) as string[];
      return Object.fromEntries(flat.flatMap((_, i) => (i % 2 ? [] : [[flat[i], flat[i + 1]]])));
    };
    before(() => void (redis = suite.redis));
    beforeEach(async () => void await redis.call("FLUSHDB"));

    it("edgekiq saves the hash Sidekiq 8's flush_state writes for the same cursor, byte for byte", async () => {
      const Pin = defineIterableJob({
        name: "Pin",
        each: (_ctx, _cursor: unknown, cursor: unknown) => [[0, cursor], [1, cursor]] as const,
        perItem() {},
      });
      const t = createTestHarness({ jobs: [Pin], transport: redis });
      const cursors = [
        3,
        0,
        "abc",
        { id: 42, after: "2024-01-01T00:00:00Z" },
        [7, "x", null],
        null,
        'ü/"\\\n<b>&',
        1.5,
      ];
      for (const [i, cursor] of cursors.entries()) {
        const jid = (await Pin.performAsync(t.client, cursor))!;
        assert.equal((await t.step({ items: 1 }))?.outcome, "interrupted");
        const ours = await hash(`it-${jid}`);
        const theirs = await ruby<{ hash: Record<string, string>; ttl: number; cancelled: null }>(
          "flush",
          `ruby${i}`,
          ours.ex,
          JSON.stringify(cursor),
          ours.rt,
        );
        assert.deepEqual(ours, theirs.hash, `cursor ${JSON.stringify(cursor)}`);
        const ttl = Number(await redis.call("TTL", `it-${jid}`));
        assert.ok(Math.abs(ttl - theirs.ttl) <= 2 && theirs.ttl > TTL - 60, `TTL ${ttl} vs Ruby's ${theirs.ttl}`);
        await redis.call("DEL", "queue:default");
      }
    });

    it("rt is written as Ruby's Float#to_s writes it", async () => {
      const values = [
        0,
        5,
        0.1,
        1 / 3,
        123.456,
        0.0001,
        0.00001,
        9.9e-5,
        2.5e-7,
        1e14,
        999999999999999.9,
        1e15,
        1234567890123456,
        1e16,
        12345678.9,
        3.0000001,
      ];
      assert.deepEqual(values.map(rubyFloat), await ruby<string[]>("floats", JSON.stringify(values)));
    });

    it("Ruby's cancel! stops a running edgekiq job at its next save: onCancel, not re-pushed, state removed", async () => {
      const w = walker({ flushInterval: 0.05, perItem: () => sleep(10) });
      const jid = (await w.job.performAsync(createClient({ transport: redis }), 10_000))!;
      const worker = testWorker(redis, { jobs: [w.job], concurrency: 1 });
      await worker.run();
      try {
        await waitFor(() => w.seen.length >= 5, "a few items");
        const cancel = await ruby<{ cancelled: number; ttl: number }>("cancel", jid);
        assert.ok(Math.abs(cancel.cancelled - Date.now() / 1000) < 5 && cancel.ttl > TTL - 60);
        await waitFor(() => w.hooks.includes("complete!"), "the job to see the cancel");
        await waitFor(async () => (await redis.call("EXISTS", `it-${jid}`)) === 0, "state removed");
      } finally {
        await worker.stop();
      }
      assert.deepEqual(w.hooks, ["start:1", "cancel", "stop", "complete!"]);
      assert.ok(w.seen.length < 10_000, `stopped early (${w.seen.length} items)`);
      assert.equal(await redis.call("LLEN", "queue:default"), 0, "not re-pushed");
      assert.equal(await redis.call("ZCARD", "retry"), 0);
    });

    it("Ruby's cancel! of a queued edgekiq job: it runs no item", async () => {
      const w = walker();
      const client = createClient({ transport: redis });
      const jid = (await w.job.performAsync(client, 5))!;
      await ruby("cancel", jid);
      const t = createTestHarness({ jobs: [w.job], transport: redis });
      assert.equal((await t.step())?.outcome, "done");
      assert.deepEqual([w.seen, w.hooks], [[], ["start:1", "cancel", "stop", "complete!"]]);
    });

    it("edgekiq's cancel is what Ruby's cancel! and is_cancelled? see, and Ruby reads the state as the Busy page does", async () => {
      const client = createClient({ transport: redis });
      const Paged = defineIterableJob({
        name: "Paged",
        each: (_ctx, cursor: number | null) => iterateArray(["a", "b", "c"], cursor),
        perItem() {},
      });
      const t = createTestHarness({ jobs: [Paged], transport: redis });
      const jid = (await Paged.performAsync(client))!;
      await t.step({ items: 2 });
      const read = await ruby<Record<string, unknown>>("read", jid);
      assert.deepEqual({ ...read, runtime: typeof read.runtime }, {
        exists: true,
        executions: 1,
        runtime: "number",
        cursor: 2,
        cancelled: null,
        is_cancelled: null,
      });
      const at = await cancelJob(client, jid);
      const afterCancel = await ruby<Record<string, unknown>>("read", jid);
      assert.equal(afterCancel.cancelled, at);
      assert.equal(afterCancel.is_cancelled, String(at), "the field a Sidekiq 8 job polls");
      assert.equal(
        (await ruby<{ cancelled: number }>("cancel", jid)).cancelled,
        at,
        "Ruby's cancel! keeps the first time",
      );
    });
  },
);
