/**
 * Faults that once lost, stranded or duplicated jobs (issue 19), each on a
 * real redis-server where Redis behaviour matters, and in a child process
 * where the runtime's process handling matters (Node, Bun and Deno run this
 * file).
 */
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { createClient, defineJob, type Logger, silentLogger } from "../mod.ts";
import { keys } from "../src/extend.ts";
import { ReliableFetch } from "../src/server/reliable_fetch.ts";
import { Poller } from "../src/server/poller.ts";
import { parseQueues } from "../src/server/queues.ts";
import { TransportError } from "../src/transport/transport_error.ts";
import type { BlockOptions, Command, RedisArg, ScriptCall, Transport } from "../src/transport/transport.ts";
import type { Script } from "../src/transport/script.ts";
import { spawnFixture } from "./support/child.ts";
import { heldCount } from "./support/held.ts";
import { matrix, redisAvailable, waitFor } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { testWorker } from "./support/worker.ts";

const k = keys();

describe("reliability: processes", { skip: !redisAvailable() }, () => {
  const suite = suiteRedis();

  it("a worker stalled past its TTL re-registers, and a later SIGKILL loses nothing", async () => {
    await suite.redis.call("FLUSHDB");
    const SleepJob = defineJob({ name: "SleepJob", perform() {} });
    const client = createClient({ transport: suite.redis });
    const pushed = await client.pushBulk(SleepJob, Array.from({ length: 300 }, () => []));
    const child = spawnFixture("signal-worker.ts", { EDGEKIQ_TEST_URL: suite.url, JOB_MS: "40", HB: "1", TTL: "2" });
    const [, identity] = await child.waitFor(/ready (\S+)/);
    await child.waitFor(/performed \w+[\s\S]*performed \w+[\s\S]*performed \w+/);
    // A stall longer than the TTL: another process recovers what it held.
    child.signal("SIGSTOP");
    const poller = new Poller({ client, logger: silentLogger });
    let recovered = 0;
    await waitFor(async () => (recovered += (await poller.runOnce()).recovered) > 0, "recovery of the stalled worker");
    child.signal("SIGCONT");
    // It notices (its fetch finds its entry gone), beats, registers again and works on.
    await waitFor(
      async () => (await suite.redis.call("EXISTS", k.process(identity))) === 1,
      "the worker re-registered",
    );
    const before = (child.output().match(/performed/g) ?? []).length;
    await waitFor(() => (child.output().match(/performed/g) ?? []).length > before + 10, "the worker working again");
    child.signal("SIGKILL");
    await child.exited;
    assert.ok(
      await heldCount(suite.redis, identity) > 0 || Number(await suite.redis.call("LLEN", "queue:default")) > 0,
    );
    // Whatever it held after re-registering is recoverable: a survivor runs everything left.
    const ran: string[] = [];
    const Survivor = defineJob({ name: "SleepJob", perform: (ctx) => void ran.push(ctx.jid) });
    const survivor = testWorker(suite.redis, {
      jobs: [Survivor],
      poller: true,
      pollIntervalAverage: 0.3,
      pollInitialWait: 0,
    });
    await survivor.run();
    const performed = new Set([...child.output().matchAll(/performed (\w+)/g)].map((m) => m[1]));
    try {
      await waitFor(
        async () => {
          const left = Number(await suite.redis.call("LLEN", "queue:default")) + await heldCount(suite.redis, identity);
          return left === 0 && pushed.every((jid) => performed.has(jid!) || ran.includes(jid!));
        },
        "every job run",
        20_000,
      );
    } finally {
      await survivor.stop();
    }
    const lost = pushed.filter((jid) => !performed.has(jid!) && !ran.includes(jid!));
    const twice = ran.filter((jid) => performed.has(jid)).length;
    console.log(`stall + SIGKILL: pushed 300, lost ${lost.length}, run twice ${twice}`);
    assert.deepEqual(lost, []);
    // At most what was in flight at the stall and at the kill (2 running + prefetch, twice).
    assert.ok(twice <= 24, `run twice: ${twice}`);
  });

  it("hard shutdown with a job that ignores ctx.signal: the job goes back once and the process exits", async () => {
    await suite.redis.call("FLUSHDB");
    const child = spawnFixture("signal-worker.ts", { EDGEKIQ_TEST_URL: suite.url, JOB_MS: "forever", TIMEOUT: "1" });
    const [, identity] = await child.waitFor(/ready (\S+)/);
    const SleepJob = defineJob({ name: "SleepJob", perform() {} });
    const jid = await createClient({ transport: suite.redis }).push(SleepJob, []);
    await child.waitFor(new RegExp(`performing ${jid}`));
    const t0 = Date.now();
    child.signal("SIGTERM");
    const code = await child.exited;
    const seconds = (Date.now() - t0) / 1000;
    assert.equal(code, 0, child.output());
    assert.ok(seconds < 1 + 3 + 3, `exited after ${seconds} s (timeout 1 s + grace 3 s)`);
    const queued = (await suite.redis.call("LRANGE", "queue:default", 0, -1)) as string[];
    assert.deepEqual(queued.map((r) => JSON.parse(r).jid), [jid], "back on its queue, once");
    assert.equal(await heldCount(suite.redis, identity), 0);
  });

  it("buries a due scheduled entry that is not valid UTF-8 instead of re-reading it forever", async () => {
    await suite.redis.call("FLUSHDB");
    const raw = new Redis(suite.url);
    try {
      const bad = Buffer.concat([
        Buffer.from('{"class":"X","args":["'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"],"jid":"b1"}'),
      ]);
      await raw.zadd("schedule", String(Date.now() / 1000 - 1), bad);
      await raw.zadd("schedule", String(Date.now() / 1000 - 1), JSON.stringify({ class: "X", args: [], jid: "ok" }));
      const before = suite.redis.counters.commands;
      const result = await new Poller({ client: createClient({ transport: suite.redis }), logger: silentLogger })
        .runOnce();
      assert.ok(suite.redis.counters.commands - before < 10, `commands: ${suite.redis.counters.commands - before}`);
      assert.equal(result.promoted, 2);
      assert.equal(await raw.zcard("schedule"), 0);
      assert.deepEqual(await raw.zrangeBuffer("dead", "0", "-1"), [bad], "buried byte for byte");
      assert.equal(JSON.parse((await raw.rpop("queue:default"))!).jid, "ok");
    } finally {
      raw.disconnect();
    }
  });

  it("buries a queued job whose bytes are not valid UTF-8, byte for byte, and never runs it", async () => {
    await suite.redis.call("FLUSHDB");
    const raw = new Redis(suite.url);
    const seen: unknown[] = [];
    const X = defineJob({ name: "X", perform: (_ctx, arg: unknown) => void seen.push(arg) });
    const bad = (jid: string) =>
      Buffer.concat([Buffer.from('{"class":"X","args":["'), Buffer.from([0xff]), Buffer.from(`"],"jid":"${jid}"}`)]);
    const buried = async () => (await raw.zrangeBuffer("dead", "0", "-1")).map((b) => b.toString("latin1")).sort();
    try {
      // Fetched in a batch, beside a valid job whose text holds a real U+FFFD (it runs).
      await raw.lpush("queue:default", bad("b2"), JSON.stringify({ class: "X", args: ["\uFFFD real"], jid: "ok1" }));
      const worker = testWorker(suite.redis, { jobs: [X] });
      await worker.run();
      await waitFor(async () => seen.length === 1 && (await raw.zcard("dead")) === 1, "the batch settled");
      // Taken by the blocking fetch of an idle worker.
      await raw.lpush("queue:default", bad("b3"));
      await waitFor(async () => (await raw.zcard("dead")) === 2, "the blocked-for job buried");
      await raw.lpush("queue:default", JSON.stringify({ class: "X", args: ["after"], jid: "ok2" }));
      await waitFor(() => seen.length === 2, "the next job to run");
      await worker.stop();
      assert.deepEqual(seen, ["\uFFFD real", "after"], "no job ran with U+FFFD in place of its bytes");
      assert.deepEqual(await buried(), [bad("b2"), bad("b3")].map((b) => b.toString("latin1")).sort(), "byte for byte");
      assert.equal(await heldCount(suite.redis, worker.identity), 0);
      assert.equal(await raw.llen("queue:default"), 0, "not put back at stop");
      const again = testWorker(suite.redis, { jobs: [X] });
      await again.run();
      await again.stop();
      assert.equal(seen.length, 2, "not replayed");
    } finally {
      raw.disconnect();
    }
  });

  it("a failed check of a batch's bytes gives the batch back: its jobs are checked again, none is lost", async () => {
    await suite.redis.call("FLUSHDB");
    const raw = new Redis(suite.url);
    try {
      const bad = Buffer.concat([Buffer.from('{"class":"X","args":["'), Buffer.from([0xfe]), Buffer.from('"]}')]);
      await raw.lpush("queue:default", bad, JSON.stringify({ class: "X", args: [], jid: "fine" }));
      let fail = 1;
      const flaky: Transport = Object.create(suite.redis, {
        script: {
          value<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
            if (script.name === "buryInvalidUtf8" && fail-- > 0) {
              return Promise.reject(new TransportError("connection", "connection closed (test)"));
            }
            return suite.redis.script(script, keys, args);
          },
        },
      });
      const fetcher = await liveFetcher(flaky, "host:1:utf8");
      await assert.rejects(fetcher.take(10), TransportError);
      const { units } = await fetcher.take(10);
      assert.deepEqual(units.map((u) => JSON.parse(u.raw).jid), ["fine"], "taken again; the invalid one buried");
      assert.deepEqual(await raw.zrangeBuffer("dead", "0", "-1"), [bad]);
      fetcher.ack(units[0], false);
      await fetcher.flush();
      assert.equal(await heldCount(suite.redis, "host:1:utf8"), 0);
      assert.equal(await raw.llen("queue:default"), 0);
    } finally {
      raw.disconnect();
    }
  });
});

