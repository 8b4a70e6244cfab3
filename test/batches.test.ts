/**
 * Batches and flows (issue 27): callbacks fire exactly once after every
 * job's outcome, registration is atomic (nothing completes before its
 * seal), counts are exact when an outcome is written twice, jobs reopen
 * their own batch, children nest three deep and their callbacks run in
 * their parent, death fires once and a job retried from the dead set
 * brings success, cancel skips queued jobs, unique jobs compose in one
 * atomic push, and flows run a parent once with its children's results and
 * each child's failure policy. On memory, a real redis-server and
 * @upstash/redis through the REST gateway fixture.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  BatchError,
  type Client,
  ConfigError,
  createClient,
  defineJob,
  drain,
  type JobPayload,
  pollOnce,
  silentLogger,
  type Transport,
} from "../mod.ts";
import { batchJobs } from "../src/features/batches/mod.ts";
import { uniqueJobs } from "../src/features/mod.ts";
import { DeadSet } from "../src/api/mod.ts";
import { BatchSet } from "../src/features/batches/mod.ts";
import type { Batch } from "../src/features/batches/mod.ts";
import { BATCH_OUTCOME, type ChainKeys, chainKeys, outcomeItem } from "../src/features/batches/outcome_script.ts";
import { frameWrites } from "../src/server/frame_writes.ts";
import { MAKE_FLOW } from "../src/features/batches/make_flow_script.ts";
import { EMBED_FIELD, EMBED_MAX } from "../src/features/batches/counting.ts";
import type { FeatureContext, RunningJobInfo } from "../src/server/worker_feature.ts";
import type { AnyJob } from "../src/job.ts";
import { matrix, waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const batches = batchJobs();
const unique = uniqueJobs();

/** What the jobs did, in order. */
let log: string[] = [];
/** Failures still to throw, by tag. */
let failing = new Map<string, number>();

const Work = defineJob({
  name: "Work",
  retryIn: () => 0,
  perform(_ctx, tag: string) {
    const left = failing.get(tag) ?? 0;
    if (left > 0) {
      failing.set(tag, left - 1);
      log.push(`fail ${tag}`);
      throw new Error(`${tag} failed`);
    }
    log.push(`work ${tag}`);
    return `${tag}!`;
  },
});
const Dies = defineJob({
  name: "Dies",
  retry: false,
  perform(_ctx, tag: string) {
    if ((failing.get(tag) ?? 0) > 0) {
      failing.set(tag, failing.get(tag)! - 1);
      log.push(`die ${tag}`);
      throw new Error(`${tag} died`);
    }
    log.push(`work ${tag}`);
    return tag;
  },
});
const Callback = defineJob({
  name: "Callback",
  retryIn: () => 0,
  perform(ctx, tag: string) {
    const left = failing.get(`cb:${tag}`) ?? 0;
    if (left > 0) {
      failing.set(`cb:${tag}`, left - 1);
      throw new Error(`callback ${tag} failed`);
    }
    log.push(`${batches.callback(ctx)?.event} ${tag}`);
  },
});

