/**
 * Limits declared on a job (`flowLimits()`): a run over a declared limit
 * is not started but put back in the `schedule` set; a concurrency slot is
 * given back with the outcome; limits per key; bad declarations refused at
 * `defineJob`. Over the transport matrix, through `drain()`.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, createClient, defineJob, drain, pollOnce } from "../mod.ts";
import { FlowLimiters, flowLimits, Limiter } from "../src/features/mod.ts";
import { keys } from "../src/keys.ts";
import { eachTarget } from "./support/targets.ts";

const k = keys();

eachTarget("declared limits", (t) => {
  it("concurrency: never more than N at once, every job runs, every slot given back", async () => {
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    const Sync = defineJob({
      name: "Sync",
      limits: [{ concurrency: 2 }],
      async perform(_ctx, n: number) {
        peak = Math.max(peak, ++running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        done.push(n);
      },
    });
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Sync, Array.from({ length: 12 }, (_, i) => [i]));
    const limits = flowLimits();
    for (let round = 0; round < 40 && done.length < 12; round++) {
      const result = await drain({
        transport: t.redis,
        jobs: [Sync],
        budgetMs: 10_000,
        concurrency: 6,
        features: [limits],
      });
      assert.equal(result.failed, 0);
      // The deferred jobs wait in the schedule set: promote them at once rather than wait for their time.
      await pollOnce({ client, now: Date.now() + 60_000 });
    }
    assert.equal(done.length, 12);
    assert.ok(peak <= 2, `peak ${peak}`);
    assert.ok(limits.counts().deferred > 0, "some runs were deferred, not failed");
    assert.equal(await t.redis.call("ZCARD", k.limiter("Sync:concurrency")), 0, "every slot given back");
    assert.equal(await t.redis.call("ZCARD", "retry"), 0);
    assert.equal(limits.holding(), 0);
  });

  it("rate: runs over it are not started but scheduled for when the window has room", async () => {
    const ran: number[] = [];
    const Mail = defineJob({
      name: "Mail",
      limits: [{ rate: 3, per: "1m" }],
      perform: (_ctx, n: number) => void ran.push(n),
    });
    await createClient({ transport: t.redis }).pushBulk(Mail, [[1], [2], [3], [4], [5]]);
    const limits = flowLimits();
    const result = await drain({
      transport: t.redis,
      jobs: [Mail],
      budgetMs: 10_000,
      concurrency: 1,
      features: [limits],
    });
    assert.equal(ran.length, 3);
    assert.deepEqual([result.failed, limits.counts().admitted, limits.counts().deferred], [0, 3, 2]);
    const scores = (await t.redis.call("ZRANGE", "schedule", 0, -1, "WITHSCORES") as string[]).filter((_, i) => i % 2);
    assert.equal(scores.length, 2);
    for (const s of scores) assert.ok(Number(s) * 1000 > Date.now() + 50_000, "when the first call leaves the window");
  });

  it("a key per tenant: one tenant at its limit does not hold back another", async () => {
    const ran: string[] = [];
    const Call = defineJob({
      name: "Call",
      limits: [{ concurrency: 1, key: ([tenant]) => String(tenant), lease: "5s" }, {
        points: 10,
        per: "1m",
        cost: ([, c]) => Number(c),
      }],
      async perform(_ctx, tenant: string, _cost: number) {
        ran.push(tenant);
        await new Promise((r) => setTimeout(r, 30));
      },
    });
    await createClient({ transport: t.redis }).pushBulk(Call, [["a", 1], ["a", 1], ["b", 1], ["b", 1], ["c", 8], [
      "d",
      1,
    ]]);
    await drain({ transport: t.redis, jobs: [Call], budgetMs: 10_000, concurrency: 5, features: [flowLimits()] });
    assert.deepEqual(
      ran.sort(),
      ["a", "b", "c"],
      "one per tenant at once; d over the shared points budget (1 + 1 + 8 of 10)",
    );
    assert.equal(await t.redis.call("ZCARD", k.limiter("Call:concurrency:a")), 0);
  });

  it("a job running past its lease keeps its slot (renewed at each half lease)", async () => {
    const log: string[] = [];
    const Long = defineJob({
      name: "Long",
      limits: [{ concurrency: 1, lease: 1 }],
      async perform(_ctx, n: number) {
        log.push(`start ${n}`);
        if (n === 1) await new Promise((r) => setTimeout(r, 2_600));
        log.push(`end ${n}`);
      },
    });
    const limits = flowLimits();
    const client = createClient({ transport: t.redis });
    await client.push(Long, [1]);
    const first = drain({ transport: t.redis, jobs: [Long], budgetMs: 10_000, concurrency: 1, features: [limits] });
    await new Promise((r) => setTimeout(r, 100));
    await client.push(Long, [2]);
    // Another process, while the first holds the slot well past its 1 s lease. (A lease of a second, not less: a
    // loaded CI machine can stall a renewal timer for a few hundred ms, and a lease that ends is rightly given away.)
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 400));
      await drain({ transport: t.redis, jobs: [Long], budgetMs: 5_000, concurrency: 1, features: [flowLimits()] });
      await pollOnce({ client, now: Date.now() + 60_000 });
    }
    await first;
    assert.deepEqual(log.slice(0, 2), ["start 1", "end 1"], "the second did not start while the first ran");
  });

  it("a slot is kept for the next job here: a few limiter calls for many jobs, every use counted, all given back", async () => {
    const Quick = defineJob({ name: "Quick", limits: [{ concurrency: 5 }], perform: (_ctx, _n: number) => {} });
    await createClient({ transport: t.redis }).pushBulk(Quick, Array.from({ length: 300 }, (_, i) => [i]));
    const limits = flowLimits();
    const before = t.redis.counters.commands;
    const result = await drain({
      transport: t.redis,
      jobs: [Quick],
      budgetMs: 20_000,
      concurrency: 5,
      features: [limits],
    });
    const commands = t.redis.counters.commands - before;
    assert.deepEqual([result.processed, result.failed, limits.counts().deferred], [300, 0, 0]);
    // A take and a release per job were 0.5 commands per job and more; kept slots ask Redis about once a second.
    assert.ok(commands < 100, `${commands} commands for 300 jobs`);
    assert.equal(await t.redis.call("ZCARD", k.limiter("Quick:concurrency")), 0, "every slot given back");
    const info = await new FlowLimiters({ transport: t.redis, keys: k }).get("Quick:concurrency");
    assert.equal(info?.use, 300, "each job's use counted, in a kept slot too");
  });

  it("a job that comes back while another job runs in the slot it took gets no second slot", async () => {
    const site = { transport: t.redis, keys: k };
    assert.equal((await Limiter.window("gate", 1, "1h").take(site)).ok, true, "the gate's one call spent");
    let release!: () => void;
    const holding = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const Gate = defineJob({
      name: "Gate",
      limits: [{ concurrency: 1, name: "one" }, { rate: 1, per: "1h", name: "gate" }],
      perform() {},
    });
    const Hold = defineJob({
      name: "Hold",
      limits: [{ concurrency: 1, name: "one" }],
      async perform() {
        started();
        await holding;
      },
    });
    const client = createClient({ transport: t.redis });
    // Gate takes the slot, the spent gate refuses it (deferred), and Hold runs in the slot Gate took.
    const gate = (await client.push(Gate, []))!;
    await client.push(Hold, []);
    const limits = flowLimits();
    const drained = drain({
      transport: t.redis,
      jobs: [Gate, Hold],
      budgetMs: 10_000,
      concurrency: 1,
      features: [limits],
    });
    await running;
    // Gate back again, as another process would run it once it is due: the slot is Hold's, not Gate's.
    const again = await Limiter.concurrent("one", 1).take(site, { holder: gate });
    release();
    await drained;
    assert.equal(limits.counts().deferred, 1);
    assert.equal(again.ok, false, "the deferred job found the slot held, by the job running in it");
  });

  it("a job with a short lease keeps its slot while one with a long lease runs beside it", async () => {
    let release!: () => void;
    const holding = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const LongLease = defineJob({ name: "LongLease", limits: [{ concurrency: 5 }], perform: () => holding });
    const ShortLease = defineJob({
      name: "ShortLease",
      limits: [{ concurrency: 1, lease: 1 }],
      async perform() {
        started();
        await new Promise((r) => setTimeout(r, 2_400));
      },
    });
    const client = createClient({ transport: t.redis });
    await client.push(LongLease, []);
    await client.push(ShortLease, []);
    const drained = drain({
      transport: t.redis,
      jobs: [LongLease, ShortLease],
      budgetMs: 10_000,
      concurrency: 2,
      features: [flowLimits()],
    });
    await running;
    // A lease of a second, renewed every quarter: a loaded machine may stall the timer a few hundred ms.
    await new Promise((r) => setTimeout(r, 1_800));
    const other = await Limiter.concurrent("ShortLease:concurrency", 1, { lease: 1 }).take({
      transport: t.redis,
      keys: k,
    }, {
      holder: "someone-else",
    });
    release();
    await drained;
    assert.equal(other.ok, false, "1.8 s into a 1 s lease, the slot is still the job's");
  });

  it("one flowLimits() serving two drains at once: the first to end leaves the other's running job its slot", async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const Slow = defineJob({
      name: "Slow",
      limits: [{ concurrency: 1, lease: 1 }],
      async perform() {
        started();
        await new Promise((r) => setTimeout(r, 2_400));
      },
    });
    const Quick = defineJob({ name: "QuickToo", limits: [{ concurrency: 5 }], perform: (_ctx, _n: number) => {} });
    const limits = flowLimits();
    const client = createClient({ transport: t.redis });
    await client.push(Slow, [], { queue: "slow" });
    const slow = drain({ transport: t.redis, jobs: [Slow], queues: ["slow"], budgetMs: 10_000, features: [limits] });
    await running;
    await client.pushBulk(Quick, [[1], [2], [3]], { queue: "quick" });
    await drain({ transport: t.redis, jobs: [Quick], queues: ["quick"], budgetMs: 5_000, features: [limits] });
    await new Promise((r) => setTimeout(r, 1_800));
    const other = await Limiter.concurrent("Slow:concurrency", 1, { lease: 1 }).take({ transport: t.redis, keys: k }, {
      holder: "someone-else",
    });
    await slow;
    assert.equal(
      other.ok,
      false,
      "the slow job's slot was neither given back nor left to lapse by the other drain's end",
    );
    assert.equal(await t.redis.call("ZCARD", k.limiter("Slow:concurrency")), 0, "given back at its own drain's end");
  });

  it("a kept slot goes back through Redis, where other processes' takes compete, at least every quarter lease", async () => {
    const Busy = defineJob({
      name: "Busy",
      limits: [{ concurrency: 1, lease: 0.4 }],
      perform: (_ctx, _n: number) => new Promise<void>((r) => setTimeout(r, 5)),
    });
    await createClient({ transport: t.redis }).pushBulk(Busy, Array.from({ length: 300 }, (_, i) => [i]));
    let over = false;
    const running = drain({
      transport: t.redis,
      jobs: [Busy],
      budgetMs: 20_000,
      concurrency: 1,
      features: [flowLimits()],
    })
      .finally(() => (over = true));
    // The holders seen in the limiter's set while the drain runs jobs back to back: a slot kept for good would show one.
    const holders = new Set<string>();
    while (!over) {
      for (const h of await t.redis.call("ZRANGE", k.limiter("Busy:concurrency"), 0, -1) as string[]) holders.add(h);
      await new Promise((r) => setTimeout(r, 10));
    }
    const result = await running;
    assert.equal(result.processed, 300);
    assert.ok(holders.size >= 3, `holders seen: ${holders.size}`);
  });
}, ["memory", "ioredis", "upstash"]);

it("refuses a bad declaration when the job is defined", () => {
  const bad = (limits: unknown) => () => defineJob({ name: "X", limits: limits as never, perform() {} });
  assert.throws(bad({ concurrency: 1 }), /'limits' must be an array/);
  assert.throws(bad([{ concurrency: 0 }]), ConfigError);
  assert.throws(bad([{ rate: 5 }]), /'limits\[0\]' is invalid.*'per'/);
  assert.throws(bad([{ rate: 5, per: "1s", lease: 3 }]), /unknown field 'lease'/);
  assert.throws(bad([{ rate: 5, concurrency: 2, per: 1 }]), /exactly one of/);
});

it("running jobs' leases are renewed by one timer: one call per quarter lease for all of them", async () => {
  const { memoryTransport } = await import("../mod.ts");
  const { testWorker } = await import("./support/worker.ts");
  const memory = memoryTransport();
  let renews = 0;
  const transport = Object.create(memory, {
    script: {
      value: (script: { name: string }, ...rest: unknown[]) => {
        if (script.name === "limiterRenew") renews++;
        return (memory.script as (...a: unknown[]) => unknown)(script, ...rest);
      },
    },
  });
  const Long = defineJob({
    name: "LongBeat",
    limits: [{ concurrency: 3, lease: 1 }],
    perform: (_ctx, _n: number) => new Promise((r) => setTimeout(r, 2_400)),
  });
  const limits = flowLimits();
  const worker = testWorker(transport, { jobs: [Long], features: [limits], concurrency: 3 });
  await worker.run();
  await createClient({ transport }).pushBulk(Long, [[1], [2], [3]]);
  const started = Date.now();
  while (limits.holding() < 3 && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 10));
  renews = 0;
  const from = Date.now();
  await new Promise((r) => setTimeout(r, 1_800));
  const other = await Limiter.concurrent("LongBeat:concurrency", 3, { lease: 1 }).take({ transport, keys: k }, {
    holder: "someone-else",
  });
  const quarters = (Date.now() - from) / 250;
  assert.equal(other.ok, false, "1.8 s into a 1 s lease, the three slots are still the jobs'");
  // A timer per job would make three calls per quarter lease.
  assert.ok(renews >= 2 && renews <= quarters + 1, `${renews} renewals in ${quarters.toFixed(1)} quarter leases`);
  await worker.stop();
});

it("a job buried after it took its slot (a later receive hook refused it) gives the slot back as a finished job does, with no beat", async () => {
  const { memoryTransport } = await import("../mod.ts");
  const { testWorker } = await import("./support/worker.ts");
  const transport = memoryTransport();
  const Guarded = defineJob({ name: "Guarded", limits: [{ concurrency: 1, lease: 60 }], perform() {} });
  const limits = flowLimits();
  // Runs after the limits took the slot, and buries the job before it runs: the limits hear of it as dead.
  const refuse = {
    name: "refuse",
    receive() {
      throw new Error("refused after the slot was taken");
    },
  };
  const worker = testWorker(transport, { jobs: [Guarded], features: [limits, refuse] });
  try {
    await worker.run();
    await createClient({ transport }).push(Guarded, []);
    const started = Date.now();
    while (await transport.call("ZCARD", "dead") === 0 && Date.now() - started < 5000) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(await transport.call("ZCARD", "dead"), 1, "the job was buried");
    assert.equal(limits.holding(), 0, "the worker no longer counts the slot as held by the job");
    // No beat: the slot is kept for a next job of this limiter at most the grace (50 ms), then given back.
    const given = Date.now();
    while (await transport.call("ZCARD", k.limiter("Guarded:concurrency")) !== 0 && Date.now() - given < 5000) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(await transport.call("ZCARD", k.limiter("Guarded:concurrency")), 0, "nor does Redis: another may run");
    assert.ok(Date.now() - given < 2000, "given back within the grace, not at a lease's end");
  } finally {
    await worker.stop();
  }
});

it("a worker or drain without flowLimits() refuses a job that declares limits, rather than ignore them", async () => {
  const { memoryTransport, createWorker } = await import("../mod.ts");
  const Limited = defineJob({ name: "Limited", limits: [{ concurrency: 1 }], perform() {} });
  const transport = memoryTransport();
  const says =
    /Cannot create worker as job .?Limited.? sets 'limits' but no feature of this worker handles it: add flowLimits\(\)/;
  assert.throws(() => createWorker({ transport, jobs: [Limited] }), says);
  await assert.rejects(
    drain({ transport, jobs: [Limited], budgetMs: 1000 }),
    (e: unknown) => e instanceof ConfigError && says.test(e.message),
  );
  // With the feature, both start.
  const worker = createWorker({ transport, jobs: [Limited], features: [flowLimits()] });
  await worker.stop();
  await drain({ transport, jobs: [Limited], budgetMs: 1000, features: [flowLimits()] });
});
