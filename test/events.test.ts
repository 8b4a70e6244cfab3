/**
 * Job events and results: the opt-in event stream per queue (completed,
 * retrying, dead, failed, discarded, progress), zero commands for queues
 * that do not opt in, rate-limited progress, readers on TCP (XREAD BLOCK)
 * and HTTP (polling), waitFor with kept results, and the option checks.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type AnyJob, ConfigError, createClient, defineJob, Discard, drain, type Transport } from "../mod.ts";
import {
  type JobEvent,
  jobEvents,
  JobFailedError,
  queueEvents,
  readEvents,
  readResult,
  ResultError,
  waitFor,
  WaitTimeoutError,
} from "../src/features/events/mod.ts";
import { memoryTransport } from "../src/transport/adapters/memory/memory_transport.ts";
import { ProgressThrottle } from "../src/features/events/progress_throttle.ts";
import { waitFor as until } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";

const Echo = defineJob({
  name: "Echo",
  queue: "ev",
  keepResult: { for: 60 },
  perform: (_ctx, n: number) => ({ doubled: n * 2 }),
});
const Boom = defineJob({
  name: "Boom",
  queue: "ev",
  retry: 1,
  keepResult: { for: 60 },
  perform() {
    throw new TypeError("boom");
  },
});
const Quit = defineJob({
  name: "Quit",
  queue: "ev",
  perform() {
    throw new Discard("not needed");
  },
});

const allEvents = async (client: ReturnType<typeof createClient>, queue: string) =>
  (await readEvents(client, queue, { after: "0", count: 1000 })).events;

/** Every key matching `pattern`, by SCAN. */
async function scanAll(redis: Transport, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, items] = (await redis.call("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)) as [string, string[]];
    found.push(...items);
    cursor = next;
  } while (cursor !== "0");
  return found;
}