/** A job of class J with jid `jid`, as pushed. */
function job(jid: string): string {
  return JSON.stringify({ class: "J", args: [], queue: "default", jid });
}

/** A fetcher of the default queue for a process that is alive (its entry exists) and registered. */
async function liveFetcher(
  redis: Transport,
  identity: string,
  { queues = ["default"], blockSeconds = 2, logger }: { queues?: string[]; blockSeconds?: number; logger?: Logger } =
    {},
): Promise<ReliableFetch> {
  const fetcher = new ReliableFetch({
    transport: redis,
    keys: k,
    identity,
    capsule: "default",
    queues: parseQueues(queues),
    blockSeconds,
    ttl: 60,
    logger,
  });
  await redis.call("HSET", k.process(identity), "beat", 1);
  await fetcher.register();
  return fetcher;
}

for (const target of matrix(["memory", "ioredis", "bun"])) {
  describe(`reliability on ${target.name}`, () => {
    let redis: Transport;
    before(async () => {
      redis = await target.open();
    });

    it("releases a batch whose fetch reply was lost: every job runs once, nothing stays held", async () => {
      await target.flush();
      let lose = 2;
      // The script runs, then the reply is lost: what a dropped connection does.
      const lossy: Transport = {
        ...redis,
        kind: redis.kind,
        blocking: redis.blocking,
        counters: redis.counters,
        call: (c, ...a) => redis.call(c, ...a),
        pipeline: (c, o) => redis.pipeline(c, o),
        close: () => redis.close(),
        async script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
          const result = await redis.script(script, keys, args);
          if (script.name === "fetch" && Number(args[2]) > 0 && lose-- > 0) {
            throw new TransportError("connection", "Connection is closed (reply lost)");
          }
          return result;
        },
      };
      const ran: string[] = [];
      const J = defineJob({ name: "J", perform: (ctx) => void ran.push(ctx.jid) });
      const pushed = await createClient({ transport: redis }).pushBulk(J, Array.from({ length: 50 }, () => []));
      const worker = testWorker(lossy, { jobs: [J], concurrency: 5, onError: () => {} });
      await worker.run();
      await waitFor(() => ran.length >= 50, "all jobs to run");
      await worker.stop();
      assert.deepEqual([...ran].sort(), [...pushed].sort() as string[], "each exactly once");
      assert.equal(await heldCount(redis, worker.identity), 0);
      assert.equal(await redis.call("LLEN", "queue:default"), 0);
    });

    it("quiet cuts the idle blocking fetch short, and a job pushed meanwhile is not started", async () => {
      await target.flush();
      const ran: string[] = [];
      const J = defineJob({ name: "J", perform: (ctx) => void ran.push(ctx.jid) });
      // A long block: before block() was abortable, quiet waited it out.
      const worker = testWorker(redis, { jobs: [J], blockSeconds: 5, heartbeatTtl: 30 });
      await worker.run();
      await new Promise((r) => setTimeout(r, 100)); // idle: blocked in Redis
      const t0 = Date.now();
      await worker.quiet();
      const quietMs = Date.now() - t0;
      await createClient({ transport: redis }).push(J, []);
      await new Promise((r) => setTimeout(r, 200));
      await worker.stop();
      assert.ok(quietMs < 1000, `quiet took ${quietMs} ms with a 5 s block`);
      assert.deepEqual(ran, [], "nothing started after quiet");
      assert.equal(await redis.call("LLEN", "queue:default"), 1, "the job waits for another worker");
      assert.equal(await heldCount(redis, worker.identity), 0);
    });

    it("a fetch run twice (a resend after a lost reply) neither loses nor strands its first batch", async () => {
      await target.flush();
      let resend = 3;
      // The request runs, its reply is lost, and the same request runs again:
      // the caller sees only the second reply (what a blind resend does).
      const resending: Transport = Object.create(redis);
      resending.script = async (script, keys, args) => {
        const first = await redis.script(script, keys, args);
        if (script.name !== "fetch" || Number(args[2]) === 0 || resend-- <= 0) return first;
        return redis.script(script, keys, args);
      };
      const ran: string[] = [];
      const J = defineJob({ name: "J", perform: (ctx) => void ran.push(ctx.jid) });
      const pushed = await createClient({ transport: redis }).pushBulk(J, Array.from({ length: 40 }, () => []));
      const worker = testWorker(resending, { jobs: [J], concurrency: 4 });
      await worker.run();
      await waitFor(() => ran.length >= 40, "every job to run");
      await worker.stop();
      assert.deepEqual([...ran].sort(), [...pushed].sort() as string[], "each exactly once");
      assert.equal(await heldCount(redis, worker.identity), 0);
    });

    it("runs suspects (jobs that were running when their process died) one at a time", async () => {
      await target.flush();
      let running = 0, peak = 0;
      const S = defineJob({
        name: "S",
        async perform() {
          peak = Math.max(peak, ++running);
          await new Promise((r) => setTimeout(r, 20));
          running--;
        },
      });
      const suspect = (i: number) =>
        JSON.stringify({ class: "S", args: [], queue: "default", jid: `s${i}`, edgekiq_recovered: 1 });
      await redis.call("LPUSH", "queue:default", ...Array.from({ length: 5 }, (_, i) => suspect(i)));
      const worker = testWorker(redis, { jobs: [S], concurrency: 5 });
      await worker.run();
      await waitFor(async () => Number(await redis.call("LLEN", "queue:default")) === 0 && running === 0, "all run");
      await waitFor(() => worker.running().length === 0, "idle");
      await worker.stop();
      assert.equal(peak, 1);
    });

    it("writes a suspect's start before it runs and its ack before the next suspect starts", async () => {
      await target.flush();
      // A suspect whose start is not written dies uncounted if it is the pill;
      // a finished suspect whose ack waits would die held (and counted) with
      // the next one.
      const seen: Array<{ jid: string; held: number; started: number }> = [];
      const S = defineJob({
        name: "S",
        async perform(ctx) {
          seen.push({
            jid: ctx.jid,
            held: await heldCount(redis, worker.identity),
            started: Number(await redis.call("HGET", k.held(worker.identity, "default"), "#started")),
          });
        },
      });
      const suspect = (i: number) =>
        JSON.stringify({ class: "S", args: [], queue: "default", jid: `s${i}`, edgekiq_recovered: 1 });
      await redis.call("LPUSH", "queue:default", ...Array.from({ length: 3 }, (_, i) => suspect(i)));
      const worker = testWorker(redis, { jobs: [S], concurrency: 3 });
      await worker.run();
      await waitFor(() => seen.length === 3, "all run");
      await worker.stop();
      const first = seen[0].started;
      assert.deepEqual(seen, [
        { jid: "s0", held: 3, started: first },
        { jid: "s1", held: 2, started: first + 1 },
        { jid: "s2", held: 1, started: first + 2 },
      ]);
    });

    it("writes the start of a recovered job that had not started before it runs from the buffer", async () => {
      await target.flush();
      // Recovered from the prefetch of a process that died (count 0): not a
      // suspect, so it runs beside others, but it may be a pill that died
      // before its start left that process, so its start goes first here.
      const seen: Array<{ jid: string; started: number }> = [];
      const R = defineJob({
        name: "R",
        async perform(ctx) {
          const held = k.held(worker.identity, "default");
          seen.push({ jid: ctx.jid, started: Number(await redis.call("HGET", held, "#started")) });
        },
      });
      const recovered = (i: number) =>
        JSON.stringify({ class: "R", args: [], queue: "default", jid: `r${i}`, edgekiq_recovered: 0 });
      await redis.call("LPUSH", "queue:default", ...Array.from({ length: 3 }, (_, i) => recovered(i)));
      // One slot: the first starts with the fetch, the others from the buffer.
      const worker = testWorker(redis, { jobs: [R], concurrency: 1 });
      await worker.run();
      await waitFor(() => seen.length === 3, "all run");
      await worker.stop();
      const first = seen[0].started;
      assert.ok(first > 0);
      assert.deepEqual(seen.map((s) => s.started - first), [0, 1, 2], JSON.stringify(seen));
    });

    it("a fetch marks as started only the jobs that start as it arrives, never a recovered one", async () => {
      await target.flush();
      const identity = "marker:1:abcdefabcdef";
      const fetcher = await liveFetcher(redis, identity);
      const job = (jid: string, recovered?: number) =>
        JSON.stringify({ class: "J", args: [], queue: "default", jid, edgekiq_recovered: recovered });
      // Popped from the right: a, then b (recovered, so it writes its own start and may wait its turn), then c.
      await redis.call("LPUSH", "queue:default", job("a"), job("b", 1), job("c"));
      const { units } = await fetcher.take(3, 3);
      assert.deepEqual(units.map((u) => JSON.parse(u.raw).jid), ["a", "b", "c"]);
      // Had b and c been marked, a pill in b would count c (which never ran) as its neighbour.
      const held = k.held(identity, "default");
      assert.equal(Number(await redis.call("HGET", held, "#started")), units[0].token);
      // An empty fetch marks nothing.
      await fetcher.take(3, 3);
      assert.equal(Number(await redis.call("HGET", held, "#started")), units[0].token);
    });

    for (const then of [undefined, { take: 5, startNow: 0 }]) {
      it(
        `a call made while a blocking fetch waits does not strand the job that lands after it${
          then ? " (a call written behind the wait)" : ""
        }`,
        async () => {
          await target.flush();
          const fetcher = await liveFetcher(redis, "blocker:1:abcdefabcdef");
          const waiting = fetcher.block(new AbortController().signal, then);
          await new Promise((r) => setTimeout(r, 50)); // the BLMOVE is waiting in Redis
          // A call of its own while it waits (a suspect's start or ack is written at once).
          fetcher.releaseLater("some-lock", "mine");
          await fetcher.flush();
          await redis.call("LPUSH", "queue:default", job("late"));
          const { units: [unit] } = await waiting;
          assert.equal(JSON.parse(unit.raw).jid, "late");
          fetcher.ack(unit, false);
          await fetcher.flush();
          assert.equal(
            await heldCount(redis, "blocker:1:abcdefabcdef"),
            0,
            "acknowledged, not left in the landing list",
          );
        },
      );
    }

    // The memory transport answers a blocking call at once (no connection to park): it has no blockThen.
    const tcp = target.name !== "memory";

    it("takes the burst that ends a blocking wait with it, in the same round trip", { skip: !tcp }, async () => {
      await target.flush();
      const fetcher = await liveFetcher(redis, "burst:1:abcdefabcdef");
      await fetcher.take(1); // finds nothing, and has Redis load the fetch script
      const trips = redis.counters.roundTrips;
      const waiting = fetcher.block(new AbortController().signal, { take: 9, startNow: 2 });
      await new Promise((r) => setTimeout(r, 50));
      await redis.call("LPUSH", "queue:default", job("b1"), job("b2"), job("b3"), job("b4"));
      const { units, failure } = await waiting;
      assert.equal(failure, undefined);
      assert.deepEqual(units.map((u) => JSON.parse(u.raw).jid), ["b1", "b2", "b3", "b4"]);
      assert.equal(redis.counters.roundTrips - trips, 2, "the wait with its call behind it, and the push");
      assert.deepEqual(units.map((u) => u.token), [...units.map((u) => u.token)].sort((a, b) => a - b), "token order");
      // Held under this process until acknowledged; the first three (the wait's and two more) marked started.
      assert.equal(await heldCount(redis, "burst:1:abcdefabcdef"), 4);
      const held = k.held("burst:1:abcdefabcdef", "default");
      assert.equal(Number(await redis.call("HGET", held, "#started")), units[2].token);
      for (const unit of units) fetcher.ack(unit, false);
      await fetcher.flush();
      assert.equal(await heldCount(redis, "burst:1:abcdefabcdef"), 0);
      assert.equal(Number(await redis.call("LLEN", "queue:default")), 0);
    });

    it("a wait that times out or is cut short takes nothing behind it", { skip: !tcp }, async () => {
      await target.flush();
      const fetcher = await liveFetcher(redis, "burst:2:abcdefabcdef", { blockSeconds: 0.2 });
      assert.deepEqual((await fetcher.block(new AbortController().signal, { take: 9, startNow: 0 })).units, []);
      const controller = new AbortController();
      const waiting = fetcher.block(controller.signal, { take: 9, startNow: 0 });
      await new Promise((r) => setTimeout(r, 50));
      controller.abort();
      const { units, failure } = await waiting;
      assert.deepEqual([units, failure], [[], undefined]);
      assert.equal(await heldCount(redis, "burst:2:abcdefabcdef"), 0);
    });

    for (const lost of ["the call behind the wait", "the wait itself"]) {
      it(`a lost reply of ${lost} leaves no job held by nobody`, { skip: !tcp }, async () => {
        await target.flush();
        // Both run in Redis; then the reply of one is lost, as a dropped connection loses it.
        const lossy: Transport = {
          ...redis,
          async blockThen<R>(command: Command, then: ScriptCall<R>, options: BlockOptions) {
            const replies = await redis.blockThen!(command, then, options);
            await replies.after;
            const error = new TransportError("connection", "Connection is closed (reply lost)", { maybeApplied: true });
            if (lost === "the wait itself") throw error;
            return { reply: replies.reply, after: Promise.reject(error) };
          },
        };
        const fetcher = await liveFetcher(lossy, "burst:3:abcdefabcdef");
        const waiting = fetcher.block(new AbortController().signal, { take: 9, startNow: 0 }).catch((e) => e);
        await new Promise((r) => setTimeout(r, 50));
        await redis.call("LPUSH", "queue:default", job("l1"), job("l2"), job("l3"));
        const got = await waiting;
        let ran = 0;
        if (lost === "the wait itself") {
          assert.ok(got instanceof TransportError, "the wait's own failure is the call's");
        } else {
          // The job the wait took runs; the failure is reported beside it.
          assert.deepEqual(got.units.map((u: { raw: string }) => JSON.parse(u.raw).jid), ["l1"]);
          assert.ok(got.failure instanceof TransportError);
          fetcher.ack(got.units[0], false);
          ran = 1;
        }
        // The next call adopts what landed and gives back what the lost calls took.
        await fetcher.flush();
        assert.equal(await heldCount(redis, "burst:3:abcdefabcdef"), 0, "nothing left held");
        assert.equal(Number(await redis.call("LLEN", "queue:default")), 3 - ran, "the rest back on the queue");
      });
    }

    it("a call behind a wait that runs after its batch was given up puts the landed job back on its queue", {
      skip: !tcp,
    }, async () => {
      await target.flush();
      // The client gives up on the wait (its connection looked dead) while Redis still has it parked.
      let parked: Promise<unknown> | undefined;
      const halfOpen: Transport = {
        ...redis,
        blockThen<R>(command: Command, then: ScriptCall<R>, options: BlockOptions) {
          parked = redis.blockThen!(command, then, options).then((r) => r.after);
          return Promise.reject(
            new TransportError("connection", "Connection is closed (test)", { maybeApplied: true }),
          );
        },
      };
      const fetcher = await liveFetcher(halfOpen, "burst:4:abcdefabcdef");
      await fetcher.take(1);
      await assert.rejects(fetcher.block(new AbortController().signal, { take: 9, startNow: 0 }), TransportError);
      await fetcher.flush(); // gives both batches back: tombstones
      await redis.call("LPUSH", "queue:default", job("late"));
      await parked; // the wait is served now, and the call behind it runs
      assert.equal(await heldCount(redis, "burst:4:abcdefabcdef"), 0, "not held under a batch nobody runs");
      assert.deepEqual(await redis.call("LRANGE", "queue:default", 0, -1), [job("late")], "back on its queue");
    });

    it(
      "marks nothing started behind a recovered job that ends a wait (it waits its turn)",
      { skip: !tcp },
      async () => {
        await target.flush();
        const fetcher = await liveFetcher(redis, "burst:5:abcdefabcdef");
        await fetcher.take(1);
        const waiting = fetcher.block(new AbortController().signal, { take: 9, startNow: 3 });
        await new Promise((r) => setTimeout(r, 50));
        const recovered = JSON.stringify({ class: "J", args: [], queue: "default", jid: "r1", edgekiq_recovered: 1 });
        await redis.call("LPUSH", "queue:default", recovered, job("n1"), job("n2"));
        const { units } = await waiting;
        assert.deepEqual(units.map((u) => JSON.parse(u.raw).jid), ["r1", "n1", "n2"]);
        assert.equal(units[0].suspect, true);
        const held = k.held("burst:5:abcdefabcdef", "default");
        assert.equal(await redis.call("HGET", held, "#started"), null, "n1 and n2 did not start: no mark for them");
        // And the fetcher knows it: their starts go with a later call, once they do start.
        fetcher.started(units[1]);
        await fetcher.flush();
        assert.equal(Number(await redis.call("HGET", held, "#started")), units[1].token);
      },
    );

    it("a wait that ends empty does not forget a queue found broken (no new log line every wait)", {
      skip: !tcp,
    }, async () => {
      await target.flush();
      const logged: string[] = [];
      const logger = { ...silentLogger, error: (message: string) => void logged.push(message) };
      await redis.call("SET", "queue:broken", "not a list");
      const fetcher = await liveFetcher(redis, "burst:6:abcdefabcdef", {
        queues: ["default", "broken"],
        blockSeconds: 0.1,
        logger,
      });
      await fetcher.take(5);
      assert.equal(
        await fetcher.block(new AbortController().signal, { take: 4, startNow: 0 }).then((b) => b.units.length),
        0,
      );
      await fetcher.take(5);
      assert.deepEqual(logged.filter((m) => m.startsWith("queue skipped")), [
        "queue skipped: its key holds another type than a list",
      ]);
    });

    it("a call behind a wait that was never sent is not reported as a failure", { skip: !tcp }, async () => {
      await target.flush();
      const unsent: Transport = {
        ...redis,
        blockThen<R>() {
          const after = Promise.reject(new TransportError("connection", "not sent (test)", { maybeApplied: false }));
          after.catch(() => {});
          return Promise.resolve({ reply: null, after: after as Promise<R> });
        },
      };
      const fetcher = await liveFetcher(unsent, "burst:7:abcdefabcdef");
      assert.deepEqual(await fetcher.block(new AbortController().signal, { take: 9, startNow: 0 }), {
        units: [],
        alive: true,
        reregistered: false,
      });
    });

    it("the call behind a wait asked again for the queue names still takes only if a job landed", {
      skip: !tcp,
    }, async () => {
      await target.flush();
      // Two queues: the wait watches "default" (the first in turn) and times out while jobs sit on "other".
      const fetcher = await liveFetcher(redis, "burst:8:abcdefabcdef", {
        queues: ["default", "other"],
        blockSeconds: 0.3,
      });
      await fetcher.take(1);
      // Recovered by another process meanwhile: the next call must register the held hash again (-4, then a retry).
      await redis.call("HDEL", k.heldRegistry, k.held("burst:8:abcdefabcdef", "default"));
      const waiting = fetcher.block(new AbortController().signal, { take: 9, startNow: 0 });
      await new Promise((r) => setTimeout(r, 50));
      await redis.call("LPUSH", "queue:other", job("o1"), job("o2"));
      const { units } = await waiting;
      assert.deepEqual(units, [], "nothing landed: nothing taken, from any queue");
      assert.equal(Number(await redis.call("LLEN", "queue:other")), 2);
    });

    it("postpones a job no worker knows with a growing delay instead of a hot loop", async () => {
      await target.flush();
      const raw = JSON.stringify({ class: "Unknown", args: [], queue: "default", jid: "u1" });
      await redis.call("LPUSH", "queue:default", raw);
      const before = redis.counters.commands;
      const worker = testWorker(redis, { jobs: [], unknownJobs: "postpone" });
      await worker.run();
      await waitFor(async () => Number(await redis.call("ZCARD", "schedule")) === 1, "postponed");
      await new Promise((r) => setTimeout(r, 300)); // would be thousands of commands in a hot loop
      await worker.stop();
      assert.ok(redis.counters.commands - before < 40, `commands: ${redis.counters.commands - before}`);
      const [entry, score] = (await redis.call("ZRANGE", "schedule", 0, -1, "WITHSCORES")) as string[];
      assert.equal(JSON.parse(entry).edgekiq_postponed, 1);
      assert.ok(Number(score) - Date.now() / 1000 > 1, "delayed");
    });

    it("retries a job whose retry_count or failed_at another producer wrote as nonsense", async () => {
      await target.flush();
      const F = defineJob({
        name: "F",
        retryFor: 60,
        perform() {
          throw new Error("no");
        },
      });
      await redis.call(
        "LPUSH",
        "queue:default",
        JSON.stringify({ class: "F", args: [], queue: "default", jid: "f1", retry: true, retry_count: -1e300 }),
        JSON.stringify({
          class: "F",
          args: [],
          queue: "default",
          jid: "f2",
          retry: true,
          retry_for: 60,
          failed_at: "x",
        }),
      );
      const worker = testWorker(redis, { jobs: [F] });
      await worker.run();
      await waitFor(async () => Number(await redis.call("ZCARD", "retry")) === 2, "both retried");
      await worker.stop();
      const entries = (await redis.call("ZRANGE", "retry", 0, -1, "WITHSCORES")) as string[];
      for (let i = 0; i < entries.length; i += 2) {
        const job = JSON.parse(entries[i]);
        assert.ok(Number.isFinite(Number(entries[i + 1])) && Number(entries[i + 1]) < Date.now() / 1000 + 3600);
        assert.equal(job.retry_count, 0);
        assert.equal(typeof job.failed_at, "number");
      }
    });
  });
}
