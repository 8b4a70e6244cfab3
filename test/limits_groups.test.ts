/**
 * Fair groups (`push(job, args, { group })` with `flowLimits()`): grouped
 * jobs wait on their group's list and are served round-robin across the
 * groups with work (one big tenant cannot starve nine small ones: they all
 * finish first, Jain's index over backlogged groups near 1), FIFO inside a
 * group, a paused group holds nobody back, per-group concurrency, and a
 * plain queue written exactly as without the feature (Ruby reads it).
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, drain, pollOnce } from "../mod.ts";
import { FlowGroups, flowLimits } from "../src/features/mod.ts";
import { GroupMover } from "../src/features/limits/group_mover.ts";
import { keys } from "../src/keys.ts";
import { eachTarget } from "./support/targets.ts";
import { waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const k = keys();

/** Jain's fairness index of what each group got. */
const jain = (xs: number[]) => xs.reduce((a, b) => a + b, 0) ** 2 / (xs.length * xs.reduce((a, b) => a + b * b, 0));

eachTarget("fair groups", (t) => {
  it("two processes' movers keep one turn: groups another served since a move are not served again first", async () => {
    const Sync = defineJob({ name: "Sync", perform(_ctx, _g: string) {} });
    const client = createClient({ transport: t.redis, features: [flowLimits()] });
    for (const g of ["g1", "g2", "g3", "g4"]) await client.pushBulk(Sync, [[g], [g], [g]], { group: g });
    const site = { transport: t.redis, keys: k };
    const a = new GroupMover(2);
    const b = new GroupMover(2);
    const served = async (mover: GroupMover) => {
      await t.redis.call("DEL", "queue:default");
      await mover.move(site, "default");
      const raws = await t.redis.call("LRANGE", "queue:default", 0, -1) as string[];
      return raws.map((raw) => JSON.parse(raw).args[0]).sort();
    };
    assert.deepEqual(await served(a), ["g1", "g2"]);
    // B reads the turn afresh; A still knows g3 and g4 as next, from its own move.
    assert.deepEqual(await served(b), ["g3", "g4"]);
    assert.deepEqual(await served(a), ["g1", "g2"], "A served the groups whose turn it was, not g3 and g4 again");
  });

  it("an automatic depth's move names an eighth as many groups as its depth and serves them in passes", async () => {
    const Sync = defineJob({ name: "Sync", perform(_ctx, _g: string) {} });
    const client = createClient({ transport: t.redis, features: [flowLimits()] });
    for (let g = 0; g < 100; g++) {
      await client.pushBulk(Sync, Array.from({ length: 10 }, () => [`g${g}`] as [string]), { group: `g${g}` });
    }
    const mover = new GroupMover("auto");
    assert.equal(mover.candidates("default"), 7, "50 deep, 7 groups named");
    await mover.move({ transport: t.redis, keys: k }, "default");
    const raws = await t.redis.call("LRANGE", "queue:default", 0, -1) as string[];
    const order = raws.reverse().map((raw) => JSON.parse(raw).args[0] as string);
    assert.equal(order.length, 50);
    assert.deepEqual([...new Set(order)].sort(), ["g0", "g1", "g2", "g3", "g4", "g5", "g6"]);
    // Fetches take from the list's tail: each pass gives every named group one job before any gets a second.
    for (let pass = 0; pass < 7; pass++) {
      assert.equal(new Set(order.slice(pass * 7, pass * 7 + 7)).size, Math.min(7, 50 - pass * 7), `pass ${pass}`);
    }
    assert.equal(await t.redis.call("ZCARD", k.groupsReady("default")), 100, "every group keeps its work and turn");
  });

  it("a group whose last job was moved is not listed, and is served again when new work arrives", async () => {
    const Sync = defineJob({ name: "Sync", perform(_ctx, _g: string) {} });
    const client = createClient({ transport: t.redis, features: [flowLimits()] });
    const groups = new FlowGroups({ transport: t.redis, keys: k });
    await client.push(Sync, ["a1"], { group: "a" });
    const site = { transport: t.redis, keys: k };
    const mover = new GroupMover(1);
    assert.equal((await mover.move(site, "default")).moved, 1);
    assert.deepEqual(await groups.top("default"), [], "an emptied group has no backlog to show");
    await client.push(Sync, ["a2"], { group: "a" });
    await client.push(Sync, ["b1"], { group: "b" });
    await t.redis.call("DEL", "queue:default");
    assert.deepEqual((await groups.top("default")).map((g) => [g.group, g.backlog]), [["a", 1], ["b", 1]]);
    const served: string[] = [];
    for (let i = 0; i < 3; i++) {
      await mover.move(site, "default");
      const raw = await t.redis.call("LPOP", "queue:default") as string | null;
      if (raw) served.push(JSON.parse(raw).args[0]);
    }
    assert.deepEqual(served, ["a2", "b1"], "a, back in the turn, and b each served once, in turn");
    assert.equal(await t.redis.call("ZCARD", k.groupsReady("default")), 0, "both left the turn once emptied");
  });

  it("an automatic depth is 50 at rest, follows a fast take rate deeper, and comes back down when takes stop", async () => {
    const Sync = defineJob({ name: "Sync", perform(_ctx, _g: string) {} });
    const client = createClient({ transport: t.redis, features: [flowLimits()] });
    for (let g = 0; g < 10; g++) {
      await client.pushBulk(Sync, Array.from({ length: 200 }, () => [`g${g}`] as [string]), { group: `g${g}` });
    }
    const site = { transport: t.redis, keys: k };
    const mover = new GroupMover("auto");
    assert.equal(mover.target("default"), 50);
    await mover.move(site, "default");
    assert.equal(await t.redis.call("LLEN", "queue:default"), 50, "at rest a move fills the queue 50 deep");
    // 20,000 takes within a few ms: far above 1,000 jobs in the 2 ms horizon, whatever the machine's load.
    for (let i = 0; i < 20_000; i++) mover.took("default");
    await new Promise((resolve) => setTimeout(resolve, 2));
    await mover.move(site, "default");
    const deep = mover.target("default");
    assert.ok(deep > 50 && deep <= 1000, `deeper under a fast take rate: ${deep}`);
    assert.equal(await t.redis.call("LLEN", "queue:default"), deep, "the move filled the queue to the new depth");
    // No takes: each move halves the smoothed rate, and the depth follows it down to the least.
    for (let moves = 0; moves < 40 && mover.target("default") > 50; moves++) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      await mover.move(site, "default");
    }
    assert.equal(mover.target("default"), 50, "back to 50 once takes stopped");
    assert.throws(() => flowLimits({ groupLookahead: 0 }), /'groupLookahead' must be "auto" or a whole number/);
    assert.throws(() => flowLimits({ groupLookahead: "fast" as never }), /current value is "fast"/);
  });

  it("a grouped push waits on its group's list; a plain push is written as without the feature", async () => {
    const Sync = defineJob({ name: "Sync", perform(_ctx, _n: number) {} });
    const plainClient = createClient({ transport: t.redis });
    const client = createClient({ transport: t.redis, features: [flowLimits()] });
    await plainClient.push(Sync, [1]);
    await client.push(Sync, [2]);
    const [withFeature, without] = await t.redis.call("LRANGE", "queue:default", 0, -1) as string[];
    assert.deepEqual(Object.keys(JSON.parse(withFeature)).sort(), Object.keys(JSON.parse(without)).sort());
    await client.push(Sync, [3], { group: "acme" });
    await client.pushBulk(Sync, [[4], [5]], { group: "acme" });
    assert.equal(await t.redis.call("LLEN", "queue:default"), 2, "grouped jobs are not on the plain list");
    const grouped = await t.redis.call("LRANGE", k.groupJobs("default", "acme"), 0, -1) as string[];
    assert.deepEqual(grouped.map((raw) => JSON.parse(raw).args[0]).reverse(), [3, 4, 5]);
    assert.equal(JSON.parse(grouped[0]).edgekiq_group, "acme");
    assert.deepEqual(await t.redis.call("ZRANGE", k.groupsReady("default"), 0, -1), ["acme"]);
    await assert.rejects(client.push(Sync, [6], { group: "" }), /'group' must be a string/);
    await assert.rejects(
      plainClient.push(Sync, [6], { group: "acme" }),
      /'group' but no feature of this client handles it/,
    );
  });

  it("serves groups round-robin: nine small tenants finish before a big one has done a fifth; Jain's index >= 0.9", async () => {
    const done: string[] = [];
    const Work = defineJob({ name: "Work", perform: (_ctx, tenant: string, _i: number) => void done.push(tenant) });
    const limits = flowLimits({ groupLookahead: 10 });
    const client = createClient({ transport: t.redis, features: [limits] });
    await client.pushBulk(Work, Array.from({ length: 500 }, (_, i) => ["big", i]), { group: "big" });
    for (let s = 0; s < 9; s++) {
      await client.pushBulk(Work, Array.from({ length: 20 }, (_, i) => [`small${s}`, i]), { group: `small${s}` });
    }
    const worker = testWorker(t.redis, { jobs: [Work], concurrency: 5, features: [limits] });
    await worker.run();
    await waitFor(() => done.length === 680, "every job ran", 30_000);
    await worker.stop();
    const lastSmall = Math.max(...Array.from({ length: 9 }, (_, s) => done.lastIndexOf(`small${s}`)));
    const bigBefore = done.slice(0, lastSmall).filter((x) => x === "big").length;
    assert.ok(bigBefore < 100, `the big tenant had done ${bigBefore} of 500 when the small ones finished`);
    // Per window of 50 runs while every group had work: each group's share.
    const indexes: number[] = [];
    for (let w = 0; w + 50 <= lastSmall - 20; w += 50) {
      const share = ["big", ...Array.from({ length: 9 }, (_, s) => `small${s}`)].map((g) =>
        done.slice(w, w + 50).filter((x) => x === g).length
      );
      indexes.push(jain(share));
    }
    console.log(
      `fairness: big ${bigBefore}/500 done when the small finished; Jain min ${Math.min(...indexes).toFixed(3)}`,
    );
    assert.ok(
      indexes.length > 0 && Math.min(...indexes) >= 0.9,
      `Jain's index per window: ${indexes.map((j) => j.toFixed(2))}`,
    );
  });

  it("a paused group holds nobody back and keeps its jobs; resumed, it runs; FIFO inside a group", async () => {
    const done: string[] = [];
    const Work = defineJob({ name: "Work", perform: (_ctx, tag: string) => void done.push(tag) });
    const limits = flowLimits();
    const client = createClient({ transport: t.redis, features: [limits] });
    await client.pushBulk(Work, [["a1"], ["a2"], ["a3"]], { group: "a" });
    await client.pushBulk(Work, [["b1"], ["b2"]], { group: "b" });
    const { FlowGroups } = await import("../src/features/limits/flow_groups.ts");
    const groups = new FlowGroups({ transport: t.redis, keys: k });
    await groups.pause("default", "a");
    await pollOnce({ client, features: [limits] });
    await drain({ transport: t.redis, jobs: [Work], budgetMs: 10_000, concurrency: 1, features: [limits] });
    assert.deepEqual(done, ["b1", "b2"]);
    assert.equal(await t.redis.call("LLEN", k.groupJobs("default", "a")), 3);
    await groups.resume("default", "a");
    await pollOnce({ client, features: [limits] });
    await drain({ transport: t.redis, jobs: [Work], budgetMs: 10_000, concurrency: 1, features: [limits] });
    assert.deepEqual(done, ["b1", "b2", "a1", "a2", "a3"]);
  });

  it("drain() alone keeps a grouped queue fed: one poll, then one drain runs every group's jobs", async () => {
    const done: string[] = [];
    const Work = defineJob({ name: "Work", perform: (_ctx, g: string) => void done.push(g) });
    const limits = flowLimits({ groupLookahead: 8 });
    const client = createClient({ transport: t.redis, features: [limits] });
    for (let g = 0; g < 30; g++) {
      await client.pushBulk(Work, Array.from({ length: 10 }, () => [`g${g}`]), { group: `g${g}` });
    }
    await pollOnce({ client, features: [limits] });
    const result = await drain({
      transport: t.redis,
      jobs: [Work],
      budgetMs: 20_000,
      concurrency: 4,
      features: [limits],
    });
    assert.equal(done.length, 300, `ran ${done.length}; drain says ${JSON.stringify(result)}`);
    assert.equal(await t.redis.call("ZCARD", k.groupsReady("default")), 0);
    assert.deepEqual(await new FlowGroups({ transport: t.redis, keys: k }).top("default"), [], "no group is listed");
  });

  it("per-group concurrency: one group at its limit, the others run", async () => {
    let running = new Map<string, number>();
    let peak = 0;
    const done: string[] = [];
    const Work = defineJob({
      name: "Work",
      async perform(_ctx, g: string) {
        running.set(g, (running.get(g) ?? 0) + 1);
        peak = Math.max(peak, running.get(g)!);
        await new Promise((r) => setTimeout(r, 15));
        running.set(g, running.get(g)! - 1);
        done.push(g);
      },
    });
    const limits = flowLimits({ groups: { concurrency: 1 } });
    const client = createClient({ transport: t.redis, features: [limits] });
    for (const g of ["a", "b", "c"]) await client.pushBulk(Work, Array.from({ length: 4 }, () => [g]), { group: g });
    for (let round = 0; round < 40 && done.length < 12; round++) {
      await pollOnce({ client, features: [limits], now: Date.now() + 60_000 });
      await drain({ transport: t.redis, jobs: [Work], budgetMs: 10_000, concurrency: 6, features: [limits] });
    }
    running = new Map();
    assert.equal(done.length, 12);
    assert.equal(peak, 1, "never two of one group at once");
  });
}, ["memory", "ioredis", "upstash"]);

