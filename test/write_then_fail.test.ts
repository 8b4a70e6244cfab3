/**
 * Lua does not roll back: a script that writes and then meets a key of the
 * wrong type (another producer's, a tool's, a typo'd key) keeps its earlier
 * writes. A script that moves a job out of one key and then fails to write
 * it into the next loses the job. Each test here plants a key of the wrong
 * type where a script will write, and checks that nothing is lost or left
 * half-written: the call is refused whole, or the broken key is stepped
 * around. Every one of them failed on the code before (a job gone, a lock
 * or flag left behind, a call failing half-way).
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, silentLogger } from "../mod.ts";
import { uniqueJobs } from "../src/features/mod.ts";
import { Queue, RetrySet, ScheduledSet } from "../src/api/mod.ts";
import { markDeploy } from "../src/features/mod.ts";
import { keys } from "../src/keys.ts";
import { COMPARE_AND_DELETE } from "../src/scripts/compare_and_delete.ts";
import { POLL_CHECK, pollCheckKeys } from "../src/scripts/poll_check.ts";
import { REQUEUE } from "../src/scripts/requeue.ts";
import { PERIODIC_REGISTER } from "../src/features/periodic/register_script.ts";
import { Poller } from "../src/server/poller.ts";
import { recoverOrphans } from "../src/server/recovery.ts";
import { heldCount, plantHeld } from "./support/held.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";

const k = keys();
const unique = uniqueJobs();

function job(jid: string, queue = "default", extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ class: "Noop", args: [], queue, jid, retry: true, created_at: 1, enqueued_at: 1, ...extra });
}

async function members(redis: { call: (...a: never[]) => Promise<unknown> }, set: string): Promise<string[]> {
  return (await (redis.call as (...a: unknown[]) => Promise<unknown>)("ZRANGE", set, 0, -1)) as string[];
}

eachTarget("a key of the wrong type where a script writes", (t) => {
  const call = (...args: (string | number)[]) => t.redis.call(args[0] as string, ...args.slice(1));

  it("a failure whose retry entry Redis refuses is buried with the reason, not lost (settle)", async () => {
    const Fails = defineJob({ name: "Fails", retry: 3, perform: () => Promise.reject(new Error("boom")) });
    const jid = await createClient({ transport: t.redis }).push(Fails, []);
    await call("SET", "retry", "not a sorted set");
    t.worker = testWorker(t.redis, { jobs: [Fails], onError: () => {} });
    await t.worker.run();
    await waitFor(async () => (await members(t.redis, "dead")).length === 1, "the job buried in dead");
    const [entry] = (await members(t.redis, "dead")).map((raw) => JSON.parse(raw));
    assert.equal(entry.jid, jid);
    assert.match(entry.error_message, /Cannot record the job's outcome \(writing retry\).*WRONGTYPE/);
    await waitFor(async () => (await heldCount(t.redis, t.worker!.identity)) === 0, "and acknowledged");
  });

  it("jobs put back onto a queue key of another type stay held, unmarked (requeue)", async () => {
    const held = await plantHeld(t.redis, { identity: "me", jobs: [job("a"), job("b")] });
    await call("SET", "queue:default", "not a list");
    const requeue = () => t.redis.script(REQUEUE, [held, held, "queue:default"], [0, 0, "queue:", 1, 1, 2, 0, 1]);
    await assert.rejects(requeue(), /WRONGTYPE queue:default .*nothing was written/);
    assert.equal(await heldCount(t.redis, "me"), 2);
    await call("DEL", "queue:default");
    assert.equal(await requeue(), 2);
    assert.equal(await call("LLEN", "queue:default"), 2);
  });

  it("a due job whose queue holds another type stays scheduled; the others move (promote)", async () => {
    const now = Date.now() / 1000;
    await call("ZADD", "schedule", now - 10, job("stuck", "mail"), now - 5, job("fine", "default"));
    await call("SET", "queue:mail", "not a list");
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (message: string) => void errors.push(message) };
    const poller = new Poller({ client: createClient({ transport: t.redis }), logger });
    assert.equal(await poller.promote("schedule"), 1);
    assert.deepEqual((await call("LRANGE", "queue:default", 0, -1) as string[]).map((r) => JSON.parse(r).jid), [
      "fine",
    ]);
    assert.deepEqual((await members(t.redis, "schedule")).map((r) => JSON.parse(r).jid), ["stuck"]);
    assert.match(errors.join("\n"), /holds another type than a list/);
  });

  it("retrying an entry to a queue of another type is refused with the entry kept (api enqueue)", async () => {
    await call("ZADD", "retry", 1, job("r1", "mail"));
    await call("SET", "queue:mail", "not a list");
    const client = createClient({ transport: t.redis });
    const entry = await new RetrySet(client).findJob("r1");
    await assert.rejects(entry!.retry(), /WRONGTYPE queue:mail/);
    assert.equal((await members(t.redis, "retry")).length, 1);
    assert.equal(await call("SISMEMBER", "queues", "mail"), 0);
  });

  it("killing into a dead key of another type is refused with the entry kept (api kill)", async () => {
    await call("ZADD", "retry", 1, job("r2"));
    await call("SET", "dead", "not a sorted set");
    const entry = await new RetrySet(createClient({ transport: t.redis })).findJob("r2");
    await assert.rejects(entry!.kill(), /WRONGTYPE dead/);
    assert.equal((await members(t.redis, "retry")).length, 1);
  });

  it("a unique replace whose push Redis refuses keeps the scheduled holder (unique guard)", async () => {
    const Sync = defineJob({ name: "Sync", unique: { for: 600 }, perform(_ctx, _id: number) {} });
    const client = createClient({ transport: t.redis, features: [unique] });
    const holder = await client.push(Sync, [1], { in: 3600, uniqueConflict: "replace" });
    await call("SET", "queue:default", "not a list");
    await assert.rejects(client.push(Sync, [1], { uniqueConflict: "replace" }), /WRONGTYPE/);
    const left = await new ScheduledSet(client).findJob(holder!);
    assert.ok(left, "the holder is still scheduled");
  });

  it("a lock key of another type is left alone and the delete completes (entry ops)", async () => {
    const Sync = defineJob({ name: "Sync", unique: { for: 600 }, perform(_ctx, _id: number) {} });
    const client = createClient({ transport: t.redis, features: [unique] });
    const jid = await client.push(Sync, [2], { in: 3600 });
    const [lock] = (await call("KEYS", `${k.uniqueLockPrefix}*`)) as string[];
    await call("DEL", lock);
    await call("RPUSH", lock, "someone else's list");
    const entry = await new ScheduledSet(client).findJob(jid!);
    assert.equal(await entry!.delete(), true);
    assert.equal((await members(t.redis, "schedule")).length, 0);
    assert.equal(await call("LLEN", lock), 1, "the list is untouched");
  });

  it("a compare-and-delete skips keys of another type instead of failing after deleting others", async () => {
    await call("SET", "lock:a", "me");
    await call("RPUSH", "lock:b", "x");
    await call("SET", "lock:c", "me");
    assert.equal(await t.redis.script(COMPARE_AND_DELETE, ["lock:a", "lock:b", "lock:c"], ["me", "me", "me"]), 2);
    assert.equal(await call("LLEN", "lock:b"), 1);
  });

  it("a fetch never loses a NUL job when dead is of another type, and other queues still run", async () => {
    const ran: string[] = [];
    const Noop = defineJob({ name: "Noop", perform: (ctx) => void ran.push(ctx.jid) });
    await call("SET", "dead", "not a sorted set");
    await call("LPUSH", "queue:nul", "bad\0job");
    await call("SET", "queue:broken", "not a list");
    await call("LPUSH", "queue:default", job("ok"));
    const errors: string[] = [];
    t.worker = testWorker(t.redis, {
      jobs: [Noop],
      queues: ["broken", "default"],
      logger: { ...silentLogger, error: (message: string) => void errors.push(message) },
      onError: () => {},
    });
    await t.worker.run();
    await waitFor(() => ran.includes("ok"), "the job on the healthy queue ran beside a broken one");
    assert.match(errors.join("\n"), /queue skipped: its key holds another type/);
    await t.worker.stop();
    const refused: unknown[] = [];
    t.worker = testWorker(t.redis, { jobs: [Noop], queues: ["nul"], onError: (e) => void refused.push(e) });
    await t.worker.run();
    await waitFor(() => refused.some((e) => /WRONGTYPE dead/.test(String(e))), "the fetch refused");
    assert.deepEqual(await call("LRANGE", "queue:nul", 0, -1), ["bad\0job"], "the NUL job is back where it was");
  });

  it("basic fetch skips a queue key of another type (told once) and runs the others", async () => {
    const ran: string[] = [];
    const Noop = defineJob({ name: "Noop", perform: (ctx) => void ran.push(ctx.jid) });
    await call("SET", "queue:broken", "not a list");
    await call("LPUSH", "queue:default", job("ok1"), job("ok2"));
    const errors: string[] = [];
    t.worker = testWorker(t.redis, {
      jobs: [Noop],
      queues: ["broken", "default"],
      fetch: "basic",
      logger: { ...silentLogger, error: (message: string) => void errors.push(message) },
      onError: () => {},
    });
    await t.worker.run();
    await waitFor(() => ran.length === 2, "both jobs on the healthy queue ran");
    assert.equal(errors.filter((e) => /queue skipped/.test(e)).length, 1, errors.join("\n"));
  });

  it("an orphan whose queue key is broken stays held; the other orphans are recovered (recover)", async () => {
    const broken = await plantHeld(t.redis, { identity: "gone1", queue: "mail", jobs: [job("m1", "mail")] });
    await plantHeld(t.redis, { identity: "gone2", jobs: [job("d1")] });
    await call("SET", "queue:mail", "not a list");
    const result = await recoverOrphans({ transport: t.redis, keys: k });
    assert.equal(result.requeued, 1);
    assert.deepEqual(result.failed.map((f) => f.held), [broken]);
    assert.equal(await heldCount(t.redis, "gone1"), 1);
    assert.equal(await call("LLEN", "queue:default"), 1);
  });

  it("registering schedules when one hash is of another type writes none of them (periodic)", async () => {
    const now = Math.floor(Date.now() / 1000);
    const entry = (name: string) => [name, "{}", `s-${name}`, `t-${name}`, now + 60, now + 120];
    await call("SET", "edgekiq:periodic:schedule:b", "not a hash");
    await assert.rejects(
      t.redis.script(
        PERIODIC_REGISTER,
        [
          "edgekiq:periodic:due",
          "edgekiq:periodic:owner:o",
          "edgekiq:periodic:schedule:a",
          "edgekiq:periodic:schedule:b",
        ],
        ["claim", "o", "d", now, now + 30, 60, 2, 0, ...entry("a"), ...entry("b")],
      ),
      /WRONGTYPE edgekiq:periodic:schedule:b/,
    );
    assert.equal(await call("EXISTS", "edgekiq:periodic:schedule:a", "edgekiq:periodic:owner:o"), 0);
    assert.equal(await call("ZCARD", "edgekiq:periodic:due"), 0);
  });

  it("a poll check that cannot read does not take the pruning lock", async () => {
    await call("SET", "processes", "not a set");
    await assert.rejects(t.redis.script(POLL_CHECK, pollCheckKeys(k, []), [Date.now() / 1000]), /WRONGTYPE/);
    assert.equal(await call("EXISTS", k.processCleanup), 0);
  });

  it("a broken all-time counter loses its count, never the beat or the day's count (heartbeat)", async () => {
    const Noop = defineJob({ name: "Noop", perform() {} });
    await createClient({ transport: t.redis }).push(Noop, []);
    await call("RPUSH", "stat:processed", "not a counter");
    const errors: unknown[] = [];
    t.worker = testWorker(t.redis, { jobs: [Noop], heartbeatInterval: 0.05, onError: (e) => void errors.push(e) });
    await t.worker.run();
    const day = `stat:processed:${new Date().toISOString().slice(0, 10)}`;
    await waitFor(async () => Number(await call("GET", day)) === 1, "the day's count written");
    assert.deepEqual(errors, []);
  });

  it("a deploy mark whose marks hash is of another type leaves no lock behind", async () => {
    const client = createClient({ transport: t.redis });
    const at = new Date(Date.UTC(2026, 10, 24, 12, 0));
    await call("SET", "20261124-marks", "not a hash");
    await assert.rejects(markDeploy(client, "v1", { at }), /WRONGTYPE/);
    assert.equal(await call("EXISTS", "deploylock-v1"), 0);
    await call("DEL", "20261124-marks");
    assert.equal(await markDeploy(client, "v1", { at }), true);
  });

  it("clearing a queue when a registry is of another type leaves it listed and whole (detach)", async () => {
    const client = createClient({ transport: t.redis, features: [unique] });
    await call("SADD", "queues", "default");
    await call("LPUSH", "queue:default", job("c1"));
    await call("SET", k.uniqueQueues, "not a set");
    await assert.rejects(new Queue(client, "default").clear(), /WRONGTYPE/);
    assert.equal(await call("SISMEMBER", "queues", "default"), 1);
    assert.equal(await call("LLEN", "queue:default"), 1);
  });
}, ["memory", "ioredis"]);
