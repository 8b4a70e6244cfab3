/**
 * Iterable jobs through the real engine, on every transport: completion,
 * stopping and resuming, errors and retries, cancellation, the run-time cap.
 */
import { beforeEach, it } from "node:test";
import assert from "node:assert/strict";
import { cancelJob, createClient, drain, type JobPayload, TransportError } from "../mod.ts";
import { RetrySet } from "../src/api/mod.ts";
import { keysFor } from "../src/keys.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";
import { sleep, upTo, walker } from "./support/iterable.ts";

const run = (redis: Parameters<typeof drain>[0]["transport"], jobs: Parameters<typeof drain>[0]["jobs"]) =>
  drain({ transport: redis, jobs, budgetMs: 20_000, concurrency: 1 });

eachTarget("iterable jobs", (t) => {
  // Sidekiq's key names as the target's layout spells them: unchanged, or under the cluster layout's hash tag.
  let tag = "";
  beforeEach(() => void (tag = keysFor(t.redis, {}).prefix));
  const key = (name: string) => tag ? `${tag}:${name}` : name;
  const queued = async () =>
    ((await t.redis.call("LRANGE", key("queue:default"), 0, -1)) as string[]).map((r) => JSON.parse(r) as JobPayload);
  const state = async (jid: string) => {
    const flat = (await t.redis.call("HGETALL", key(`it-${jid}`))) as string[];
    return Object.fromEntries(flat.flatMap((_, i) => (i % 2 ? [] : [[flat[i], flat[i + 1]]])));
  };

  it("walks every item once, runs onStart, onStop and onComplete, and removes its state", async () => {
    const w = walker();
    const jid = (await w.job.performAsync(createClient({ transport: t.redis }), 5))!;
    const result = await run(t.redis, [w.job]);
    assert.deepEqual(w.seen, upTo(5));
    assert.deepEqual(w.hooks, ["start:1", "stop", "complete"]);
    assert.deepEqual([result.processed, result.failed, result.remaining], [1, 0, 0]);
    assert.equal(await t.redis.call("EXISTS", key(`it-${jid}`)), 0, "state removed on completion");
  });

  it("stops between items when the worker stops, goes back as it was, and resumes after the last item done", async () => {
    let stopped: Promise<unknown> | undefined;
    const w = walker({
      perItem(_ctx, item) {
        if (item === 2) stopped = t.worker!.stop(); // quiet: ctx.stopping aborts
      },
    });
    const raw = JSON.stringify({ class: "Walk", args: [10], queue: "default", jid: "walk1", retry: 3, retry_count: 2 });
    await t.redis.call("LPUSH", key("queue:default"), raw);
    t.worker = testWorker(t.redis, { jobs: [w.job], concurrency: 1 });
    await t.worker.run();
    await waitFor(() => stopped !== undefined, "the stop");
    await stopped;
    assert.deepEqual(w.seen, [0, 1, 2], "stopped right after the item in flight");
    assert.deepEqual(w.hooks, ["start:1", "stop"]);
    const back = (await t.redis.call("LRANGE", key("queue:default"), 0, -1)) as string[];
    assert.deepEqual(back, [raw], "the same payload: same jid, retry_count not bumped");
    assert.equal(await t.redis.call("ZCARD", key("retry")), 0, "an interruption is not a failure");
    assert.equal(await t.redis.call("GET", key("stat:failed")), null);
    const saved = await state("walk1");
    assert.deepEqual([saved.ex, saved.c], ["1", "3"], "one execution, cursor after item 2");
    assert.match(saved.rt, /^\d+\.\d+(e-\d\d)?$/, "runtime as a Ruby float");
    const ttl = Number(await t.redis.call("TTL", key("it-walk1")));
    assert.ok(ttl > 30 * 86_400 - 60 && ttl <= 30 * 86_400, `ttl ${ttl}`);

    await run(t.redis, [w.job]);
    assert.deepEqual(w.seen, upTo(10), "nothing skipped, nothing repeated");
    assert.deepEqual(w.hooks, ["start:1", "stop", "resume:2", "stop", "complete"]);
    assert.equal(await t.redis.call("EXISTS", key("it-walk1")), 0);
  });

  it("saves at once when asked to stop, so a save cut off after the item in flight repeats only that item", async () => {
    let stopped: Promise<unknown> | undefined;
    let saves = 0;
    // The save after the item in flight fails, as when a drain's budget cuts
    // its requests off; the one made when the stop began has landed.
    const flaky = new Proxy(t.redis, {
      get(target, prop, receiver) {
        if (prop !== "script") return Reflect.get(target, prop, receiver);
        return (script: { name: string }, keys: string[], args: unknown[]) => {
          if (script.name === "iterationFlush" && ++saves > 1) {
            return Promise.reject(new TransportError("connection", "cut off by the budget"));
          }
          return (target.script as (...a: unknown[]) => Promise<unknown>)(script, keys, args);
        };
      },
    });
    const w = walker({
      async perItem(_ctx, item) {
        if (item === 2) {
          stopped = t.worker!.stop();
          await sleep(30); // the item in flight outlasts the save the stop started
        }
      },
    });
    const jid = (await w.job.performAsync(createClient({ transport: t.redis }), 6))!;
    t.worker = testWorker(flaky, { jobs: [w.job], concurrency: 1 });
    await t.worker.run();
    await waitFor(() => stopped !== undefined, "the stop");
    await stopped;
    assert.equal(
      await t.redis.call("HGET", key(`it-${jid}`), "c"),
      "2",
      "saved when the stop began, before item 2 was done",
    );
    await run(t.redis, [w.job]);
    assert.deepEqual(w.seen, [0, 1, 2, 2, 3, 4, 5], "only the item in flight ran twice");
  });

  it("saves its state when an item fails, and the retry resumes at that item", async () => {
    let failures = 0;
    const w = walker({
      perItem(_ctx, item) {
        if (item === 3 && failures++ === 0) throw new Error("flaky item");
      },
    });
    const client = createClient({ transport: t.redis });
    const jid = (await w.job.performAsync(client, 6))!;
    const first = await run(t.redis, [w.job]);
    assert.equal(first.failed, 1);
    const saved = await state(jid);
    assert.deepEqual([saved.ex, saved.c], ["1", "3"], "saved at the failing item");
    const [retry] = ((await t.redis.call("ZRANGE", key("retry"), 0, -1)) as string[]).map((r) => JSON.parse(r));
    assert.equal(retry.jid, jid);
    assert.equal(retry.retry_count, 0);
    assert.equal(retry.error_message, "flaky item");
    assert.equal(await new RetrySet(client).retryAll(), 1);
    await run(t.redis, [w.job]);
    assert.deepEqual(w.seen, [0, 1, 2, 3, 3, 4, 5], "only the failed item runs again");
    assert.deepEqual(w.hooks, ["start:1", "resume:2", "stop", "complete"]);
    assert.equal(await t.redis.call("EXISTS", key(`it-${jid}`)), 0);
  });

  it("a cancel reaches a running job at its next state save: onCancel, onStop, onComplete, not re-pushed", async () => {
    const client = createClient({ transport: t.redis });
    let cancelledAt: number | undefined;
    const w = walker({
      flushInterval: 0.05,
      async perItem(ctx, item) {
        if (item === 2) cancelledAt = await cancelJob(client, ctx.jid);
        await sleep(20);
      },
    });
    const jid = (await w.job.performAsync(client, 1000))!;
    const result = await run(t.redis, [w.job]);
    assert.ok(w.seen.length >= 3 && w.seen.length < 30, `stopped soon after the cancel (${w.seen.length} items)`);
    assert.deepEqual(w.hooks, ["start:1", "cancel", "stop", "complete!"]);
    assert.ok(cancelledAt && Math.abs(cancelledAt - Date.now() / 1000) < 5, "cancel returns epoch seconds");
    assert.deepEqual([result.processed, result.failed, result.remaining], [1, 0, 0]);
    assert.equal(await t.redis.call("ZCARD", key("retry")), 0);
    assert.deepEqual(await queued(), []);
    assert.equal(await t.redis.call("EXISTS", key(`it-${jid}`)), 0, "state removed, as Sidekiq's cleanup");
  });

  it("a job cancelled before it runs does no item, and cancel keeps the first time", async () => {
    const client = createClient({ transport: t.redis });
    const w = walker();
    const jid = (await w.job.performAsync(client, 5))!;
    const at = await cancelJob(client, jid);
    assert.equal(await t.redis.call("HGET", key(`it-${jid}`), "cancelled"), String(at));
    await t.redis.call("HSET", key(`it-${jid}`), "cancelled", String(at - 100));
    assert.equal(await cancelJob(client, jid), at - 100, "a second cancel changes nothing");
    await run(t.redis, [w.job]);
    assert.deepEqual(w.seen, []);
    assert.deepEqual(w.hooks, ["start:1", "cancel", "stop", "complete!"]);
    await assert.rejects(cancelJob(client, ""), /Cannot cancel job as 'jid' must be a non-empty string/);
  });

  it("maxIterationRuntime hands the queue back between items, and the job still does every item once", async () => {
    const w = walker({ maxIterationRuntime: 0.04, perItem: () => sleep(15) });
    await w.job.performAsync(createClient({ transport: t.redis }), 12);
    await run(t.redis, [w.job]);
    assert.deepEqual(w.seen, upTo(12));
    const runs = w.hooks.filter((h) => h.startsWith("start") || h.startsWith("resume"));
    assert.ok(runs.length >= 3, `several runs: ${w.hooks.join(" ")}`);
    assert.equal(w.hooks.at(-1), "complete");
  });
}, ["memory", "ioredis", "bun", "upstash", "cluster"]);
