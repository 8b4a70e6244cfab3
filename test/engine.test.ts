import { beforeEach, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  type AnyJob,
  createClient,
  currentJob,
  defineJob,
  Discard,
  type Feature,
  Interrupt,
  type JobPayload,
  type Logger,
  silentLogger,
  type Transport,
} from "../mod.ts";
import { Metrics } from "../src/features/metrics/metrics.ts";
import { keysFor } from "../src/keys.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { failingJob, okJob } from "./support/jobs.ts";
import { heldCount } from "./support/held.ts";
import { testWorker } from "./support/worker.ts";

eachTarget("engine", (t) => {
  // Sidekiq's key names as the target's layout spells them: unchanged, or under the cluster layout's hash tag.
  let tag = "";
  beforeEach(() => void (tag = keysFor(t.redis, {}).prefix));
  const key = (name: string) => tag ? `${tag}:${name}` : name;
  const deadEntries = async () =>
    ((await t.redis.call("ZRANGE", key("dead"), 0, -1)) as string[]).map((raw) => JSON.parse(raw) as JobPayload);
  const held = (identity: string) => heldCount(t.redis, identity);

  it("runs jobs in FIFO order within a queue", async () => {
    const seen: number[] = [];
    const Ordered = defineJob({
      name: "Ordered",
      perform(_ctx, n: number) {
        seen.push(n);
      },
    });
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Ordered, Array.from({ length: 50 }, (_, i) => [i]));
    t.worker = testWorker(t.redis, { jobs: [Ordered], concurrency: 1 });
    await t.worker.run();
    await waitFor(() => seen.length === 50, "50 jobs");
    assert.deepEqual(seen, Array.from({ length: 50 }, (_, i) => i));
  });

  // Jobs 1, 2 and 3 each queue a microtask as they are handled: it must run before the next job starts. A slot that
  // handled its buffered jobs back to back, without a turn between them, starved the feeder's loop (its fetch ahead).
  const turnsBetween = async (job: AnyJob, log: string[], features: Feature[] = []) => {
    await createClient({ transport: t.redis }).pushBulk(job, [[1], [2], [3]]);
    t.worker = testWorker(t.redis, { jobs: [job], concurrency: 1, features });
    await t.worker.run();
    await waitFor(() => log.length === 6, "3 jobs and their microtasks");
    assert.deepEqual(log, ["job 1", "after 1", "job 2", "after 2", "job 3", "after 3"]);
  };
  const handled = (log: string[], n: unknown) => {
    log.push(`job ${n}`);
    queueMicrotask(() => log.push(`after ${n}`));
  };

  it("yields between synchronous jobs, so the rest of the process (the feeder's fetch ahead) runs between them", async () => {
    const log: string[] = [];
    await turnsBetween(defineJob({ name: "Sync", perform: (_ctx, n: number) => handled(log, n) }), log);
  });

  it("gives the loop a turn after a job a receive hook ended at once, as after a job that ran", async () => {
    const log: string[] = [];
    const expire: Feature = {
      name: "expire",
      receive(payload) {
        handled(log, payload.args[0]);
        throw new Discard("expired");
      },
    };
    await turnsBetween(defineJob({ name: "Late", perform(_ctx, _n: number) {} }), log, [expire]);
  });

  it("times a job from its perform, not from what came before it (a receive hook's wait)", async () => {
    const times: number[] = [];
    const slowGate: Feature = {
      name: "slow-gate",
      receive: () => new Promise((resolve) => setTimeout(resolve, 80)),
      observe: (o) => void times.push(o.ms),
    };
    const Quick = defineJob({ name: "Quick", perform() {} });
    const Fails = defineJob({ name: "Fails", retry: 1, perform: () => Promise.reject(new Error("no")) });
    const client = createClient({ transport: t.redis });
    await client.push(Quick, []);
    await client.push(Fails, []);
    t.worker = testWorker(t.redis, { jobs: [Quick, Fails], features: [slowGate] });
    await t.worker.run();
    await waitFor(() => times.length === 2, "both outcomes observed");
    assert.ok(times.every((ms) => ms < 60), `perform's own time, not the hook's 80 ms wait: ${times.join(", ")}`);
  });

  it("a logger that throws at a job's start is the engine's error: the job is neither failed nor retried", async () => {
    const errors: Array<Record<string, unknown>> = [];
    const throwing: Logger = {
      ...silentLogger,
      info(message) {
        if (message === "start") throw new Error("log sink down");
      },
      child: () => throwing,
    };
    let ran = 0;
    const Never = defineJob({ name: "Never", perform: () => void ran++ });
    await createClient({ transport: t.redis }).push(Never, []);
    t.worker = testWorker(t.redis, {
      jobs: [Never],
      logger: throwing,
      jobLogging: true,
      onError: (_error, context) => void errors.push(context),
    });
    await t.worker.run();
    await waitFor(() => errors.some((c) => c.context === "processor"), "the engine's error reported");
    assert.equal(ran, 0, "perform never ran");
    assert.equal(await t.redis.call("ZCARD", key("retry")), 0, "no retry entry for a job that never ran");
    assert.equal(await held(t.worker.identity), 1, "it stays held, for the release at stop or recovery to give back");
  });

  it("never runs more than `concurrency` jobs at once, and passes ctx", async () => {
    let running = 0, peak = 0, done = 0;
    const ctxs: Array<{ jid: string; queue: string; retryCount: number; aborted: boolean }> = [];
    const Slow = defineJob({
      name: "Slow",
      async perform(ctx) {
        ctxs.push({ jid: ctx.jid, queue: ctx.queue, retryCount: ctx.retryCount, aborted: ctx.signal.aborted });
        peak = Math.max(peak, ++running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        done++;
      },
    });
    const jids = await createClient({ transport: t.redis }).pushBulk(Slow, Array.from({ length: 60 }, () => []));
    t.worker = testWorker(t.redis, { jobs: [Slow], concurrency: 4 });
    await t.worker.run();
    await waitFor(() => done === 60, "60 jobs");
    assert.ok(peak <= 4, `peak ${peak} <= 4`);
    assert.equal(peak, 4, "the slots were all used");
    assert.deepEqual(new Set(ctxs.map((c) => c.jid)), new Set(jids));
    assert.ok(ctxs.every((c) => c.queue === "default" && c.retryCount === 0 && !c.aborted));
    await t.worker.stop();
    assert.equal(await held(t.worker.identity), 0, "every job acked");
  });

  it("serves weighted queues in proportion to their weights", async () => {
    const counts: Record<string, number> = { high: 0, low: 0 };
    const firsts: string[] = [];
    const W = defineJob({
      name: "W",
      perform(ctx) {
        firsts.push(ctx.queue);
        counts[ctx.queue]++;
      },
    });
    const client = createClient({ transport: t.redis });
    await client.pushBulk(W, Array.from({ length: 600 }, () => []), { queue: "high" });
    await client.pushBulk(W, Array.from({ length: 600 }, () => []), { queue: "low" });
    // prefetch 0 and concurrency 1: every fetch takes one job from the first queue of a fresh weighted order.
    t.worker = testWorker(t.redis, {
      jobs: [W],
      capsules: { main: { queues: ["high,3", "low,1"], concurrency: 1, prefetch: 0 } },
    });
    await t.worker.run();
    await waitFor(() => firsts.length >= 400, "400 jobs");
    await t.worker.stop();
    const sample = firsts.slice(0, 400);
    const high = sample.filter((q) => q === "high").length / sample.length;
    // Expected share of "high" first in a shuffled [h,h,h,l] is 3/4; 400 draws: sd ~ 0.022.
    assert.ok(high > 0.65 && high < 0.85, `high share ${high.toFixed(3)} ~ 0.75`);
  });

  it("retries a failure with Sidekiq's fields and delay window", async () => {
    const Fails = defineJob({
      name: "Fails",
      backtrace: 3,
      perform() {
        throw new TypeError("boom");
      },
    });
    const client = createClient({ transport: t.redis });
    const jid = await client.push(Fails, []);
    t.worker = testWorker(t.redis, { jobs: [Fails] });
    const t0 = Date.now() / 1000;
    await t.worker.run();
    const entry = await waitFor(
      async () => ((await t.redis.call("ZRANGE", key("retry"), 0, -1, "WITHSCORES")) as string[]),
      "retry entry",
    )
      .then(async () => {
        await waitFor(async () => Number(await t.redis.call("ZCARD", key("retry"))) === 1, "retry zset");
        return (await t.redis.call("ZRANGE", key("retry"), 0, -1, "WITHSCORES")) as string[];
      });
    const job = JSON.parse(entry[0]);
    assert.equal(job.jid, jid);
    assert.equal(job.retry_count, 0);
    assert.equal(job.error_class, "TypeError");
    assert.equal(job.error_message, "boom");
    assert.equal(typeof job.failed_at, "number");
    assert.equal(job.retried_at, undefined);
    assert.equal(typeof job.error_backtrace, "string");
    // count 0: 0**4 + 15 + rand(10) * 1 => 15..24 s
    const delay = Number(entry[1]) - t0;
    assert.ok(delay >= 14 && delay <= 26, `delay ${delay}`);
    await t.worker.stop();
    assert.equal(await held(t.worker.identity), 0);
  });

  it("increments retry_count and sets retried_at on later failures; exhausts to dead with death handlers", async () => {
    const deaths: string[] = [];
    const exhausted: string[] = [];
    const Fails = defineJob({
      name: "Fails",
      retry: 2,
      retriesExhausted(job) {
        exhausted.push(job.jid);
      },
      perform() {
        throw new Error("again");
      },
    });
    const client = createClient({ transport: t.redis });
    await client.push(Fails, [], { extra: { retry_count: 0, failed_at: Date.now() / 1000 - 100 } });
    await client.push(Fails, [], { extra: { retry_count: 1, failed_at: Date.now() / 1000 - 100 } });
    t.worker = testWorker(t.redis, { jobs: [Fails], deathHandlers: [(job) => void deaths.push(job.jid)] });
    await t.worker.run();
    await waitFor(
      async () => deaths.length === 1 && Number(await t.redis.call("ZCARD", key("retry"))) === 1,
      "one retry, one death",
    );
    const [retried] = ((await t.redis.call("ZRANGE", key("retry"), 0, -1)) as string[]).map((r) => JSON.parse(r));
    assert.equal(retried.retry_count, 1);
    assert.equal(typeof retried.retried_at, "number");
    const [dead] = await deadEntries();
    assert.equal(dead.retry_count, 2);
    assert.deepEqual(exhausted, [dead.jid]);
    assert.deepEqual(deaths, [dead.jid]);
  });

  it("honours retryIn verdicts, Discard, retry: false and dead: false", async () => {
    const deaths: string[] = [];
    const jobs = [
      defineJob({
        name: "Custom",
        retryIn: () => 1000,
        perform() {
          throw new Error("x");
        },
      }),
      defineJob({
        name: "Kill",
        retryIn: () => "kill",
        perform() {
          throw new Error("x");
        },
      }),
      defineJob({
        name: "DiscardIn",
        retryIn: () => "discard",
        perform() {
          throw new Error("x");
        },
      }),
      defineJob({
        name: "Thrown",
        perform() {
          throw new Discard("nope");
        },
      }),
      defineJob({
        name: "NoRetry",
        retry: false,
        perform() {
          throw new Error("x");
        },
      }),
      defineJob({
        name: "NoMorgue",
        retry: 0,
        dead: false,
        perform() {
          throw new Error("x");
        },
      }),
      defineJob({
        name: "Exhausted",
        retry: 0,
        retriesExhausted: () => "discard",
        perform() {
          throw new Error("x");
        },
      }),
    ];
    const client = createClient({ transport: t.redis });
    for (const job of jobs) await client.push(job, []);
    t.worker = testWorker(t.redis, { jobs, deathHandlers: [(job) => void deaths.push(job.class)] });
    await t.worker.run();
    await waitFor(() => deaths.length === 3, "three deaths");
    await t.worker.stop();
    assert.deepEqual(deaths.sort(), ["Kill", "NoMorgue", "NoRetry"]);
    const retry = (await t.redis.call("ZRANGE", key("retry"), 0, -1, "WITHSCORES")) as string[];
    assert.equal(JSON.parse(retry[0]).class, "Custom");
    assert.ok(Math.abs(Number(retry[1]) - (Date.now() / 1000 + 1000)) < 30);
    assert.deepEqual((await deadEntries()).map((j) => j.class), ["Kill"]);
    assert.equal(await held(t.worker.identity), 0);
  });

  it("buries bad payloads with a reason and keeps going", async () => {
    let ran = 0;
    const Typed = defineJob({
      name: "Typed",
      args: v.tuple([v.number()]),
      perform() {
        ran++;
      },
    });
    await t.redis.pipeline([
      ["SADD", key("queues"), "default"],
      [
        "LPUSH",
        key("queue:default"),
        "{not json",
        '{"args":[1],"jid":"a1","queue":"default"}',
        '{"class":"Typed","jid":"a2","queue":"default"}',
        '{"class":"Nobody","args":[],"jid":"a3","queue":"default"}',
        '{"class":"Typed","args":["x"],"jid":"a4","queue":"default","custom":7}',
        '{"class":"Typed","args":[1],"jid":"ok","queue":"default"}',
      ],
    ]);
    t.worker = testWorker(t.redis, { jobs: [Typed] });
    await t.worker.run();
    await waitFor(
      async () =>
        ran === 1 && Number(await t.redis.call("ZCARD", key("dead"))) === 4 &&
        Number(await t.redis.call("ZCARD", key("retry"))) === 1,
      "4 dead, 1 retrying, 1 ran",
    );
    const dead = await deadEntries();
    const byJid = Object.fromEntries(dead.map((j) => [j.jid, j]));
    // Unreadable payloads are kept whole as args[0] of a readable envelope.
    const wrapped = (needle: string) =>
      dead.find((j) => j.class === "Edgekiq::InvalidPayload" && String(j.args[0]).includes(needle))!;
    assert.deepEqual(wrapped("{not json").args, ["{not json"]);
    assert.match(wrapped("{not json").error_message!, /not valid JSON/);
    assert.match(wrapped('"jid":"a1"').error_message!, /'class' must be a non-empty string/);
    assert.match(wrapped('"jid":"a2"').error_message!, /'args' must be an array/);
    // A class no process here defines is Sidekiq's NameError: retried, not buried (a shared Redis's Ruby jobs).
    const [retrying] = ((await t.redis.call("ZRANGE", key("retry"), 0, -1)) as string[]).map((r) => JSON.parse(r));
    assert.equal(retrying.jid, "a3");
    assert.equal(retrying.error_class, "UnknownJobError");
    assert.match(retrying.error_message, /no job named 'Nobody'/);
    assert.equal(byJid.a4.error_class, "JobArgsError");
    assert.match(byJid.a4.error_message!, /args\[0\]/);
    assert.equal(byJid.a4.custom, 7, "unknown fields kept");
  });

  it("counts processed and failed, flushed on demand into Sidekiq's stat keys", async () => {
    const { job: Ok } = okJob();
    const Bad = failingJob();
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Ok, [[], [], []]);
    await client.push(Bad, []);
    let finished = 0;
    // Count the flush's own calls: an idle feeder's blocking fetches go on meanwhile.
    let counting = false;
    const calls: string[] = [];
    const inner = t.redis;
    const spy = Object.create(inner) as Transport;
    spy.script = (script, keys, args) => (counting && calls.push(script.name), inner.script(script, keys, args));
    spy.pipeline = (commands, options) => (counting && calls.push("pipeline"), inner.pipeline(commands, options));
    spy.call = (command, ...args) => (counting && calls.push(command), inner.call(command, ...args));
    t.worker = testWorker(spy, {
      jobs: [Ok, Bad],
      metrics: false,
      middleware: [async (_j, _p, _q, next) => {
        try {
          await next();
        } finally {
          finished++;
        }
      }],
    });
    await t.worker.run();
    await waitFor(() => finished === 4, "4 jobs");
    counting = true;
    await t.worker.flushStats();
    counting = false;
    assert.deepEqual(
      calls.filter((c) => c !== "fetch" && c !== "BLMOVE"),
      ["heartbeat"],
      "one command for all counters",
    );
    const day = new Date().toISOString().slice(0, 10);
    assert.deepEqual(
      await t.redis.call(
        "MGET",
        key("stat:processed"),
        key("stat:failed"),
        key(`stat:processed:${day}`),
        key(`stat:failed:${day}`),
      ),
      ["4", "1", "4", "1"],
    );
  });

  it("writes execution metrics per class with the heartbeat, readable by the Metrics API", async () => {
    const { job: Ok } = okJob("MetOk");
    const Bad = failingJob("MetBad");
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Ok, [[], [], []]);
    await client.push(Bad, []);
    t.worker = testWorker(t.redis, { jobs: [Ok, Bad] });
    await t.worker.run();
    const metrics = new Metrics(client);
    await waitFor(async () => {
      await t.worker!.beat();
      const { jobs } = await metrics.topJobs({ period: "1h" });
      const p = (name: string) => jobs.find((j) => j.name === name)?.totals;
      return p("MetOk")?.p === 3 && p("MetBad")?.p === 1 && p("MetBad")?.f === 1;
    }, "metrics for both classes");
  });

  for (const fetch of ["reliable", "basic"] as const) {
    it(`middleware releases locks with the next round trip (compare-and-delete), and Interrupt requeues as is (${fetch} fetch)`, async () => {
      let runs = 0;
      const Locked = defineJob({
        name: "Locked",
        perform(ctx) {
          if (ctx.jid === "interrupt-me" && runs++ === 0) throw new Interrupt("resume later");
        },
      });
      // In the worker's namespace: on a cluster a release rides its slot's ack.
      const [lockA, lockB] = [key("lock:a"), key("lock:b")];
      await t.redis.pipeline([["SET", lockA, "ja"], ["SET", lockB, "someone-else"]]);
      const client = createClient({ transport: t.redis });
      const ja = await client.push(Locked, [], { extra: { lock: lockA, owner: "ja" } });
      await client.push(Locked, [], { extra: { lock: lockB, owner: "jb" } });
      await t.redis.call(
        "LPUSH",
        key("queue:default"),
        JSON.stringify({ class: "Locked", args: [], queue: "default", jid: "interrupt-me", retry: true }),
      );
      const done: string[] = [];
      t.worker = testWorker(t.redis, {
        jobs: [Locked],
        fetch,
        middleware: [async (_job, payload, _queue, next, tools) => {
          await next();
          if (typeof payload.lock === "string") tools.releaseLater(payload.lock, String(payload.owner));
          done.push(payload.jid);
        }],
      });
      await t.worker.run();
      await waitFor(() => done.includes("interrupt-me") && done.length === 3, "all three done");
      await waitFor(async () => (await t.redis.call("EXISTS", lockA)) === 0, "lock a released");
      assert.ok(ja);
      assert.equal(await t.redis.call("GET", lockB), "someone-else", "a lock someone else holds stays");
      assert.equal(runs, 2, "interrupted once, then resumed");
      assert.equal(await t.redis.call("ZCARD", key("retry")), 0, "an interrupt is not a failure");
    });
  }

  it("makes the running job available to code deep inside perform (currentJob)", async () => {
    const seen: Array<string | undefined> = [];
    const deep = async () => {
      await new Promise((r) => setTimeout(r, 1));
      seen.push(currentJob()?.jid);
    };
    const Ctx = defineJob({
      name: "Ctx",
      async perform() {
        await deep();
      },
    });
    const jids = await createClient({ transport: t.redis }).pushBulk(Ctx, [[], [], []]);
    t.worker = testWorker(t.redis, { jobs: [Ctx], concurrency: 3 });
    await t.worker.run();
    await waitFor(() => seen.length === 3, "three jobs");
    assert.deepEqual(new Set(seen), new Set(jids), "each job sees itself, even interleaved");
    assert.equal(currentJob(), undefined, "nothing outside a job");
  });

  it("server middleware can skip a job", async () => {
    let ran = 0;
    const Skipped = defineJob({
      name: "Skipped",
      perform(_ctx, _n: number) {
        ran++;
      },
    });
    await createClient({ transport: t.redis }).pushBulk(Skipped, [[1], [2]]);
    const seen: unknown[] = [];
    t.worker = testWorker(t.redis, {
      jobs: [Skipped],
      middleware: [(_job, payload, _q, next) => {
        seen.push(payload.args[0]);
        return payload.args[0] === 1 ? undefined : next();
      }],
    });
    await t.worker.run();
    await waitFor(() => seen.length === 2 && ran === 1, "both seen, one ran");
    await t.worker.stop();
    assert.equal(await held(t.worker.identity), 0);
  });

  it("basic fetch runs jobs too (BRPOP)", async () => {
    let ran = 0;
    const B = defineJob({
      name: "B",
      perform() {
        ran++;
      },
    });
    t.worker = testWorker(t.redis, { jobs: [B], fetch: "basic" });
    await t.worker.run();
    await createClient({ transport: t.redis }).pushBulk(B, Array.from({ length: 30 }, () => []));
    await waitFor(() => ran === 30, "30 jobs");
    assert.equal(await t.redis.call("HLEN", key("edgekiq:inflight")), 0, "basic fetch registers no private lists");
  });

  it("keeps fetching after a backlog drains: later pushes run and stop returns", async () => {
    let ran = 0;
    const Quick = defineJob({
      name: "Quick",
      perform() {
        ran++;
      },
    });
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Quick, Array.from({ length: 2000 }, () => []));
    t.worker = testWorker(t.redis, { jobs: [Quick], concurrency: 10 });
    await t.worker.run();
    await waitFor(() => ran === 2000, "the backlog");
    for (let round = 0; round < 3; round++) {
      await client.pushBulk(Quick, Array.from({ length: 25 }, () => []));
      await waitFor(() => ran === 2000 + 25 * (round + 1), `round ${round} after the backlog`);
    }
    const t0 = Date.now();
    await t.worker.stop();
    assert.ok(Date.now() - t0 < 2000, "stop returns promptly");
    t.worker = undefined;
  });

  it("picks up a job pushed while idle (blocking fetch wakes)", async () => {
    let ran = 0;
    const Idle = defineJob({
      name: "Idle",
      perform() {
        ran++;
      },
    });
    t.worker = testWorker(t.redis, { jobs: [Idle], blockSeconds: 5 });
    await t.worker.run();
    await new Promise((r) => setTimeout(r, 50));
    await createClient({ transport: t.redis }).push(Idle, []);
    // Well inside the 5 s block: the blocked pop itself woke.
    await waitFor(() => ran === 1, "the idle job", 3000);
  });
  it("retries a job whose class no process here knows with Sidekiq's backoff, and buries it only after its retries", async () => {
    // On a Redis shared with Rails, a Ruby job reaching this worker must not be buried at once (Sidekiq's NameError).
    const raw = JSON.stringify({ class: "Ruby::OnlyJob", args: [1], queue: "default", jid: "ruby1", retry: 2 });
    await t.redis.call("LPUSH", key("queue:default"), raw);
    t.worker = testWorker(t.redis, { jobs: [okJob().job] });
    await t.worker.run();
    const retryEntry = async () => {
      const [entry, score] = (await t.redis.call("ZRANGE", key("retry"), 0, -1, "WITHSCORES")) as string[];
      return entry === undefined ? undefined : { entry, job: JSON.parse(entry) as JobPayload, at: Number(score) };
    };
    for (const count of [0, 1]) {
      await waitFor(async () => (await retryEntry())?.job.retry_count === count, `retry_count ${count}`);
      const { entry, job, at } = (await retryEntry())!;
      assert.equal(job.error_class, "UnknownJobError");
      assert.match(String(job.error_message), /no job named 'Ruby::OnlyJob'/);
      // Sidekiq's delay: count**4 + 15 + rand(10) * (count + 1) seconds.
      const delay = at - Date.now() / 1000;
      assert.ok(delay > count ** 4 + 15 - 2 && delay < count ** 4 + 15 + 9 * (count + 1) + 1, `delay ${delay}`);
      assert.equal(Number(await t.redis.call("ZCARD", key("dead"))), 0, "not dead while retries remain");
      // Due now: the poller puts it back on its queue and the worker meets it again.
      await t.redis.call("ZADD", key("retry"), 0, entry);
      assert.equal((await t.worker.poll()).promoted, 1);
    }
    await waitFor(async () => Number(await t.redis.call("ZCARD", key("dead"))) === 1, "dead after its retries");
    const [dead] = await deadEntries();
    assert.deepEqual([dead.jid, dead.error_class, dead.retry_count], ["ruby1", "UnknownJobError", 2]);
    assert.equal(Number(await t.redis.call("ZCARD", key("retry"))), 0);
  });

  it('with unknownJobs: "dead", buries a job whose class no process here knows at once', async () => {
    await t.redis.call(
      "LPUSH",
      key("queue:default"),
      JSON.stringify({ class: "Nobody", args: [], queue: "default", jid: "n1" }),
    );
    t.worker = testWorker(t.redis, { jobs: [], unknownJobs: "dead" });
    await t.worker.run();
    await waitFor(async () => Number(await t.redis.call("ZCARD", key("dead"))) === 1, "dead");
    assert.equal((await deadEntries())[0].error_class, "UnknownJobError");
    assert.equal(Number(await t.redis.call("ZCARD", key("retry"))), 0);
  });
}, ["memory", "ioredis", "bun", "cluster"]);
