/**
 * Unique jobs (issue 17): the lock is taken in the push's own atomic call,
 * released at `until`, kept through retries, released at death and by the
 * admin API, and never outlives `for`; `replace` and `reschedule` act on the
 * waiting copy. On memory, a real redis-server (ioredis, Bun's client under
 * Bun) and @upstash/redis through the REST gateway fixture.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type Client,
  ConfigError,
  createClient,
  defineJob,
  drain,
  type JobPayload,
  PayloadError,
  pollOnce,
  type Transport,
} from "../mod.ts";
import { uniqueJobs } from "../src/features/mod.ts";
import { DeadSet, Queue, RetrySet, ScheduledSet } from "../src/api/mod.ts";
import { UniqueLocks } from "../src/features/mod.ts";
import { canonicalJson, uniqueDigest } from "../src/features/unique/unique_digest.ts";
import { sha256 } from "../src/features/unique/sha256.ts";
import { type Keys, keys } from "../src/keys.ts";
import { matrix, waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const unique = uniqueJobs();
const Sync = defineJob({ name: "Sync", unique: { for: 60 }, perform(_ctx, _id: number, _opts?: object) {} });

async function lockKey(client: Client, className: string, args: unknown[], queue = "default"): Promise<string> {
  return client.keys.uniqueLock(await uniqueDigest(className, queue, args));
}

async function queued(redis: Transport, k: Keys, queue = "default"): Promise<JobPayload[]> {
  return ((await redis.call("LRANGE", k.queue(queue), 0, -1)) as string[]).map((raw) => JSON.parse(raw));
}

async function scheduled(redis: Transport, k: Keys): Promise<Array<[JobPayload, number]>> {
  const flat = (await redis.call("ZRANGE", k.schedule, 0, -1, "WITHSCORES")) as string[];
  const out: Array<[JobPayload, number]> = [];
  for (let i = 0; i < flat.length; i += 2) out.push([JSON.parse(flat[i]), Number(flat[i + 1])]);
  return out;
}

/** Every key in the database: on a Redis Cluster, every primary's (KEYS alone asks one node). */
async function allKeys(redis: Transport): Promise<string[]> {
  if (!redis.eachPrimary) return (await redis.call("KEYS", "*")) as string[];
  return (await redis.eachPrimary(["KEYS", "*"])).flatMap((r) => {
    if (r.error) throw r.error;
    return r.reply as string[];
  });
}

describe("unique lock names", () => {
  it("canonical JSON sorts object keys at every depth and keeps array order", () => {
    assert.equal(canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] }), '{"a":[2,{"c":4,"d":3}],"b":1}');
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
    assert.equal(canonicalJson({ a: undefined, b: null }), '{"b":null}');
  });

  it("the synchronous SHA-256 matches Web Crypto's", async () => {
    const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    for (
      const text of ["", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(64), "é☃𝄞".repeat(40), "x".repeat(1000)]
    ) {
      const want = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
      assert.equal(hex(sha256(text)), hex(want), `length ${text.length}`);
    }
  });

  it("names a lock by class and a 128-bit hash of class, queue and key", () => {
    assert.match(uniqueDigest("A::B", "q", [1]), /^A::B:[0-9a-f]{32}$/);
    assert.notEqual(uniqueDigest("A", "q", [1]), uniqueDigest("A", "r", [1]));
    assert.equal(uniqueDigest("A", "q", [{ x: 1, y: 2 }]), uniqueDigest("A", "q", [{ y: 2, x: 1 }]));
  });
});