eachTarget("job events", (t) => {
  it("writes completed, retrying, dead and discarded events for a queue that opts in, oldest first", async () => {
    const events = jobEvents({ queues: ["ev"] });
    const client = createClient({ transport: t.redis, features: [events] });
    const ok = await client.push(Echo, [21]);
    const bad = await client.push(Boom, []);
    const quit = await client.push(Quit, []);
    t.worker = testWorker(t.redis, { jobs: [Echo, Boom, Quit], queues: ["ev"], features: [events], pollMaxMs: 100 });
    await t.worker.run();
    await until(async () => (await allEvents(client, "ev")).length === 3, "three events");
    // The event is written before the outcome it announces (docs: events are durable before the ack), so the
    // retry entry may land just after the "retrying" event: wait for it.
    await until(async () => Number(await t.redis.call("ZCARD", client.keys.retry)) === 1, "the retry entry");
    const retry = ((await t.redis.call("ZRANGE", client.keys.retry, 0, 0)) as string[])[0];
    await t.redis.call("ZADD", client.keys.retry, 0, retry);
    await t.worker.poll();
    await until(async () => (await allEvents(client, "ev")).length === 4, "the dead event after the retry");
    const seen = await allEvents(client, "ev");
    const byJid = (jid: string | null) => seen.filter((e) => e.jid === jid).map((e) => e.event);
    assert.deepEqual(byJid(ok), ["completed"]);
    assert.deepEqual(byJid(bad), ["retrying", "dead"]);
    assert.deepEqual(byJid(quit), ["discarded"]);
    const completed = seen.find((e) => e.jid === ok)!;
    assert.deepEqual(completed.result, { doubled: 42 }, "a job that keeps its result carries it");
    assert.equal(completed.className, "Echo");
    assert.equal(completed.queue, "ev");
    assert.ok(Math.abs(completed.at - Date.now()) < 60_000);
    const dead = seen.find((e) => e.event === "dead")!;
    assert.deepEqual([dead.error?.className, dead.error?.message, dead.retryCount], ["TypeError", "boom", 1]);
    assert.deepEqual(
      seen.map((e) => e.id),
      [...seen.map((e) => e.id)].sort((a, b) => {
        const [am, as] = a.split("-").map(Number), [bm, bs] = b.split("-").map(Number);
        return am - bm || as - bs;
      }),
      "in stream order",
    );
    assert.deepEqual(await waitFor(client, ok!), { doubled: 42 });
    await assert.rejects(waitFor(client, bad!), (e: unknown) => e instanceof JobFailedError && e.status === "dead");
  });

  it("a job without keepResult leaves no result; a queue that does not opt in gets no event", async () => {
    const events = jobEvents({ queues: ["other"] });
    const client = createClient({ transport: t.redis, features: [events] });
    const Plain = defineJob({ name: "Plain", queue: "ev", perform: () => "value" });
    const jid = await client.push(Plain, []);
    t.worker = testWorker(t.redis, { jobs: [Plain], queues: ["ev"], features: [events], pollMaxMs: 100 });
    await t.worker.run();
    await until(
      async () => Number(await t.redis.call("LLEN", client.keys.queue("ev"))) === 0 && t.worker!.running().length === 0,
      "ran",
    );
    await t.worker.stop();
    assert.equal(await readResult(client, jid!), null);
    // SCAN, not KEYS: on the cluster target it walks every primary.
    const pre = client.keys.prefix ? `${client.keys.prefix}:` : "";
    assert.deepEqual(await scanAll(t.redis, `${pre}edgekiq:result*`), []);
    assert.deepEqual(await scanAll(t.redis, `${pre}edgekiq:events*`), []);
  });

  it("waitFor: the value, a job that died, a result too large to keep, a job that keeps none, an abort", async () => {
    const events = jobEvents({ maxResultBytes: 64 });
    const client = createClient({ transport: t.redis, features: [events] });
    const Big = defineJob({ name: "Big", queue: "ev", keepResult: { for: 60 }, perform: () => "x".repeat(100) });
    const Slow = defineJob({
      name: "Slow",
      queue: "ev",
      async perform(_ctx, ms: number) {
        await new Promise((r) => setTimeout(r, ms));
        return ms;
      },
    });
    // Started before the job runs: woken through the results stream.
    const slow = await client.push(Slow, [300], { keepResult: { for: 60 } });
    const waiting = waitFor<number>(client, slow!, { timeoutMs: 20_000 });
    const big = await client.push(Big, []);
    const plain = await client.push(Slow, [1]);
    t.worker = testWorker(t.redis, { jobs: [Big, Slow], queues: ["ev"], features: [events], pollMaxMs: 100 });
    await t.worker.run();
    assert.equal(await waiting, 300);
    await assert.rejects(
      waitFor(client, big!, { timeoutMs: 10_000 }),
      (e: unknown) => e instanceof ResultError && /102 bytes, over maxResultBytes \(64\)/.test(e.message),
    );
    await assert.rejects(
      waitFor(client, plain!, { timeoutMs: 300 }),
      (e: unknown) => e instanceof WaitTimeoutError && /pushed without keepResult/.test(e.message),
    );
    const abort = new AbortController();
    const asked = Date.now();
    const aborted = waitFor(client, "no-such-jid", { timeoutMs: 10_000, signal: abort.signal });
    abort.abort(new Error("gave up"));
    await assert.rejects(aborted, /gave up/);
    assert.ok(Date.now() - asked < 5000, "an abort ends the wait at once, not at its timeout");
  });

  it("a queue that does not opt in costs no command: counted", async () => {
    // The same jobs drained with and without the feature send exactly the same commands.
    const Q = defineJob({ name: "Q", queue: "quiet", perform: (_ctx, n: number) => n });
    const run = async (features: ReturnType<typeof jobEvents>[]) => {
      const transport = t.target.name === "memory" ? memoryTransport() : t.redis;
      await transport.call("FLUSHDB");
      const client = createClient({ transport });
      await client.pushBulk(Q, Array.from({ length: 50 }, (_, i) => [i]));
      const sent: string[] = [];
      const spy = Object.create(transport) as Transport;
      spy.call = (command, ...args) => (sent.push([command, ...args].join(" ")), transport.call(command, ...args));
      spy.pipeline = (commands, options) => (
        sent.push(...commands.map((c) => c.join(" "))), transport.pipeline(commands, options)
      );
      spy.script = (
        script,
        keys,
        args,
      ) => (sent.push(`${script.name} ${keys.join(" ")}`), transport.script(script, keys, args));
      const result = await drain({
        transport: spy,
        jobs: [Q],
        queues: ["quiet"],
        concurrency: 1,
        budgetMs: 10_000,
        features,
      });
      assert.equal(result.processed, 50);
      return sent;
    };
    const without = await run([]);
    const withEvents = await run([jobEvents({ queues: ["loud"] })]);
    assert.deepEqual(withEvents.filter((c) => /edgekiq:(events|result)|eventWrite|XADD/.test(c)), []);
    assert.equal(withEvents.length, without.length, "the same number of commands");
  });

  it("progress events are rate-limited: a tight loop writes one per interval, none after the job ends", async () => {
    const events = jobEvents({ queues: ["ev"], progressIntervalMs: 100 });
    const client = createClient({ transport: t.redis, features: [events] });
    const Loop = defineJob({
      name: "Loop",
      queue: "ev",
      async perform(ctx) {
        const end = Date.now() + 450;
        let i = 0;
        while (Date.now() < end) {
          ctx.progress({ i: i++ });
          if (i % 100 === 0) await new Promise((r) => setTimeout(r, 1));
        }
        return i;
      },
    });
    let xadds = 0;
    const spy = Object.create(t.redis) as Transport;
    spy.call = (command, ...args) => (command === "XADD" && xadds++, t.redis.call(command, ...args));
    const jid = await client.push(Loop, []);
    t.worker = testWorker(spy, { jobs: [Loop], queues: ["ev"], features: [events], pollMaxMs: 100 });
    await t.worker.run();
    await until(async () => (await allEvents(client, "ev")).some((e) => e.event === "completed"), "completed");
    await new Promise((r) => setTimeout(r, 250)); // a progress timer left armed would fire within 100 ms
    const seen = (await allEvents(client, "ev")).filter((e) => e.jid === jid);
    const progress = seen.filter((e) => e.event === "progress");
    assert.ok(progress.length >= 2 && progress.length <= 7, `${progress.length} progress events in ~450 ms at 100 ms`);
    assert.equal(xadds, progress.length, "one XADD per progress event, nothing more");
    assert.equal(seen.at(-1)!.event, "completed", "no progress after the job's end");
    assert.ok((progress.at(-1)!.progress as { i: number }).i > (progress[0].progress as { i: number }).i);
  });

  it("queueEvents follows a queue from now (XREAD BLOCK on TCP, polling over HTTP) until closed", async () => {
    const events = jobEvents({ queues: ["ev"] });
    const client = createClient({ transport: t.redis, features: [events] });
    await client.push(Echo, [1]);
    t.worker = testWorker(t.redis, { jobs: [Echo], queues: ["ev"], features: [events], pollMaxMs: 100 });
    await t.worker.run();
    await until(async () => (await allEvents(client, "ev")).length === 1, "an old event");
    const follower = queueEvents(client, "ev", { pollMaxMs: 200 });
    const got: JobEvent[] = [];
    const reading = (async () => {
      for await (const e of follower) {
        got.push(e);
        if (got.length === 2) follower.close();
      }
    })();
    const jids = [await client.push(Echo, [2]), await client.push(Echo, [3])];
    await reading;
    assert.deepEqual(got.map((e) => [e.event, e.jid]), jids.map((j) => ["completed", j]), "only events from now");
    assert.deepEqual(got.map((e) => e.result), [{ doubled: 4 }, { doubled: 6 }]);
    // A cursor from one read goes on where it left off.
    const { events: first, cursor } = await readEvents(client, "ev", { after: "0", count: 1 });
    assert.equal(first.length, 1);
    assert.deepEqual((await readEvents(client, "ev", { after: cursor })).events.map((e) => e.jid), jids);
    assert.equal((await readEvents(client, "ev", { after: "$" })).cursor, got[1].id);
  });
}, ["memory", "ioredis", "bun", "upstash", "cluster"]);

