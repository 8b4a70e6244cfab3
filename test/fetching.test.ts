import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, createClient, createWorker, defineJob, drain, type Transport } from "../mod.ts";
import { Prefetch } from "../src/server/prefetch.ts";
import type { Script } from "../src/transport/script.ts";
import type { RedisArg } from "../src/transport/transport.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { heldCount } from "./support/held.ts";
import { testWorker } from "./support/worker.ts";

describe("Prefetch", () => {
  it("stays at the floor until both a trip and a job are timed", () => {
    const p = new Prefetch({ concurrency: 10, min: 20, max: 100 });
    assert.equal(p.size, 20);
    p.trip(0.3);
    assert.equal(p.size, 20);
  });

  it("keeps the floor for jobs slower than a round trip", () => {
    const p = new Prefetch({ concurrency: 10, min: 20, max: 100 });
    p.trip(0.3);
    p.job(50);
    assert.equal(p.size, 20);
  });

  it("grows toward the ceiling for jobs that finish within a round trip, and shrinks back", () => {
    const p = new Prefetch({ concurrency: 10, min: 20, max: 100 });
    p.trip(0.5);
    p.job(0.2); // 2 * 10 * 0.5 / 0.2 = 50
    assert.equal(p.size, 50);
    for (let i = 0; i < 50; i++) p.job(0.01);
    assert.equal(p.size, 100, "capped at the ceiling");
    for (let i = 0; i < 100; i++) p.job(40);
    assert.equal(p.size, 20, "slow jobs bring it back to the floor");
  });

  it("is fixed when min and max are equal", () => {
    const p = new Prefetch({ concurrency: 4, min: 0, max: 0 });
    p.trip(1);
    p.job(0.001);
    assert.equal(p.size, 0);
  });
});

describe("prefetch option", () => {
  for (const bad of [-1, 1.5]) {
    it(`rejects prefetch ${bad} with a message naming it`, () => {
      assert.throws(
        () =>
          createWorker({
            transport: {} as Transport,
            jobs: [],
            capsules: { main: { queues: ["default"], prefetch: bad } },
            handleSignals: false,
          }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message ===
            `Cannot create capsule 'main' as 'prefetch' must be a whole number >= 0: current value is ${bad}`,
      );
    });
  }
});

/** Wraps a transport to watch its fetch scripts: how many, how many at once, and how many jobs they asked for at once. */
function watchFetches(inner: Transport) {
  const seen = { calls: 0, inFlight: 0, peak: 0, asked: 0, peakAsked: 0 };
  const transport: Transport = {
    kind: inner.kind,
    blocking: inner.blocking,
    counters: inner.counters,
    call: (command, ...args) => inner.call(command, ...args),
    block: (command, options) => inner.block(command, options),
    pipeline: (commands, options) => inner.pipeline(commands, options),
    close: () => inner.close(),
    async script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      if (script.name !== "fetch") return inner.script(script, keys, args);
      const count = Number(args[2]); // ARGV: identity, ttl, count, ...
      seen.calls++;
      seen.peak = Math.max(seen.peak, ++seen.inFlight);
      seen.peakAsked = Math.max(seen.peakAsked, seen.asked += count);
      try {
        return await inner.script(script, keys, args);
      } finally {
        seen.inFlight--;
        seen.asked -= count;
      }
    },
  };
  return { transport, seen };
}

/** `n` no-op jobs queued, and how many have run. */
async function backlog(redis: Transport, n: number) {
  const state = { done: 0 };
  const Quick = defineJob({
    name: "Quick",
    perform() {
      state.done++;
    },
  });
  await createClient({ transport: redis }).pushBulk(Quick, Array.from({ length: n }, () => []));
  return { Quick, state };
}

eachTarget("fetching", (t) => {
  it("drains a backlog in batches, never more than two fetches on their way", async () => {
    const { Quick, state } = await backlog(t.redis, 2000);
    const { transport, seen } = watchFetches(t.redis);
    t.worker = testWorker(transport, { jobs: [Quick], concurrency: 4 });
    await t.worker.run();
    await waitFor(() => state.done === 2000, "2,000 jobs");
    await t.worker.stop();
    assert.ok(seen.peak <= 2, `at most two fetches at once (saw ${seen.peak})`);
    assert.ok(seen.calls <= 2000 / 4, `batches of 4 or more on average (${seen.calls} fetches for 2,000 jobs)`);
    assert.equal(await heldCount(t.redis, t.worker.identity), 0, "every job acked");
    if (t.target.name !== "memory") {
      // Over a socket a round trip takes far longer than a no-op job, so the
      // default prefetch grows past its floor of 2 x concurrency.
      assert.ok(seen.peakAsked > 4 + 8, `prefetch grew: asked for ${seen.peakAsked} at once`);
    }
  });

  it("does not ask again while a job runs and the queue is empty", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const Long = defineJob({
      name: "Long",
      async perform() {
        started++;
        await gate;
      },
    });
    await createClient({ transport: t.redis }).push(Long, []);
    const { transport, seen } = watchFetches(t.redis);
    // One slot, busy: no processor is waiting, so nothing should poll.
    t.worker = testWorker(transport, { jobs: [Long], concurrency: 1 });
    await t.worker.run();
    await waitFor(() => started === 1, "the job started");
    await waitFor(() => seen.inFlight === 0, "fetches settled");
    const before = seen.calls;
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(seen.calls - before <= 1, `fetches while busy and empty: ${seen.calls - before}`);
    release();
    await t.worker.stop();
  });

  it("drain() starts with nothing held and grows its prefetch for quick jobs over a socket", async () => {
    const { Quick, state } = await backlog(t.redis, 2000);
    const { transport, seen } = watchFetches(t.redis);
    const result = await drain({ transport, jobs: [Quick], budgetMs: 20_000, concurrency: 4 });
    assert.deepEqual([result.processed, result.remaining, state.done], [2000, 0, 2000]);
    assert.ok(seen.peak <= 2, `at most two fetches at once (saw ${seen.peak})`);
    if (t.target.name !== "memory") {
      assert.ok(seen.peakAsked > 4, `prefetch grew: asked for ${seen.peakAsked} at once`);
      assert.ok(result.commandsPerJob < 0.1, `commands per job ${result.commandsPerJob}`);
    }
  });

  it("keeps an explicit prefetch: never asks for more than concurrency + prefetch", async () => {
    const { Quick, state } = await backlog(t.redis, 300);
    const { transport, seen } = watchFetches(t.redis);
    t.worker = testWorker(transport, {
      jobs: [Quick],
      capsules: { main: { queues: ["default"], concurrency: 2, prefetch: 1 } },
    });
    await t.worker.run();
    await waitFor(() => state.done === 300, "300 jobs");
    assert.ok(seen.peakAsked <= 3, `asked for ${seen.peakAsked} at once`);
  });
});