for (const target of matrix(["memory", "ioredis", "bun", "upstash", "cluster"])) {
  // The cluster target gets the cluster key layout ({edgekiq}:queue:...), as every client on it does.
  const k = keys("", target.name === "cluster" ? "cluster" : "sidekiq");
  describe(`unique jobs on ${target.name}`, () => {
    let redis: Transport;
    let client: Client;
    beforeEach(async () => {
      redis ??= await target.open();
      await target.flush();
      client = createClient({ transport: redis, features: [unique] });
    });

    it("10 clients pushing the same job at once write it exactly once", async () => {
      const clients = await Promise.all(
        Array.from(
          { length: 10 },
          async () =>
            createClient({
              transport: target.name === "memory" ? redis : await target.open(),
              features: [unique],
            }),
        ),
      );
      const results = await Promise.all(clients.map((c) => c.pushDetailed(Sync, [7])));
      const pushed = results.filter((r) => r.status === "pushed");
      assert.equal(pushed.length, 1, JSON.stringify(results));
      for (const r of results) {
        if (r.status !== "pushed") assert.deepEqual(r, { jid: null, status: "duplicate", existing: pushed[0].jid });
      }
      const jobs = await queued(redis, k);
      assert.deepEqual(jobs.map((j) => j.jid), [pushed[0].jid]);
      assert.equal(await redis.call("GET", await lockKey(client, "Sync", [7])), pushed[0].jid);
      // Bulk too: 10 clients, the same 30 args each (and a repeat inside each list).
      const argsList = Array.from({ length: 30 }, (_, i) => [100 + (i % 25)] as [number]);
      const bulk = await Promise.all(clients.map((c) => c.pushBulkDetailed(Sync, argsList, { batchSize: 7 })));
      assert.equal(bulk.flat().filter((r) => r.status === "pushed").length, 25);
      assert.equal((await queued(redis, k)).length, 26);
    });

    it("one push is one command and one round trip; push returns null for a duplicate", async () => {
      await client.push(Sync, [0]); // loads the script (EVALSHA, NOSCRIPT, EVAL): once per server
      const before = { ...redis.counters };
      const jid = await client.push(Sync, [1]);
      assert.deepEqual([redis.counters.commands - before.commands, redis.counters.roundTrips - before.roundTrips], [
        1,
        1,
      ]);
      assert.match(jid!, /^[0-9a-f]{24}$/);
      assert.equal(await client.push(Sync, [1]), null);
      assert.equal(await Sync.performAsync(client, 1), null);
      const job = (await queued(redis, k))[0];
      assert.equal(job.jid, jid);
      assert.deepEqual(job.edgekiq_unique, { key: await lockKey(client, "Sync", [1]), until: "success", for: 60 });
      const ttl = Number(await redis.call("PTTL", await lockKey(client, "Sync", [1])));
      assert.ok(ttl > 58_000 && ttl <= 60_000, `ttl ${ttl}`);
    });

    it("keys on class, queue and canonical args; `by` picks the key; `unique: false` opts out", async () => {
      assert.ok(await client.push(Sync, [1, { a: 1, b: [{ x: 1, y: 2 }] }]));
      assert.equal(await client.push(Sync, [1, { b: [{ y: 2, x: 1 }], a: 1 }]), null, "same data, other key order");
      assert.ok(await client.push(Sync, [1, { a: 1, b: [{ x: 1, y: 3 }] }]));
      assert.ok(await client.push(Sync, [1, { a: 1, b: [{ x: 1, y: 2 }] }], { queue: "other" }), "other queue");
      assert.ok(await client.push("Other", [1, { a: 1, b: [{ x: 1, y: 2 }] }], { unique: { for: 60 } }), "other class");
      assert.ok(await client.push(Sync, [1, { a: 1, b: [{ x: 1, y: 2 }] }], { unique: false }), "opted out");
      const ById = defineJob({
        name: "ById",
        unique: { for: 60, by: ([user]) => user },
        perform(_ctx, _user: string, _at: number) {},
      });
      assert.ok(await client.push(ById, ["ada", 1]));
      assert.equal(await client.push(ById, ["ada", 2]), null, "same user, other args");
      assert.ok(await client.push(ById, ["bob", 1]));
    });

    it("refuses bad options with a clear error and writes nothing", async () => {
      assert.throws(
        () => defineJob({ name: "X", unique: { for: -1 }, perform() {} }),
        /Cannot define job X as 'unique.for' must be > 0 seconds/,
      );
      assert.throws(
        // deno-lint-ignore no-explicit-any
        () => defineJob({ name: "X", unique: { for: 1, until: "done" as any }, perform() {} }),
        /'unique.until' must be "start" or "success"/,
      );
      assert.throws(
        // deno-lint-ignore no-explicit-any
        () => defineJob({ name: "X", uniqueConflict: "merge" as any, perform() {} }),
        /'uniqueConflict' must be "skip", "replace" or "reschedule"/,
      );
      await assert.rejects(client.push(Sync, [1], { unique: { for: 0 } }), PayloadError);
      await assert.rejects(
        client.push(Sync, [1], { unique: { for: 5, by: () => new Date() } }),
        /unique\.by\(args\) is a Date/,
      );
      await assert.rejects(
        createClient({ transport: redis }).push(Sync, [1]),
        (e: unknown) =>
          e instanceof ConfigError &&
          /sets 'unique' but no feature of this client handles it: add uniqueJobs\(\)/.test(e.message),
      );
      assert.deepEqual(await allKeys(redis), []);
      await assert.rejects(client.push(Sync, [1], { extra: { edgekiq_unique: {} } }), /must not set 'edgekiq_unique'/);
    });

    it("until success: kept through a failure and its retry, released on success", async () => {
      let fail = 1;
      const Flaky = defineJob({
        name: "Flaky",
        unique: { for: 60 },
        retryIn: () => 0,
        perform() {
          if (fail-- > 0) throw new Error("boom");
        },
      });
      const jid = await client.push(Flaky, []);
      const key = await lockKey(client, "Flaky", []);
      const run = () =>
        drain({ transport: redis, jobs: [Flaky], budgetMs: 10_000, features: [unique], jobLogging: false });
      assert.equal((await run()).failed, 1);
      assert.equal(await redis.call("ZCARD", k.retry), 1);
      assert.equal(await redis.call("GET", key), jid, "a retrying job keeps its lock");
      assert.equal((await client.pushDetailed(Flaky, [])).status, "duplicate");
      assert.equal((await pollOnce({ client, now: Date.now() + 1000 })).promoted, 1);
      assert.equal(await redis.call("GET", key), jid, "promotion keeps it");
      assert.equal((await run()).processed, 1);
      assert.equal(await redis.call("GET", key), null, "released on success");
      assert.ok(await client.push(Flaky, []));
    });

    it("until success: released when the job dies (out of retries, retry: false) or is discarded", async () => {
      const { Discard } = await import("../mod.ts");
      const Doomed = defineJob({
        name: "Doomed",
        unique: { for: 60 },
        retry: 0,
        perform() {
          throw new Error("dead");
        },
      });
      const Dropped = defineJob({
        name: "Dropped",
        unique: { for: 60 },
        retry: false,
        perform() {
          throw new Error("gone");
        },
      });
      const Discarded = defineJob({
        name: "Discarded",
        unique: { for: 60 },
        perform() {
          throw new Discard("not needed");
        },
      });
      await client.push(Doomed, []);
      await client.push(Dropped, []);
      await client.push(Discarded, []);
      await drain({
        transport: redis,
        jobs: [Doomed, Dropped, Discarded],
        budgetMs: 10_000,
        features: [unique],
        jobLogging: false,
      });
      assert.equal(await redis.call("ZCARD", k.dead), 1);
      for (const name of ["Doomed", "Dropped", "Discarded"]) {
        assert.equal(await redis.call("GET", await lockKey(client, name, [])), null, `${name} released`);
      }
    });

    it("until start: released as the job starts, so a copy may be pushed while it runs", async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const started: string[] = [];
      const Long = defineJob({
        name: "Long",
        unique: { for: 60, until: "start" },
        async perform(ctx) {
          started.push(ctx.jid);
          if (started.length === 1) await gate;
        },
      });
      const first = await client.push(Long, []);
      assert.equal(await client.push(Long, []), null, "a queued copy holds the lock");
      const worker = testWorker(redis, { jobs: [Long], features: [unique], concurrency: 2 });
      await worker.run();
      try {
        await waitFor(() => started.length === 1, "the first copy to start");
        const key = await lockKey(client, "Long", []);
        await waitFor(async () => (await redis.call("GET", key)) === null, "the lock to go at start", 5_000);
        const second = await client.push(Long, []);
        assert.ok(second && second !== first);
        await waitFor(() => started.length === 2, "the second copy to run beside the first");
      } finally {
        release();
        await worker.stop();
      }
    });

    // With every slot busy the fetcher makes no call until a job ends: releaseLater asks the feeder for one.
    it("until start: released as the job starts even when it fills the worker's only slot", async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let started = false;
      const Solo = defineJob({
        name: "Solo",
        unique: { for: 60, until: "start" },
        async perform() {
          started = true;
          await gate;
        },
      });
      await client.push(Solo, []);
      const worker = testWorker(redis, { jobs: [Solo], features: [unique], concurrency: 1 });
      await worker.run();
      try {
        await waitFor(() => started, "the job to start");
        const key = await lockKey(client, "Solo", []);
        await waitFor(async () => (await redis.call("GET", key)) === null, "the lock to go at start", 1_500);
      } finally {
        release();
        await worker.stop();
      }
    });

    it("a scheduled job's lock covers its delay plus `for`; promotion keeps it", async () => {
      const jid = await client.push(Sync, [3], { in: 120 });
      const key = await lockKey(client, "Sync", [3]);
      const ttl = Number(await redis.call("PTTL", key));
      assert.ok(ttl > 178_000 && ttl <= 180_000, `ttl ${ttl}`);
      assert.equal(await client.push(Sync, [3]), null);
      assert.equal((await pollOnce({ client, now: Date.now() + 121_000 })).promoted, 1);
      assert.deepEqual((await queued(redis, k)).map((j) => j.jid), [jid]);
      assert.equal(await redis.call("GET", key), jid);
      await drain({ transport: redis, jobs: [Sync], budgetMs: 10_000, features: [unique], jobLogging: false });
      assert.equal(await redis.call("GET", key), null);
    });

    it("replace (debounce): the newest push takes the waiting copy's place, scheduled or queued", async () => {
      const Debounced = defineJob({
        name: "Debounced",
        unique: { for: 60, by: ([doc]) => doc },
        uniqueConflict: "replace",
        perform(_ctx, _doc: string, _version: number) {},
      });
      const a = await client.pushDetailed(Debounced, ["doc", 1], { in: 30 });
      const b = await client.pushDetailed(Debounced, ["doc", 2], { in: 30 });
      const c = await client.pushDetailed(Debounced, ["doc", 3], { in: 45 });
      assert.equal(a.status, "pushed");
      assert.deepEqual([b.status, b.existing], ["replaced", a.jid]);
      assert.deepEqual([c.status, c.existing], ["replaced", b.jid]);
      const [[only, score]] = await scheduled(redis, k);
      assert.deepEqual([only.jid, only.args], [c.jid, ["doc", 3]]);
      assert.ok(score > Date.now() / 1000 + 40, "at the newest push's time");
      const key = await lockKey(client, "Debounced", "doc" as unknown as unknown[]);
      assert.equal(await redis.call("GET", key), c.jid);
      // Queued: replaced in place, keeping its turn.
      await client.push("Before", []);
      const d = await client.pushDetailed(Debounced, ["now", 1]);
      await client.push("After", []);
      const e = await client.pushDetailed(Debounced, ["now", 2]);
      assert.deepEqual([e.status, e.existing], ["replaced", d.jid]);
      assert.deepEqual((await queued(redis, k)).map((j) => [j.class, j.args]), [
        ["After", []],
        ["Debounced", ["now", 2]],
        ["Before", []],
      ]);
      // A copy already running (or retrying) is never touched: a duplicate.
      const [raw] = (await redis.call("LRANGE", k.queue("default"), 1, 1)) as string[];
      await redis.call("LREM", k.queue("default"), 1, raw);
      await redis.call("ZADD", k.retry, Date.now() / 1000 + 60, raw);
      assert.deepEqual(await client.pushDetailed(Debounced, ["now", 3]), {
        jid: null,
        status: "duplicate",
        existing: e.jid,
      });
    });

    it("reschedule: the waiting copy keeps its args and moves to the new push's time", async () => {
      const Later = defineJob({ name: "Later", unique: { for: 60 }, uniqueConflict: "reschedule", perform() {} });
      const first = await client.push(Later, [], { in: 30 });
      const moved = await client.pushDetailed(Later, [], { in: 300 });
      assert.deepEqual(moved, { jid: first, status: "rescheduled", existing: first });
      const [[job, score]] = await scheduled(redis, k);
      assert.equal(job.jid, first);
      assert.ok(score > Date.now() / 1000 + 290);
      assert.ok(Number(await redis.call("PTTL", await lockKey(client, "Later", []))) > 350_000);
      assert.equal((await client.pushDetailed(Later, [])).status, "rescheduled");
      assert.deepEqual((await queued(redis, k)).map((j) => j.jid), [first], "now: moved to its queue");
      assert.equal(await redis.call("ZCARD", k.schedule), 0);
    });

    it("API: delete and kill release the lock, retry keeps it, a dead job retried takes it again", async () => {
      const queue = new Queue(client, "default");
      const jid = await client.push(Sync, [1]);
      const key = await lockKey(client, "Sync", [1]);
      const [record] = await queue.page(0, 1);
      assert.equal(await queue.delete(record), true);
      assert.equal(await redis.call("GET", key), null, "Queue#delete releases");
      assert.ok(jid);
      // Scheduled: delete releases.
      await client.push(Sync, [1], { in: 60 });
      assert.equal(
        await (await new ScheduledSet(client).findJob((await scheduled(redis, k))[0][0].jid))!.delete(),
        true,
      );
      assert.equal(await redis.call("GET", key), null, "ScheduledSet entry delete releases");
      // A retrying job (as a worker writes it): retry keeps the lock, kill releases it.
      const again = (await client.push(Sync, [1]))!;
      const raw = ((await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[])[0];
      await redis.call("LREM", k.queue("default"), 1, raw);
      await redis.call("ZADD", k.retry, Date.now() / 1000 + 60, raw);
      const retries = new RetrySet(client);
      assert.equal(await (await retries.findJob(again))!.retry(), true);
      assert.equal(await redis.call("GET", key), again, "RetrySet retry keeps it");
      const back = ((await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[])[0];
      await redis.call("LREM", k.queue("default"), 1, back);
      await redis.call("ZADD", k.retry, Date.now() / 1000 + 60, back);
      assert.equal(await (await retries.findJob(again))!.kill(), true);
      assert.equal(await redis.call("GET", key), null, "kill releases");
      // Dead: retried, it takes the lock again (a free one; never another copy's).
      assert.equal(await (await new DeadSet(client).findJob(again))!.retry(), true);
      assert.equal(await redis.call("GET", key), again, "dead retry retakes the free lock");
      assert.equal(await client.push(Sync, [1]), null);
      // DeadSet#kill of a raw job releases too.
      await new DeadSet(client).kill(((await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[])[0]);
      assert.equal(await redis.call("GET", key), null);
    });

    it("API: clearing a queue or the scheduled set releases the locks of what they held", async () => {
      await client.pushBulk(Sync, [[1], [2], [3]]);
      await client.pushBulk(Sync, [[4], [5]], { in: 60 });
      await client.push("Plain", [1], { queue: "plain" });
      assert.equal((await toArray(new UniqueLocks(client).each())).length, 5);
      await new Queue(client, "default").clear();
      await new ScheduledSet(client).clear();
      await new Queue(client, "plain").clear();
      assert.deepEqual(await toArray(new UniqueLocks(client).each()), []);
      assert.deepEqual(await redis.call("SMEMBERS", k.queues), []);
      assert.equal(await redis.call("EXISTS", k.queue("default"), k.schedule, k.queue("plain")), 0);
      const leftovers = (await allKeys(redis)).filter((key) => key.includes("cleared"));
      assert.deepEqual(leftovers, []);
      assert.ok(await client.push(Sync, [1]), "pushable again");
    });

    it("finds and cleans a lock whose job is nowhere, never one whose job is somewhere", async () => {
      const kept = (await client.push(Sync, [1]))!;
      const lost = (await client.push(Sync, [2]))!;
      const retrying = (await client.push(Sync, [3], { in: 60 }))!;
      const raws = (await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[];
      const lostRaw = raws.find((r) => JSON.parse(r).jid === lost)!;
      await redis.call("LREM", k.queue("default"), 1, lostRaw); // removed behind the API's back
      const locks = new UniqueLocks(client);
      const orphans = await locks.orphans();
      assert.deepEqual(orphans.map((l) => l.jid), [lost]);
      assert.ok(orphans[0].ttlMs > 0);
      const cleaned = await locks.cleanOrphans({ confirmAfterMs: 20 });
      assert.deepEqual(cleaned.map((l) => l.jid), [lost]);
      const left = (await toArray(locks.each())).map((l) => l.jid).sort();
      assert.deepEqual(left, [kept, retrying].sort());
      assert.ok(await client.push(Sync, [2]));
    });
  });
}

async function toArray<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