it("a drain whose jobs finish before a move lands waits for the move: no grouped job left behind", async () => {
  const { memoryTransport } = await import("../mod.ts");
  const memory = memoryTransport();
  // Moves that take 50 ms (a far Redis, an HTTP one) while the jobs themselves take no time.
  const transport = Object.create(memory, {
    script: {
      value: async (script: { name: string }, ...rest: unknown[]) => {
        if (script.name === "groupMove") await new Promise((r) => setTimeout(r, 50));
        return (memory.script as (...a: unknown[]) => unknown).call(memory, script, ...rest);
      },
    },
    // A drain runs on `withSignal(budget)`'s transport: keep it this one.
    withSignal: { value: undefined },
  });
  const done: string[] = [];
  const Work = defineJob({ name: "Work", perform: (_ctx, g: string) => void done.push(g) });
  const limits = flowLimits({ groupLookahead: 8 });
  const client = createClient({ transport, features: [limits] });
  for (let g = 0; g < 10; g++) {
    await client.pushBulk(Work, Array.from({ length: 5 }, () => [`g${g}`]), { group: `g${g}` });
  }
  await pollOnce({ client, features: [limits] });
  const result = await drain({ transport, jobs: [Work], budgetMs: 20_000, concurrency: 4, features: [limits] });
  assert.equal(done.length, 50, `ran ${done.length}; drain says ${JSON.stringify(result)}`);
});