for (const target of matrix(["memory", "ioredis", "bun", "upstash"])) {
  describe(`batches on ${target.name}`, () => {
    let redis: Transport;
    let client: Client;
    /** Jobs defined per test (reopen and nesting need the client). */
    let extra: ReturnType<typeof defineJob>[] = [];

    /** Each batch's keys, made once as a worker does (items of one batch then share them in a call). */
    const chains = new Map<string, ChainKeys>();
    const chainOf = (bid: string) => chains.get(bid) ?? chains.set(bid, chainKeys(client.keys, bid)).get(bid)!;
    const queueLists = new Map<string, string[]>();
    /** A job's success in its batch, as the worker's outcome hook makes it. */
    const success = (bid: string, jid: string, queues = ["default"]) =>
      outcomeItem(client.keys, {
        op: "job",
        bid,
        member: jid,
        level: 1,
        callback: "",
        kind: "ok",
        info: "",
        result: "",
        now: Date.now(),
        queues: queueLists.get(queues.join()) ?? queueLists.set(queues.join(), queues).get(queues.join())!,
      }, chainOf(bid));

    /** Drains and polls until nothing is left to run. */
    async function settle(rounds = 20): Promise<void> {
      for (let i = 0; i < rounds; i++) {
        const polled = await pollOnce({ client, features: [batches] });
        const drained = await drain({
          transport: redis,
          jobs: [Work, Dies, Callback, ...extra],
          features: [batches, unique],
          budgetMs: 5000,
          logger: silentLogger,
          metrics: false,
        });
        if (drained.processed === 0 && polled.promoted === 0) return;
      }
      throw new Error("jobs still running after 20 rounds");
    }

    beforeEach(async () => {
      redis ??= await target.open();
      await target.flush();
      client = createClient({ transport: redis, features: [batches, unique] });
      log = [];
      failing = new Map();
      extra = [];
    });

    it("fires complete then success once, after every job succeeded", async () => {
      const batch = batches.open(client, {
        description: "three",
        callbacks: { complete: [Callback, ["c"]], success: [Callback, ["s"]], death: [Callback, ["d"]] },
      });
      await batch.add(async (b) => {
        await b.pushBulk(Work, [["a"], ["b"]]);
        await b.push(Work, ["c"]);
      });
      const before = await batch.status();
      assert.equal(before?.total, 3);
      assert.equal(before?.pending, 3);
      assert.equal(before?.callbacks.success.state, "waiting");
      await settle();
      assert.deepEqual(log.slice(3), ["complete c", "success s"]);
      const after = await batch.status();
      assert.equal(after?.pending, 0);
      assert.equal(after?.failures, 0);
      assert.ok(after?.succeededAt && after.completedAt);
      assert.equal(after?.callbacks.success.state, "succeeded");
      assert.equal(after?.callbacks.death.state, "waiting");
    });

    it("a worker's stop waits for outcome writes still on their way: nothing put back, every job counted once", async () => {
      const batch = batches.open(client, { callbacks: { success: [Callback, ["s"]] } });
      await batch.add((b) => b.pushBulk(Work, Array.from({ length: 40 }, (_, i) => [`w${i}`])));
      // Each outcome call's reply comes 300 ms late: jobs run ahead of their writes (eight per slot).
      const slow = new Proxy(redis, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (prop !== "script") return typeof value === "function" ? value.bind(target) : value;
          return async (script: { name: string }, keys: never, args: never) => {
            const reply = await target.script(script as never, keys, args);
            if (script.name === BATCH_OUTCOME.name) await new Promise((resolve) => setTimeout(resolve, 300));
            return reply;
          };
        },
      });
      // The callback is pushed by the last write, possibly before the stop begins: this worker may run it too.
      const worker = testWorker(slow, { jobs: [Work, Callback], features: [batches], concurrency: 5 });
      await worker.run();
      await waitFor(() => log.filter((l) => l.startsWith("work ")).length === 40, "every job performed");
      await worker.stop();
      const status = await batch.status();
      assert.equal(status?.pending, 0, "every outcome was written before the stop ended");
      const queued = (await redis.call("LRANGE", "queue:default", 0, -1) as string[]).map((raw) =>
        JSON.parse(raw).class
      );
      assert.deepEqual(queued.filter((name) => name !== "Callback"), [], "nothing was put back");
      await settle();
      assert.equal(log.filter((l) => l.startsWith("work ")).length, 40, "no job ran twice");
      assert.deepEqual(log.filter((l) => l.startsWith("success")), ["success s"]);
    });

    it("registration is atomic: jobs that finish before the seal fire nothing; the seal does", async () => {
      const batch = batches.open(client, { callbacks: { success: [Callback, ["s"]] } });
      await batch.add(async (b) => {
        await b.pushBulk(Work, [["a"], ["b"]]);
        await settle();
        assert.deepEqual(log, ["work a", "work b"], "no callback while the registration is open");
        assert.equal((await batch.status())?.openRegistrations, 1);
      });
      await settle();
      assert.deepEqual(log, ["work a", "work b", "success s"]);
    });

    it("a registration cut off (its function threw) keeps the batch open; add() again carries on and seals", async () => {
      const batch = batches.open(client, { callbacks: { success: [Callback, ["s"]] } });
      await assert.rejects(
        batch.add(async (b) => {
          await b.push(Work, ["a"]);
          throw new Error("crashed mid-registration");
        }),
        /crashed mid-registration/,
      );
      await settle();
      assert.deepEqual(log, ["work a"], "a half-registered batch never completes");
      assert.equal((await batch.status())?.openRegistrations, 1);
      await batch.add((b) => b.push(Work, ["b"]));
      await settle();
      assert.deepEqual(log, ["work a", "work b", "success s"]);
      assert.equal((await batch.status())?.total, 2);
    });

    it("a call that fails part-way (a callback queue of the wrong type) loses no other batch's count", async () => {
      // B2's complete callback goes to a queue whose key holds a string: firing it fails with WRONGTYPE.
      const b2 = batches.open(client, { callbacks: { complete: [Callback, ["c2"], { queue: "broken" }] } });
      const b1 = batches.open(client, { callbacks: { success: [Callback, ["s1"]] } });
      let j2: (string | null)[] = [];
      let j1: (string | null)[] = [];
      await b2.add(async (b) => void (j2 = await b.pushBulk(Work, [["x"]])));
      await b1.add(async (b) => void (j1 = await b.pushBulk(Work, [["y"]])));
      await redis.call("SET", "queue:broken", "not a list");
      const first = success(b2.bid, j2[0]!, ["broken"]);
      const second = success(b1.bid, j1[0]!);
      // As the settler sends them: together, and after the error, each alone.
      await assert.rejects(redis.script(BATCH_OUTCOME, ...frameWrites([first, second])), /WRONGTYPE/);
      await redis.script(BATCH_OUTCOME, ...frameWrites([second]));
      const status = await b1.status();
      assert.equal(status?.pending, 0, "B1's last job counts as done");
      const queued = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.equal(queued.filter((raw) => raw.includes('"s1"')).length, 1, "and B1's success callback was pushed once");
    });

    it("an outcome written twice (a resend, a job run again) counts once and fires once", async () => {
      const batch = batches.open(client, { callbacks: { success: [Callback, ["s"]] } });
      let jids: (string | null)[] = [];
      await batch.add(async (b) => void (jids = await b.pushBulk(Work, [["a"], ["b"]])));
      const item = (jid: string) => success(batch.bid, jid);
      const send = (jid: string) => redis.script(BATCH_OUTCOME, ...frameWrites([item(jid)]));
      await send(jids[0]!);
      await send(jids[0]!);
      assert.equal((await batch.status())?.pending, 1);
      // Two writes for the last job in one call, as the settler coalesces them (the second names the first's keys).
      await redis.script(BATCH_OUTCOME, ...frameWrites([item(jids[1]!), item(jids[1]!)]));
      await send(jids[1]!);
      const status = await batch.status();
      assert.equal(status?.pending, 0);
      const queued = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      const callbacks = queued.filter((raw) => raw.includes('"class":"Callback"'));
      assert.equal(callbacks.length, 1, "the success callback is pushed once");
      // The jobs themselves then run (at-least-once) and change nothing.
      await settle();
      assert.equal(log.filter((l) => l === "success s").length, 1);
      assert.equal((await batch.status())?.total, 2);
    });

    it("successes of one batch finishing together travel as one run of members, each counted once", async () => {
      const batch = batches.open(client, { callbacks: { success: [Callback, ["run"]] } });
      let jids: (string | null)[] = [];
      await batch.add(async (b) => void (jids = await b.pushBulk(Work, [["a"], ["b"], ["c"], ["d"]])));
      const items = jids.map((jid) => success(batch.bid, jid!));
      // The last job's success twice, as a job run again after a lost ack: it counts once.
      const [keys, args] = frameWrites([...items, items[3]]);
      // The first names the keys with its head and its jid; the other four are one run: their jids in one arg.
      assert.deepEqual(args.slice(-4), [jids[0], -1, -4, [jids[1], jids[2], jids[3], jids[3]].join("\n")]);
      await redis.script(BATCH_OUTCOME, keys, args);
      const status = await batch.status();
      assert.equal(status?.pending, 0, "every member of the run counts as done");
      assert.equal(status?.total, 4);
      const queued = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.equal(queued.filter((raw) => raw.includes('"run"')).length, 1, "and the success callback was pushed once");
    });

    it("a bulk push into a batch reads its holder and adds its queue once per call, not per job", async () => {
      const batch = batches.open(client, {});
      // Redis counts the commands scripts run; the twin (memory) and the gateway (upstash) do not say.
      const counted = target.name === "ioredis" || target.name === "bun";
      if (counted) await redis.call("CONFIG", "RESETSTAT");
      await batch.add((b) => b.pushBulk(Work, Array.from({ length: 50 }, (_, i): [string] => [`p${i}`])));
      assert.equal((await batch.status())?.total, 50);
      assert.equal(await redis.call("LLEN", "queue:default"), 50);
      if (!counted) return;
      const stats = String(await redis.call("INFO", "commandstats"));
      const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      assert.equal(calls("sadd"), 1, "the queue added to the queues set once");
      assert.ok(calls("hget") <= 2, `the holder read once (and the seal's own reads): ${calls("hget")} HGETs`);
      assert.equal(calls("hsetnx"), 50, "each job registered");
    });

    it("a flow child's success travels as its jid and its result, and its parent reads the value", async () => {
      const Parent = defineJob({
        name: "Parent",
        perform: async (ctx) => void log.push(`read ${(await batches.childResults(ctx)).map((c) => c.value).join()}`),
      });
      extra = [Parent];
      const flow = await batches.flow(client, { job: [Parent, []], children: [{ job: [Work, ["k"]] }] });
      // Its members: the child and the sealed registration (`o:...`).
      const members = (await redis.call("HKEYS", client.keys.batchJobs(flow.bid!))) as string[];
      const jid = members.find((m) => !m.startsWith("o:"))!;
      const item = outcomeItem(client.keys, {
        op: "job",
        bid: flow.bid!,
        member: jid,
        level: 1,
        callback: "",
        kind: "ok",
        info: "",
        result: '"k!"',
        now: Date.now(),
        queues: ["default"],
      }, chainOf(flow.bid!));
      assert.deepEqual(item.args, [jid, '"k!"'], "two args, not seven");
      await redis.call("LPOP", "queue:default");
      await redis.script(BATCH_OUTCOME, ...frameWrites([item]));
      await settle();
      assert.deepEqual(log, ["read k!"], "the parent ran on that outcome and read the value");
    });

    it("flow children's successes finishing together travel as one run of jids and results, each counted once", async () => {
      const Parent = defineJob({
        name: "Parent",
        perform: async (ctx) =>
          void log.push(`read ${(await batches.childResults(ctx)).map((c) => `${c.state}:${c.value}`).join()}`),
      });
      extra = [Parent];
      const flow = await batches.flow(client, {
        job: [Parent, []],
        children: ["a", "b", "c", "d"].map((tag) => ({ job: [Work, [tag]] as const })),
      });
      const queued = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      const jids = ["a", "b", "c", "d"].map((tag) => JSON.parse(queued.find((raw) => raw.includes(`["${tag}"]`))!).jid);
      await redis.call("DEL", "queue:default");
      const item = (jid: string, result: string) => ({ ...success(flow.bid!, jid), args: [jid, result] });
      // Child b failed once (state 1): its success in the run takes the general path and still keeps its result.
      const failure = { ...success(flow.bid!, jids[1]), args: ["job", jids[1], "fail", 1, "", '{"class":"E"}'] };
      await redis.script(BATCH_OUTCOME, ...frameWrites([failure]));
      const items = jids.map((jid, i) => item(jid, String(i + 1)));
      // The last child's success twice, as a job run again after a lost ack: it counts once.
      const [keys, args] = frameWrites([...items, items[3]]);
      assert.deepEqual(
        args.slice(-10),
        [jids[0], "1", -1, -4, "", [jids[1], jids[2], jids[3], jids[3]].join("\n"), "2", "3", "4", "4"],
        "the first names the keys with its jid and result; the other four are one run: jids joined, then results",
      );
      await redis.script(BATCH_OUTCOME, keys, args);
      const status = await batches.find(client, flow.bid!).status();
      assert.equal(status?.pending, 0, "every child of the run counts as done");
      assert.equal(status?.failures, 0, "the child that had failed is no longer a failure");
      await settle();
      assert.deepEqual(
        log,
        ["read succeeded:1,succeeded:2,succeeded:3,succeeded:4"],
        "the parent ran once, read each value",
      );
    });

    it("a flow of leaf children is made in one call and leaves what open, push and seal leave", async () => {
      const Parent = defineJob({
        name: "Parent",
        perform: async (ctx) => void log.push(`read ${(await batches.childResults(ctx)).map((c) => c.value).join()}`),
      });
      const Only = defineJob({ name: "Only", unique: { for: 60 }, perform: (_ctx, n: number) => n * 10 });
      extra = [Parent, Only];
      let scripts = 0;
      const spy = new Proxy(redis, {
        get(t, p) {
          const value = Reflect.get(t, p);
          if (p === "script") {
            return (...a: unknown[]) => (scripts++, (value as (...x: unknown[]) => unknown).apply(t, a));
          }
          return typeof value === "function" ? value.bind(t) : value;
        },
      });
      const spied = createClient({ transport: spy, features: [batches, unique] });
      const leaves = (options?: object) => [
        { job: [Work, ["a"], options] as const },
        { job: [Dies, ["z"], options] as const, onFailure: "ignore" as const },
        { job: [Work, ["b"], options] as const },
      ];
      const fast = await batches.flow(spied, { job: [Parent, []], children: leaves() }, { description: "one" });
      assert.equal(scripts, 1, "the batch, its members and its children in one call");
      // The same flow with push options on its children goes the way of every batch: open, push each, seal.
      const slow = await batches.flow(client, { job: [Parent, []], children: leaves({}) }, { description: "one" });
      // A unique child needs its own guard: three calls, as before.
      scripts = 0;
      await batches.flow(spied, { job: [Parent, []], children: [{ job: [Only, [1]] }] });
      assert.equal(scripts, 3, "a child whose middleware runs per job is pushed the usual way");
      const state = async (flow: { bid: string | undefined }) => {
        const bid = flow.bid!;
        const meta = (await redis.call("HGETALL", client.keys.batch(bid))) as string[];
        const fields = new Map<string, string>();
        for (let i = 0; i < meta.length; i += 2) fields.set(meta[i], meta[i + 1]);
        const members = (await redis.call("HGETALL", client.keys.batchJobs(bid))) as string[];
        const states = members.filter((_, i) => i % 2 === 0).map((m, i) => [m, members[2 * i + 1]])
          .filter(([m]) => !m.startsWith("o:")).map(([, st]) => st).sort();
        const order = JSON.parse(fields.get("order")!) as [string, string][];
        const queued = ((await redis.call("LRANGE", "queue:default", 0, -1)) as string[]).map((raw) => JSON.parse(raw))
          .filter((job) => job.bid === bid).map((job) => `${job.class}:${job.args}`).sort();
        const ttl = Number(await redis.call("PTTL", client.keys.batchJobs(bid)));
        const indexed = (await redis.call("ZSCORE", client.keys.batches, bid)) !== null;
        const parent = JSON.parse(fields.get("cb:success")!);
        return {
          counts: ["total", "count", "failures", "kids", "kpend", "holds", "flow", "desc", "tf", "exp", "cbq:success"]
            .map((f) => `${f}=${fields.get(f)}`),
          parent: [parent.class, parent.bid, parent.edgekiq_callback?.event],
          states,
          order: order.map(([jid, className]) => `${className}:${members.includes(jid)}`),
          queued,
          kept: ttl > 0 && indexed,
        };
      };
      const [one, three] = [await state(fast), await state(slow)];
      assert.deepEqual(one, three);
      assert.deepEqual(one.states, ["0", "0", "0i"]);
      assert.ok(one.counts.includes("desc=one") && one.counts.includes("total=3"));
      assert.ok(one.kept, "its keys expire and the batch is indexed");
      await settle();
      assert.deepEqual(log.filter((l) => l.startsWith("read")), ["read a!,z,b!", "read a!,z,b!", "read 10"]);
    });

    it("a flow child a unique lock kept out is read as skipped beside the others' states", async () => {
      const Parent = defineJob({
        name: "Parent",
        perform: async (ctx) =>
          void log.push(`read ${(await batches.childResults(ctx)).map((c) => `${c.state}:${c.value}`).join()}`),
      });
      const Only = defineJob({ name: "Only", unique: { for: 60 }, perform: (_ctx, n: number) => n });
      extra = [Parent, Only];
      assert.ok(await client.push(Only, [7]), "the first copy holds the lock");
      await batches.flow(client, { job: [Parent, []], children: [{ job: [Only, [7]] }, { job: [Work, ["w"]] }] });
      await settle();
      assert.deepEqual(log.filter((l) => l.startsWith("read")), ["read skipped:undefined,succeeded:w!"]);
    });

    it("the make-flow script resent (its reply lost) writes nothing twice", async () => {
      const bid = "flowresent0001";
      const keys = [client.keys.batch(bid), client.keys.batchJobs(bid), client.keys.batchFailed(bid)];
      keys.push(client.keys.batchResults(bid), client.keys.batches, client.keys.queues, client.keys.queue("default"));
      const args = [bid, Date.now(), 60_000, "s", "", "[]", 0, 1, "default", 1, "j1", '{"class":"Work","args":[]}', ""];
      assert.equal(await redis.script(MAKE_FLOW, keys, args), 1);
      assert.equal(await redis.script(MAKE_FLOW, keys, args), 0, "the second finds the batch made");
      assert.equal(await redis.call("LLEN", "queue:default"), 1);
      assert.equal(await redis.call("HGET", client.keys.batch(bid), "total"), "1");
    });

    it("a run longer than a thousand members, with one that failed before and one done, counts each once", async () => {
      const batch = batches.open(client, { callbacks: { success: [Callback, ["long"]] } });
      const args = Array.from({ length: 1203 }, (_, i): [string] => [`r${i}`]);
      let jids: string[] = [];
      await batch.add(async (b) => void (jids = (await b.pushBulk(Work, args)) as string[]));
      // One member failed once (state 1: a failure to take back) and one succeeded already (state 2: nothing to do).
      const failure = { ...success(batch.bid, jids[7]), args: ["job", jids[7], "fail", 1, "", '{"class":"E"}'] };
      await redis.script(BATCH_OUTCOME, ...frameWrites([success(batch.bid, jids[0]), failure]));
      assert.equal((await batch.status())?.failures, 1);
      const items = jids.map((jid) => success(batch.bid, jid));
      const [keys, frame] = frameWrites(items);
      assert.equal(frame.length, 2 + 5 + 1 + 3, "the head and first member, then one run of the other 1,202");
      await redis.script(BATCH_OUTCOME, keys, frame);
      const status = await batch.status();
      assert.equal(status?.pending, 0);
      assert.equal(status?.failures, 0, "the member that had failed is no longer a failure");
      assert.equal(status?.failed.length, 0);
      const queued = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.equal(queued.filter((raw) => raw.includes('"long"')).length, 1, "the success callback was pushed once");
    });

    it("complete fires once every job ran (a failure included); success after its retry succeeds", async () => {
      failing.set("b", 1);
      const batch = batches.open(client, {
        callbacks: { complete: [Callback, ["c"]], success: [Callback, ["s"]] },
      });
      await batch.add((b) => b.pushBulk(Work, [["a"], ["b"]]));
      await drain({ transport: redis, jobs: [Work, Callback], features: [batches], budgetMs: 2000, metrics: false });
      const mid = await batch.status();
      assert.equal(mid?.failures, 1);
      assert.equal(mid?.pending, 1);
      assert.equal(mid?.failed[0].job, "Work");
      assert.match(mid?.failed[0].errorMessage ?? "", /b failed/);
      assert.ok(mid?.completedAt, "complete: every job ran once");
      assert.equal(mid?.succeededAt, undefined);
      await settle();
      assert.deepEqual(log, ["work a", "fail b", "complete c", "work b", "success s"]);
      const done = await batch.status();
      assert.equal(done?.failures, 0, "a failure that later succeeded is no longer a failure");
      assert.equal(done?.failed.length, 0);
    });

    it("death fires once, on the first job that dies (dropped with retry: false counts as dead)", async () => {
      failing.set("x", 1);
      failing.set("y", 1);
      const batch = batches.open(client, {
        callbacks: { complete: [Callback, ["c"]], success: [Callback, ["s"]], death: [Callback, ["d"]] },
      });
      await batch.add((b) => b.pushBulk(Dies, [["x"], ["y"], ["z"]]));
      await settle();
      assert.equal(log.filter((l) => l === "death d").length, 1, "death once, though two jobs died");
      assert.equal(log.filter((l) => l === "complete c").length, 1);
      assert.ok(!log.includes("success s"));
      const dead = await batch.status();
      assert.equal(dead?.failures, 2);
      assert.equal(dead?.pending, 2);
      assert.ok(dead?.failed.every((f) => f.dead));
      assert.ok(dead?.diedAt);
      assert.equal(dead?.callbacks.death.state, "succeeded");
    });

    it("a job buried before it runs (its arguments fail the schema) counts as dead: death and complete fire", async () => {
      const Checked = defineJob({
        name: "Checked",
        args: v.tuple([v.number()]),
        perform: (_ctx, n: number) => void log.push(`checked ${n}`),
      });
      // The same class pushed without the schema, as another app (or an older deploy) would.
      const Unchecked = defineJob({ name: "Checked", perform(_ctx, _n: unknown) {} });
      extra = [Checked];
      const batch = batches.open(client, { callbacks: { complete: [Callback, ["c"]], death: [Callback, ["d"]] } });
      await batch.add((b) => b.pushBulk(Unchecked, [["one"], [1]]));
      await settle();
      assert.deepEqual(log.sort(), ["checked 1", "complete c", "death d"]);
      const status = await batch.status();
      assert.equal(status?.failures, 1);
      assert.equal(status?.failed[0].errorClass, "JobArgsError");
      assert.ok(status?.failed[0].dead);
      assert.ok(status?.completedAt, "the batch is not left waiting for a job that will never run");
      assert.equal(await redis.call("ZCARD", "dead"), 1);
    });

    it("a job dead in the dead set retried from it brings success (Sidekiq Pro's semantics)", async () => {
      const Fragile = defineJob({
        name: "Fragile",
        retry: 0,
        perform(_ctx, tag: string) {
          if ((failing.get(tag) ?? 0) > 0) {
            failing.set(tag, failing.get(tag)! - 1);
            throw new Error(`${tag} died`);
          }
          log.push(`work ${tag}`);
        },
      });
      extra = [Fragile];
      failing.set("f", 1);
      const batch = batches.open(client, {
        callbacks: { complete: [Callback, ["c"]], success: [Callback, ["s"]], death: [Callback, ["d"]] },
      });
      await batch.add((b) => b.pushBulk(Fragile, [["f"], ["g"]]));
      await settle();
      assert.deepEqual(log.filter((l) => !l.startsWith("work")), ["death d", "complete c"]);
      const deadSet = new DeadSet(client);
      assert.equal(await deadSet.size(), 1);
      await deadSet.retryAll();
      await settle();
      assert.deepEqual(log.filter((l) => !l.startsWith("work")), ["death d", "complete c", "success s"]);
      assert.equal((await batch.status())?.failures, 0);
    });

    it("a job reopens its own batch: success waits for the jobs it added", async () => {
      const Spawner = defineJob({
        name: "Spawner",
        async perform(ctx, n: number) {
          log.push(`spawn ${n}`);
          const own = batches.current(client, ctx)!;
          await own.add((b) => b.pushBulk(Work, Array.from({ length: n }, (_, i) => [`child${i}`])));
        },
      });
      extra = [Spawner];
      const batch = batches.open(client, { callbacks: { success: [Callback, ["s"]] } });
      await batch.add((b) => b.push(Spawner, [3]));
      await settle();
      assert.equal(log.at(-1), "success s");
      assert.equal(log.filter((l) => l.startsWith("work child")).length, 3);
      assert.equal((await batch.status())?.total, 4);
    });

    it("a job that already finished cannot add to its batch again (a re-run after SIGKILL): nothing is pushed", async () => {
      let seen: JobPayload | undefined;
      const Once = defineJob({
        name: "Once",
        perform(ctx) {
          seen = ctx.payload as JobPayload;
          log.push("once");
        },
      });
      extra = [Once];
      const batch = batches.open(client, { callbacks: { success: [Callback, ["s"]] } });
      await batch.add((b) => b.push(Once, []));
      await settle();
      const rerun = batches.current(client, { jid: seen!.jid, payload: seen!, transport: redis, keys: client.keys })!;
      let jid: string | null = "unset";
      await rerun.add(async (b) => void (jid = await b.push(Work, ["late"])));
      assert.equal(jid, null, "a finished job's push into its batch is refused");
      assert.equal((await batch.status())?.total, 1);
      assert.equal(await redis.call("LLEN", "queue:default"), 0);
    });

    it("nests three deep: each parent's success waits for its children's callbacks, which run in the parent", async () => {
      const root = batches.open(client, {
        description: "root",
        callbacks: { success: [Callback, ["root"]], complete: [Callback, ["root-c"]] },
      });
      await root.add(async (r) => {
        await r.push(Work, ["r1"]);
        const mid = r.batch({ description: "mid", callbacks: { success: [Callback, ["mid"]] } });
        await mid.add(async (m) => {
          await m.push(Work, ["m1"]);
          const leaf = m.batch({ description: "leaf", callbacks: { success: [Callback, ["leaf"]] } });
          await leaf.add((l) => l.pushBulk(Work, [["l1"], ["l2"]]));
        });
      });
      await settle();
      const order = log.filter((l) => l.startsWith("success") || l.startsWith("complete"));
      assert.deepEqual(order, ["success leaf", "success mid", "complete root-c", "success root"]);
      const status = await root.status();
      assert.equal(status?.children, 1);
      assert.equal(status?.childrenPending, 0);
      assert.equal(status?.total, 2, "r1 and mid's callback, which ran in root");
      const kids = await new BatchSet(client).children(root.bid);
      assert.equal(kids.length, 1);
      assert.equal((await new BatchSet(client).children(kids[0])).length, 1);
    });

    it("a child's failing callback holds its parent until it succeeds on retry", async () => {
      failing.set("cb:mid", 1);
      const root = batches.open(client, { callbacks: { success: [Callback, ["root"]] } });
      await root.add(async (r) => {
        const mid = r.batch({ callbacks: { success: [Callback, ["mid"]] } });
        await mid.add((m) => m.push(Work, ["m1"]));
      });
      await drain({ transport: redis, jobs: [Work, Callback], features: [batches], budgetMs: 2000, metrics: false });
      assert.deepEqual(log, ["work m1"]);
      const status = await root.status();
      assert.equal(status?.failures, 1, "the child's callback failed in the parent");
      await settle();
      assert.deepEqual(log, ["work m1", "success mid", "success root"]);
    });

    it("a callback reopens the overall batch with the next step (Sidekiq Pro's complex workflows)", async () => {
      const Step = defineJob({
        name: "Step",
        async perform(ctx, n: number) {
          log.push(`step ${n} done`);
          if (n >= 3) return;
          const overall = batches.current(client, ctx)!;
          await overall.add(async (o) => {
            const next = o.batch({ description: `step ${n + 1}`, callbacks: { success: [Step, [n + 1]] } });
            await next.add((s) => s.pushBulk(Work, [[`s${n + 1}a`], [`s${n + 1}b`]]));
          });
        },
      });
      extra = [Step];
      const overall = batches.open(client, { callbacks: { success: [Callback, ["all"]] } });
      await overall.add(async (o) => {
        const first = o.batch({ description: "step 1", callbacks: { success: [Step, [1]] } });
        await first.add((s) => s.pushBulk(Work, [["s1a"], ["s1b"]]));
      });
      await settle();
      const steps = log.filter((l) => l.startsWith("step") || l.startsWith("success"));
      assert.deepEqual(steps, ["step 1 done", "step 2 done", "step 3 done", "success all"]);
    });

    it("a child cannot be opened once its parent's registration is over", async () => {
      const root = batches.open(client, {});
      let scope: Parameters<Parameters<Batch["add"]>[0]>[0] | undefined;
      await root.add((r) => void (scope = r));
      await assert.rejects(scope!.batch({}).add(() => {}), BatchError);
      await assert.rejects(scope!.push(Work, ["late"]), /add\(\) has finished/);
      // Two add()s at once on one handle would share (and one seal) a registration: the second is refused.
      const shared = batches.open(client, {});
      let release!: () => void;
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const first = shared.add(() => new Promise<void>((resolve) => (started(), release = resolve)));
      await assert.rejects(shared.add(() => {}), /another add\(\) on this object runs/);
      await running;
      release();
      await first;
    });

    it("cancel: queued jobs are skipped when fetched, and no callback runs", async () => {
      const batch = batches.open(client, { callbacks: { complete: [Callback, ["c"]], success: [Callback, ["s"]] } });
      await batch.add((b) => b.pushBulk(Work, [["a"], ["b"], ["c"]]));
      assert.equal(await batch.cancel(), true);
      await settle();
      assert.deepEqual(log, []);
      const status = await batch.status();
      assert.ok(status?.cancelledAt);
      assert.equal(status?.pending, 0, "skipped jobs are done");
      assert.equal(status?.callbacks.success.state, "cancelled");
      await assert.rejects(batch.add(() => {}), /cancelled/);
    });

    it("cancel: a running job of the batch sees ctx.stopping (from the worker's heartbeat)", async () => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const Long = defineJob({
        name: "Long",
        async perform(ctx) {
          started();
          await new Promise<void>((resolve) => {
            if (ctx.stopping.aborted) resolve();
            ctx.stopping.addEventListener("abort", () => resolve(), { once: true });
          });
          log.push(`stopped: ${(ctx.stopping.reason as Error)?.message}`);
        },
      });
      const batch = batches.open(client, { callbacks: { success: [Callback, ["s"]] } });
      await batch.add((b) => b.push(Long, []));
      const worker = testWorker(redis, { jobs: [Long, Callback], features: [batches], heartbeatInterval: 0.2 });
      await worker.run();
      try {
        await running;
        await batch.cancel();
        await waitFor(() => log.length > 0, "the job to see ctx.stopping", 10_000);
      } finally {
        await worker.stop();
      }
      assert.match(log[0], /stopped: its batch .* was cancelled/);
      assert.ok(!log.includes("success s"), "a cancelled batch's callback does not run");
    });

    it("the beat reads the running jobs only once a batch job was let run here, and stops once none runs", async () => {
      const fresh = batchJobs();
      let lists = 0;
      let running: RunningJobInfo[] = [];
      const stopped: string[] = [];
      const ctx = {
        transport: redis,
        keys: client.keys,
        jobs: { list: () => (lists++, running), stop: (jid: string) => (stopped.push(jid), true) },
      } as unknown as FeatureContext;
      await fresh.beat!(ctx);
      assert.equal(lists, 0, "no batch job ran here: the beat reads nothing");
      const batch = batches.open(client, {});
      let jids: (string | null)[] = [];
      await batch.add(async (b) => void (jids = await b.pushBulk(Work, [["x"]])));
      const payload = { class: "Work", jid: jids[0]!, bid: batch.bid, args: ["x"], queue: "default" } as JobPayload;
      await fresh.receive!(payload, Work as AnyJob, {
        transport: redis,
        keys: client.keys,
        logger: silentLogger,
        onError: () => {},
      });
      running = [{ jid: payload.jid, queue: "default", className: "Work", startedAt: Date.now(), payload }];
      await fresh.beat!(ctx);
      assert.equal(lists, 1, "a batch job runs: the beat reads the running jobs");
      assert.deepEqual(stopped, [], "and stops none of a batch not cancelled");
      running = [];
      await fresh.beat!(ctx);
      await fresh.beat!(ctx);
      assert.equal(lists, 2, "once none runs, later beats read nothing again");
    });

    it("a unique job and its batch registration are one atomic push: a duplicate is not registered", async () => {
      const Only = defineJob({ name: "Only", unique: { for: 60 }, perform(_ctx, _n: number) {} });
      extra = [Only];
      const batch = batches.open(client, { callbacks: { success: [Callback, ["s"]] } });
      let jids: (string | null)[] = [];
      await batch.add(async (b) => void (jids = await b.pushBulk(Only, [[1], [1], [2]])));
      assert.equal(jids.filter((j) => j !== null).length, 2);
      assert.equal((await batch.status())?.total, 2);
      await settle();
      assert.deepEqual(log, ["success s"]);
      await assert.rejects(
        batch.add(() => {}),
        /succeeded/,
      );
      await assert.rejects(
        batches.open(client, {}).add((b) => b.push(Only, [3], { uniqueConflict: "replace" })),
        /uniqueConflict "replace"/,
      );
    });

    it("a flow's parent runs once, after its children, and reads their return values in order", async () => {
      const Parent = defineJob({
        name: "Parent",
        async perform(ctx, tag: string) {
          const children = await batches.childResults(ctx);
          log.push(
            `${tag} <- ${children.map((c) => `${c.className}:${c.state}:${JSON.stringify(c.value)}`).join(",")}`,
          );
          subflows.push(...children.flatMap((c) => (c.bid ? [c.bid] : [])));
          return `${tag} sum`;
        },
      });
      extra = [Parent];
      const subflows: string[] = [];
      const flow = await batches.flow(client, {
        job: [Parent, ["top"]],
        children: [
          { job: [Work, ["a"]] },
          { job: [Parent, ["mid"]], children: [{ job: [Work, ["x"]] }, { job: [Work, ["y"]] }] },
          { job: [Work, ["b"]] },
        ],
      });
      assert.match(flow.jid, /^[0-9a-f]{24}$/);
      await settle();
      const parents = log.filter((l) => l.includes("<-"));
      assert.deepEqual(parents, [
        'mid <- Work:succeeded:"x!",Work:succeeded:"y!"',
        'top <- Work:succeeded:"a!",Parent:succeeded:"mid sum",Work:succeeded:"b!"',
      ]);
      assert.equal(subflows.length, 1, "the top job sees its one child with children of its own");
      assert.ok(subflows[0].startsWith(`${flow.bid}.`), "as a child batch of its flow");
      const status = await new BatchSet(client).get(flow.bid!);
      assert.equal(status?.flow, true);
      assert.equal(status?.callbacks.success.state, "succeeded");
      assert.equal(status?.callbacks.success.jid, flow.jid);
      // The children's kept values expire with their batch (aligned once per outcome call, not per job).
      for (const bid of [flow.bid!, subflows[0]]) {
        const batchTtl = Number(await redis.call("PTTL", client.keys.batch(bid)));
        const resultsTtl = Number(await redis.call("PTTL", client.keys.batchResults(bid)));
        assert.ok(batchTtl > 0 && resultsTtl > 0 && Math.abs(batchTtl - resultsTtl) < 60_000, `${bid}: ${resultsTtl}`);
      }
    });

    it("flow policies: a dead child fails its parent (dead set, never run), ignore runs it, continue starts it at once", async () => {
      const Parent = defineJob({
        name: "Parent",
        async perform(ctx, tag: string) {
          const children = await batches.childResults(ctx);
          log.push(`${tag} <- ${children.map((c) => `${c.state}`).join(",")}`);
        },
      });
      const Slow = defineJob({ name: "Slow", perform: (_ctx, tag: string) => void log.push(`slow ${tag}`) });
      extra = [Parent, Slow];
      failing.set("bad1", 1);
      failing.set("bad2", 1);
      failing.set("bad3", 1);
      const failed = await batches.flow(client, {
        job: [Parent, ["failed"]],
        children: [{ job: [Dies, ["bad1"]] }, { job: [Work, ["ok1"]] }],
      });
      const ignored = await batches.flow(client, {
        job: [Parent, ["ignored"]],
        children: [{ job: [Dies, ["bad2"]], onFailure: "ignore" }, { job: [Work, ["ok2"]] }],
      });
      await settle();
      assert.ok(!log.some((l) => l.startsWith("failed <-")), "a failed child keeps its parent from running");
      assert.ok(log.includes("ignored <- ignored,succeeded"));
      const dead = await new DeadSet(client).page(0, 100);
      const parent = dead.find((e) => e.jid === failed.jid);
      assert.equal(parent?.errorClass, "Edgekiq::ChildFailed");
      assert.match(parent?.errorMessage ?? "", /child Dies .* \(Error: bad1 died\) failed/);
      const gone = await new BatchSet(client).get(ignored.bid!);
      assert.equal(gone?.callbacks.success.state, "succeeded");
      // continue: the parent starts as soon as the child dies, while another still waits.
      log = [];
      await batches.flow(client, {
        job: [Parent, ["continued"]],
        children: [{ job: [Dies, ["bad3"]], onFailure: "continue" }, { job: [Slow, ["later"], { queue: "slow" }] }],
      });
      await settle();
      assert.deepEqual(log, ["die bad3", "continued <- failed,waiting"]);
      await drain({
        transport: redis,
        jobs: [Slow],
        features: [batches],
        budgetMs: 2000,
        metrics: false,
        queues: ["slow"],
      });
      await settle();
      assert.deepEqual(log, ["die bad3", "continued <- failed,waiting", "slow later"], "the parent ran once");
      // The parent failed by its child, retried from the dead set, runs (with what its children left).
      log = [];
      await new DeadSet(client).retryAll();
      await settle();
      assert.ok(log.includes("failed <- failed,succeeded"), log.join("|"));
    });

    it("a failed grandchild fails its parent, which fails the top (each with the reason), policy fail all the way", async () => {
      const Parent = defineJob({ name: "Parent", perform: (_ctx, tag: string) => void log.push(`ran ${tag}`) });
      extra = [Parent];
      failing.set("deep", 1);
      const flow = await batches.flow(client, {
        job: [Parent, ["top"]],
        children: [{ job: [Parent, ["mid"]], children: [{ job: [Dies, ["deep"]] }] }, { job: [Work, ["w"]] }],
      });
      await settle();
      assert.ok(!log.some((l) => l.startsWith("ran")));
      const dead = await new DeadSet(client).page(0, 100);
      const top = dead.find((e) => e.jid === flow.jid);
      assert.equal(top?.errorClass, "Edgekiq::ChildFailed");
      assert.equal(dead.filter((e) => e.errorClass === "Edgekiq::ChildFailed").length, 2, "mid and top");
    });

    it("flow parents that start together read their children in one call (or from their payloads, none)", async () => {
      const reads: number[] = [];
      const counting = new Proxy(redis, {
        get(target, prop, receiver) {
          // The drain's budget-bound transport would bypass this proxy.
          if (prop === "withSignal") return undefined;
          const value = Reflect.get(target, prop, receiver);
          if (prop !== "script") return typeof value === "function" ? value.bind(target) : value;
          return (script: { name: string }, keys: string[], args: never) => {
            if (script.name === "readFlowChildren") reads.push(keys.length / 4);
            return target.script(script as never, keys as never, args);
          };
        },
      });
      const Sum = defineJob({
        name: "Sum",
        async perform(ctx, tag: string) {
          const children = await batches.childResults(ctx);
          log.push(`${tag} <- ${children.map((c) => JSON.stringify(c.value)).join(",")}`);
        },
      });
      extra = [Sum];
      for (const tag of ["p1", "p2", "p3", "p4", "p5"]) {
        await batches.flow(client, {
          job: [Sum, [tag], { queue: "parents" }],
          children: [{ job: [Work, [`${tag}a`]] }, { job: [Work, [`${tag}b`]] }],
        });
      }
      // The children first, then the five parents (on a queue of their own), fetched together and started side by side.
      await drain({ transport: redis, jobs: [Work], features: [batches], budgetMs: 5000, logger: silentLogger });
      assert.equal(await redis.call("LLEN", "queue:parents"), 5, "the parents wait, pushed by their last child");
      const queued = (await redis.call("LRANGE", "queue:parents", 0, -1)) as string[];
      assert.ok(queued.every((raw) => Array.isArray(JSON.parse(raw)[EMBED_FIELD])), "each carries its children");
      const expected = [
        'p1 <- "p1a!","p1b!"',
        'p2 <- "p2a!","p2b!"',
        'p3 <- "p3a!","p3b!"',
        'p4 <- "p4a!","p4b!"',
        'p5 <- "p5a!","p5b!"',
      ];
      const run = () =>
        drain({
          transport: counting as Transport,
          jobs: [Sum],
          queues: ["parents"],
          features: [batches],
          budgetMs: 5000,
          logger: silentLogger,
        });
      // Parents as an older version pushed them (no children carried): they read from Redis, in one call.
      await redis.call("DEL", "queue:parents");
      for (const raw of queued) {
        const { [EMBED_FIELD]: _carried, ...bare } = JSON.parse(raw);
        await redis.call("RPUSH", "queue:parents", JSON.stringify(bare));
      }
      await run();
      assert.deepEqual(log.filter((l) => l.includes("<-")).sort(), expected);
      assert.deepEqual(reads, [5], "one call read the five flows' children");
      // The same parents carrying their children read nothing.
      log = [];
      await redis.call("DEL", "queue:parents");
      await redis.call("RPUSH", "queue:parents", ...queued);
      await run();
      assert.deepEqual(log.filter((l) => l.includes("<-")).sort(), expected);
      assert.deepEqual(reads, [5], "no read more");
    });

    it("a flow parent whose children's results are too big to carry reads them from Redis", async () => {
      const reads: string[] = [];
      const counting = new Proxy(redis, {
        get(target, prop, receiver) {
          if (prop === "withSignal") return undefined;
          const value = Reflect.get(target, prop, receiver);
          if (prop !== "script") return typeof value === "function" ? value.bind(target) : value;
          return (script: { name: string }, keys: string[], args: never) => {
            reads.push(script.name);
            return target.script(script as never, keys as never, args);
          };
        },
      });
      const Large = defineJob({ name: "Large", perform: (_ctx, n: number) => "y".repeat(6000) + n });
      const Sum = defineJob({
        name: "Sum",
        perform: async (ctx) =>
          void log.push(`sum ${(await batches.childResults(ctx)).map((c) => String(c.value).length).join()}`),
      });
      extra = [Large, Sum];
      await batches.flow(client, {
        job: [Sum, [], { queue: "parents" }],
        children: [1, 2, 3].map((n) => ({ job: [Large, [n]] as const })),
      });
      await drain({ transport: redis, jobs: [Large], features: [batches], budgetMs: 5000, logger: silentLogger });
      const [raw] = (await redis.call("LRANGE", "queue:parents", 0, -1)) as string[];
      assert.equal(JSON.parse(raw)[EMBED_FIELD], undefined, `18 KB of results is over ${EMBED_MAX} bytes: not carried`);
      await drain({
        transport: counting as Transport,
        jobs: [Sum],
        queues: ["parents"],
        features: [batches],
        budgetMs: 5000,
        logger: silentLogger,
      });
      assert.deepEqual(log, ["sum 6001,6001,6001"]);
      assert.ok(reads.includes("readFlowChildren"), "read from Redis");
    });

    it("a flow child's return value over the limit fails its parent with a clear error", async () => {
      const small = batchJobs({ maxResultBytes: 100 });
      const smallClient = createClient({ transport: redis, features: [small] });
      const Big = defineJob({ name: "Big", perform: () => "x".repeat(200) });
      const Parent = defineJob({ name: "Parent", perform: () => void log.push("parent ran") });
      const flow = await small.flow(smallClient, { job: [Parent, []], children: [{ job: [Big, []] }] });
      await drain({ transport: redis, jobs: [Big, Parent], features: [small], budgetMs: 2000, metrics: false });
      assert.deepEqual(log, []);
      const status = await new BatchSet(client).get(flow.bid!);
      assert.match(
        status?.failed[0]?.errorMessage ?? "",
        /202 bytes of JSON: the limit is 100 \(batchJobs\(\{ maxResultBytes \}\)\)/,
      );
      const parent = (await new DeadSet(client).page(0, 100)).find((e) => e.jid === flow.jid);
      assert.match(parent?.errorMessage ?? "", /202 bytes/);
    });

    it("return values are kept only for flows' jobs", async () => {
      const batch = batches.open(client, {});
      await batch.add((b) => b.push(Work, ["plain"]));
      await settle();
      assert.equal(await redis.call("EXISTS", client.keys.batchResults(batch.bid)), 0);
    });

    it("refuses bad options and clients without the feature, clearly", async () => {
      assert.throws(() => batches.open(createClient({ transport: redis }), {}), ConfigError);
      assert.throws(
        () => batches.open(client, { callbacks: { finish: [Callback, []] } as never }),
        /unknown event 'finish'/,
      );
      assert.throws(() => batches.open(client, { expiresIn: -1 }), /'expiresIn' must be > 0/);
      await assert.rejects(
        batches.open(client, { callbacks: { success: [Callback, [42 as unknown as string, new Date()]] } }).add(
          () => {},
        ),
        /args\[1\] is a Date/,
      );
      await assert.rejects(client.push(Work, ["x"], { extra: { bid: "abc" } }), /must not set 'bid'/);
      assert.throws(() => batches.find(client, "not a bid!"), /batch id/);
    });
  });
}