describe("job events: options", () => {
  it("refuses bad options with errors that say what was wrong", async () => {
    assert.throws(
      () => defineJob({ name: "K", keepResult: { for: 0 }, perform() {} }),
      /Cannot define job K as 'keepResult.for' must be > 0 seconds and at most a year: current value is 0/,
    );
    assert.throws(
      () => defineJob({ name: "K", keepResult: { for: 1, forever: true } as never, perform() {} }),
      /unknown field 'forever'/,
    );
    assert.throws(() => jobEvents({ queues: ["a b"] }), ConfigError);
    assert.throws(() => jobEvents({ maxLen: 0 }), /'maxLen' must be a whole number from 1/);
    const client = createClient({ transport: memoryTransport() });
    await assert.rejects(
      client.push(Echo, [1]),
      /sets 'keepResult' but no feature of this client handles it: add jobEvents\(\) to createClient\(\{ features \}\)/,
    );
    const withEvents = createClient({ transport: memoryTransport(), features: [jobEvents()] });
    await assert.rejects(withEvents.push(Echo, [1], { keepResult: { for: -1 } }), /'keepResult.for' must be > 0/);
    await assert.rejects(waitFor(withEvents, "", {}), /its jid must be a non-empty string/);
    await assert.rejects(waitFor(withEvents, "x", { timeoutMs: 0 }), /'timeoutMs' must be > 0/);
    await assert.rejects(
      readEvents(withEvents, "ev", { after: "nope" }),
      /the cursor must be "\$", "0" or an event ID/,
    );
    const jid = await withEvents.push(Echo, [1], { keepResult: false });
    const raw = JSON.parse(((await withEvents.transport.call("LRANGE", "queue:ev", 0, -1)) as string[])[0]);
    assert.equal(raw.jid, jid);
    assert.equal(raw.edgekiq_result, undefined, "keepResult: false keeps nothing");
    void (Echo as AnyJob);
  });

  it("the progress throttle keeps the newest value and drops it when the job ends", async () => {
    const written: unknown[] = [];
    const throttle = new ProgressThrottle(50, (r) => written.push(r.value));
    const report = (value: unknown) =>
      throttle.report({ payload: { class: "J", args: [], jid: "j1", queue: "ev" }, value, context: {} as never });
    report(1);
    report(2);
    report(3);
    assert.deepEqual(written, [1]);
    await new Promise((r) => setTimeout(r, 80));
    assert.deepEqual(written, [1, 3], "the newest, once the interval is up");
    await new Promise((r) => setTimeout(r, 120)); // an interval after the last write: the next is written at once
    report(4);
    report(5);
    throttle.end("j1");
    await new Promise((r) => setTimeout(r, 80));
    assert.deepEqual(written, [1, 3, 4], "5 was still waiting when the job ended: dropped");
    assert.equal(throttle.size, 0);
  });
});
