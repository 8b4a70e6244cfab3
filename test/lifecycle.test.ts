import { it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, pollOnce, silentLogger, type Transport } from "../mod.ts";
import { Poller } from "../src/server/poller.ts";
import type { Script } from "../src/transport/script.ts";
import { TransportError } from "../src/transport/transport_error.ts";
import { heldCount, plantHeld } from "./support/held.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";

eachTarget("lifecycle", (t) => {
  it("heartbeat registers the process and its in-flight work as Sidekiq does", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const Busy = defineJob({
      name: "Busy",
      async perform(_ctx, _n: number) {
        await gate;
      },
    });
    const jid = await createClient({ transport: t.redis }).push(Busy, [1]);
    t.worker = testWorker(t.redis, {
      jobs: [Busy],
      concurrency: 3,
      tag: "app",
      labels: ["blue"],
      queues: ["default", "other"],
    });
    await t.worker.run();
    await waitFor(() => t.worker!.running().length === 1, "job running");
    await t.worker.beat();
    assert.deepEqual(await t.redis.call("SMEMBERS", "processes"), [t.worker.identity]);
    const [infoJson, busy, beat, quiet, concurrency] =
      (await t.redis.call("HMGET", t.worker.identity, "info", "busy", "beat", "quiet", "concurrency")) as string[];
    const info = JSON.parse(infoJson);
    assert.equal(info.identity, t.worker.identity);
    assert.equal(info.concurrency, 3);
    assert.deepEqual(info.queues, ["default", "other"]);
    assert.equal(info.tag, "app");
    assert.deepEqual(info.labels, ["blue"]);
    assert.equal(typeof info.pid, "number");
    assert.match(t.worker.identity, new RegExp(`^.+:${info.pid}:[0-9a-f]{12}$`));
    assert.deepEqual([busy, quiet, concurrency], ["1", "false", "3"]);
    assert.ok(Math.abs(Number(beat) - Date.now() / 1000) < 5);
    assert.ok(Number(await t.redis.call("TTL", t.worker.identity)) > 50);
    const work = (await t.redis.call("HGETALL", `${t.worker.identity}:work`)) as string[];
    assert.equal(work.length, 2);
    const entry = JSON.parse(work[1]);
    assert.equal(entry.queue, "default");
    assert.equal(typeof entry.payload, "string", "payload is the raw job string");
    assert.equal(JSON.parse(entry.payload).jid, jid);
    release();
    await t.worker.stop();
    assert.deepEqual(await t.redis.call("SMEMBERS", "processes"), []);
    assert.equal(await t.redis.call("EXISTS", `${t.worker.identity}:work`), 0);
    assert.equal(await t.redis.call("HLEN", "edgekiq:inflight"), 0, "private lists unregistered");
  });

  it("acts on remote signals on the next beat: TSTP quiets, TERM stops", async () => {
    const Noop = defineJob({ name: "Noop", perform() {} });
    t.worker = testWorker(t.redis, { jobs: [Noop] });
    await t.worker.run();
    await t.redis.call("LPUSH", `${t.worker.identity}-signals`, "TSTP");
    assert.equal(await t.worker.beat(), "TSTP");
    await waitFor(async () => (await t.redis.call("HGET", t.worker!.identity, "quiet")) === "true", "quiet flag");
    await t.redis.call("LPUSH", `${t.worker.identity}-signals`, "TERM");
    await t.worker.beat();
    await t.worker.stopped;
    assert.deepEqual(await t.redis.call("SMEMBERS", "processes"), []);
  });

  it("quiet stops fetching and gives prefetched jobs back", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const Held = defineJob({
      name: "Held",
      async perform() {
        started++;
        await gate;
      },
    });
    await createClient({ transport: t.redis }).pushBulk(Held, Array.from({ length: 10 }, () => []));
    t.worker = testWorker(t.redis, { jobs: [Held], concurrency: 2 });
    await t.worker.run();
    await waitFor(() => started === 2, "two running");
    await t.worker.quiet();
    assert.equal(await t.redis.call("LLEN", "queue:default"), 8, "prefetched jobs back on the queue");
    assert.equal(await heldCount(t.redis, t.worker.identity), 2, "running jobs stay held");
    release();
    await t.worker.stop();
    assert.equal(started, 2);
    assert.equal(await heldCount(t.redis, t.worker.identity), 0);
  });

  it("hard shutdown aborts ctx.signal and puts unfinished jobs back, never into retry", async () => {
    let aborted = 0;
    const Stubborn = defineJob({ name: "Stubborn", perform: () => new Promise(() => {}) });
    const Polite = defineJob({
      name: "Polite",
      perform: (ctx) =>
        new Promise((_, reject) => ctx.signal.addEventListener("abort", () => (aborted++, reject(ctx.signal.reason)))),
    });
    const client = createClient({ transport: t.redis });
    const a = await client.push(Stubborn, []);
    const b = await client.push(Polite, []);
    t.worker = testWorker(t.redis, { jobs: [Stubborn, Polite], timeout: 0.2 });
    await t.worker.run();
    await waitFor(() => t.worker!.running().length === 2, "both running");
    const t0 = Date.now();
    await t.worker.stop();
    assert.ok(Date.now() - t0 < 4500, "stop bounded by timeout + 3 s grace");
    assert.equal(aborted, 1);
    const queued = ((await t.redis.call("LRANGE", "queue:default", 0, -1)) as string[]).map((r) => JSON.parse(r).jid)
      .sort();
    assert.deepEqual(queued, [a, b].sort());
    assert.equal(await heldCount(t.redis, t.worker.identity), 0);
    assert.equal(await t.redis.call("ZCARD", "retry"), 0);
  });

  it("closes the shutdown race: a job finishing right after hard shutdown put it back runs once", async () => {
    let runs = 0;
    const Racy = defineJob({
      name: "Racy",
      async perform(ctx) {
        runs++;
        if (runs > 1) return;
        // Ignore the abort; finish only once hard shutdown has requeued us.
        await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));
        await waitFor(async () => Number(await t.redis.call("LLEN", "queue:default")) === 1, "requeued copy");
      },
    });
    await createClient({ transport: t.redis }).push(Racy, []);
    t.worker = testWorker(t.redis, { jobs: [Racy], timeout: 0.1 });
    await t.worker.run();
    await waitFor(() => runs === 1, "first run");
    await t.worker.stop();
    assert.equal(await t.redis.call("LLEN", "queue:default"), 0, "the ack took the requeued copy back");
    assert.equal(await heldCount(t.redis, t.worker.identity), 0);
    const second = testWorker(t.redis, { jobs: [Racy] });
    await second.run();
    await new Promise((r) => setTimeout(r, 200));
    await second.stop();
    assert.equal(runs, 1);
  });

  it("keeps a job held while its retry cannot be written, and writes it once Redis takes writes (Sidekiq #4141)", async () => {
    let readonly = true;
    // The retry is written by the settle script (outcome and ack in one step, applied once).
    const failing: Transport = new Proxy(t.redis, {
      get(t, prop, receiver) {
        if (prop === "script") {
          return (script: Script<unknown>, keys: string[], args: (string | number)[]) =>
            readonly && script.name === "settle" && keys[2] === "retry"
              ? Promise.reject(
                new TransportError("readonly", "READONLY You can't write against a read only replica."),
              )
              : t.script(script, keys, args);
        }
        const value = Reflect.get(t, prop, receiver);
        return typeof value === "function" ? value.bind(t) : value;
      },
    });
    const errors: string[] = [];
    const Fails = defineJob({
      name: "Fails",
      perform() {
        throw new Error("x");
      },
    });
    await createClient({ transport: t.redis }).push(Fails, []);
    t.worker = testWorker(failing, { jobs: [Fails], onError: (_e, ctx) => void errors.push(String(ctx.context)) });
    await t.worker.run();
    await waitFor(() => errors.filter((e) => e === "writing retry").length >= 2, "retry write failing, retried");
    await t.worker.quiet();
    assert.equal(await heldCount(t.redis, t.worker.identity), 1, "not acked, still held by its worker");
    assert.equal(await t.redis.call("ZCARD", "retry"), 0);
    readonly = false;
    await waitFor(async () => Number(await t.redis.call("ZCARD", "retry")) === 1, "the retry written after the outage");
    await waitFor(async () => (await heldCount(t.redis, t.worker!.identity)) === 0, "then acknowledged");
  });

  it("buries a job whose outcome can never be written, with the reason, instead of holding it forever", async () => {
    const broken: Transport = new Proxy(t.redis, {
      get(t, prop, receiver) {
        if (prop === "script") {
          return (script: Script<unknown>, keys: string[], args: (string | number)[]) =>
            script.name === "settle" && keys[2] === "retry"
              ? Promise.reject(new TransportError("wrongtype", "WRONGTYPE Operation against a key"))
              : t.script(script, keys, args);
        }
        const value = Reflect.get(t, prop, receiver);
        return typeof value === "function" ? value.bind(t) : value;
      },
    });
    const Fails = defineJob({
      name: "Fails",
      perform() {
        throw new Error("x");
      },
    });
    const jid = await createClient({ transport: t.redis }).push(Fails, []);
    t.worker = testWorker(broken, { jobs: [Fails], onError: () => {} });
    await t.worker.run();
    await waitFor(async () => Number(await t.redis.call("ZCARD", "dead")) === 1, "buried");
    const dead = JSON.parse(((await t.redis.call("ZRANGE", "dead", 0, -1)) as string[])[0]);
    assert.equal(dead.jid, jid);
    assert.equal(dead.error_class, "TransportError");
    assert.match(dead.error_message, /Cannot record the job's outcome \(writing retry\): WRONGTYPE/);
    await waitFor(async () => (await heldCount(t.redis, t.worker!.identity)) === 0, "acknowledged");
  });

  it("poller promotes due scheduled and retry jobs in batches, with enqueued_at and middleware", async () => {
    const client = createClient({ transport: t.redis });
    const now = Date.now() / 1000;
    const due = Array.from(
      { length: 250 },
      (_, i) => [String(now - 10), JSON.stringify({ class: "S", args: [i], queue: i % 2 ? "a" : "b", jid: `j${i}` })],
    );
    await t.redis.call("ZADD", "schedule", ...due.flat());
    await t.redis.call(
      "ZADD",
      "retry",
      String(now - 1),
      JSON.stringify({ class: "R", args: [], queue: "a", jid: "r1", retry_count: 0 }),
    );
    await t.redis.call(
      "ZADD",
      "schedule",
      String(now + 3600),
      JSON.stringify({ class: "F", args: [], queue: "a", jid: "future" }),
    );
    const tagged = createClient({
      transport: t.redis,
      middleware: [(p, _c, next) => {
        p.promoted = true;
        return next();
      }],
    });
    const poller = new Poller({ client: tagged, logger: silentLogger });
    const trips = t.redis.counters.roundTrips;
    const result = await poller.runOnce();
    assert.equal(result.promoted, 251);
    assert.ok(t.redis.counters.roundTrips - trips <= 12, `round trips ${t.redis.counters.roundTrips - trips}`);
    assert.equal(await t.redis.call("ZCARD", "schedule"), 1);
    assert.equal(await t.redis.call("ZCARD", "retry"), 0);
    assert.deepEqual(((await t.redis.call("SMEMBERS", "queues")) as string[]).sort(), ["a", "b"]);
    assert.equal(await t.redis.call("LLEN", "queue:a"), 126);
    const job = JSON.parse((await t.redis.call("RPOP", "queue:a")) as string);
    assert.equal(job.promoted, true);
    assert.ok(Math.abs(job.enqueued_at - Date.now() / 1000) < 5);
    void client;
  });

  it("poller prunes dead processes once a minute and recovers orphans, counting only jobs that ran", async () => {
    const poisoned: string[] = [];
    const poller = new Poller({
      client: createClient({ transport: t.redis }),
      logger: silentLogger,
      onPoison: (raw) => void poisoned.push(raw),
    });
    const ghost = "ghost:1:abcdefabcdef";
    const job = (jid: string) => JSON.stringify({ class: "X", args: [], queue: "default", jid });
    // Tokens 1-2 had started (running or finished, ack not yet sent); 3-4 were prefetched.
    await t.redis.call("SADD", "processes", ghost);
    await plantHeld(t.redis, { identity: ghost, jobs: ["p", "a", "b", "c"].map(job), started: 2 });
    const r1 = await poller.runOnce();
    assert.equal(r1.pruned, 1);
    assert.equal(r1.recovered, 4);
    const queued = (await t.redis.call("LRANGE", "queue:default", 0, -1)) as string[];
    // Back at the pop end in their order (p pops first); all are suspects, only the two that ran counted.
    assert.deepEqual(queued.map((r) => JSON.parse(r).jid), ["c", "b", "a", "p"]);
    assert.deepEqual(queued.map((r) => JSON.parse(r).edgekiq_recovered), [0, 0, 1, 1]);
    assert.equal(await t.redis.call("HLEN", "edgekiq:inflight"), 0);
    // "p" keeps killing its process, alone: the third death buries it, with why.
    let raw = queued[3];
    for (let i = 0; i < 2; i++) {
      await t.redis.call("LREM", "queue:default", 0, raw);
      await plantHeld(t.redis, { identity: ghost, jobs: [raw], started: 1 });
      await poller.runOnce();
      raw = ((await t.redis.call("LRANGE", "queue:default", 0, -1)) as string[]).find((r) =>
        JSON.parse(r).jid === "p"
      )!;
    }
    assert.equal(raw, undefined, "no longer queued");
    assert.equal(poisoned.length, 1);
    const dead = JSON.parse(poisoned[0]);
    assert.equal(dead.jid, "p");
    assert.equal(dead.error_class, "Edgekiq::PoisonPill");
    assert.match(dead.error_message, /running in 3 processes that died/);
    assert.equal(typeof dead.failed_at, "number");
    assert.deepEqual(await t.redis.call("ZRANGE", "dead", 0, -1), poisoned);
    const left = ((await t.redis.call("LRANGE", "queue:default", 0, -1)) as string[]).map((r) => JSON.parse(r).jid);
    assert.deepEqual(left.sort(), ["a", "b", "c"], "neighbours stay queued");
  });

  it("recovers an orphan while two of its own capsules share a queue", async () => {
    const ran: string[] = [];
    const Rec = defineJob({
      name: "Rec",
      perform(ctx) {
        ran.push(ctx.jid);
      },
    });
    const ghost = "ghost:2:abcdefabcdef";
    const raw = JSON.stringify({ class: "Rec", args: [], queue: "default", jid: "orphan2" });
    const held = await plantHeld(t.redis, { identity: ghost, jobs: [raw] });
    t.worker = testWorker(t.redis, {
      jobs: [Rec],
      capsules: { a: { queues: ["default"], concurrency: 1 }, b: { queues: ["default"], concurrency: 1 } },
      poller: true,
      pollInitialWait: 0,
      pollIntervalAverage: 0.2,
    });
    await t.worker.run();
    await waitFor(() => ran.includes("orphan2"), "the orphaned job to be recovered and run");
    assert.equal(await t.redis.call("EXISTS", held), 0);
  });

  it("a worker's poller registers and enqueues its periodic schedules; pollOnce does it too", async () => {
    const ran: number[] = [];
    const Tick = defineJob({ name: "Tick", perform: () => void ran.push(Date.now()) });
    t.worker = testWorker(t.redis, {
      jobs: [Tick],
      periodic: [{ every: 1, job: Tick }],
      poller: true,
      pollInitialWait: 0,
      pollIntervalAverage: 0.1,
    });
    await t.worker.run();
    await waitFor(() => ran.length >= 2, "two ticks run");
    await t.worker.stop();
    t.worker = undefined;
    const client = createClient({ transport: t.redis });
    const now = Date.now() + 5000;
    assert.ok((await pollOnce({ client, now })).features.periodic >= 1, "due ticks enqueued by a serverless poll");
    assert.equal((await pollOnce({ client, now })).features.periodic, 0, "and not again");
  });

  it("over HTTP the heartbeat carries the poll check: a due job is promoted by a beat, no poll command of its own", async () => {
    const scripts: string[] = [];
    const inner = t.redis;
    const http = Object.create(inner) as Transport;
    Object.defineProperty(http, "blocking", { value: false });
    http.script = (script, keys, args) => (scripts.push(script.name), inner.script(script, keys, args));
    const ran: string[] = [];
    const Later = defineJob({ name: "Later", perform: (ctx) => void ran.push(ctx.jid) });
    const jid = await createClient({ transport: t.redis }).push(Later, [], { in: 3600 });
    await t.redis.call(
      "ZADD",
      "schedule",
      String(Date.now() / 1000 - 1),
      (await t.redis.call("ZRANGE", "schedule", 0, 0) as string[])[0],
    );
    t.worker = testWorker(http, { jobs: [Later], poller: true, pollMaxMs: 50 });
    await t.worker.run(); // the first beat runs the check: the job is due
    await waitFor(() => ran.includes(jid!), "the scheduled job promoted and run");
    assert.equal(scripts.filter((name) => name === "pollCheck").length, 0, "no poll check of its own");
    assert.ok(scripts.includes("heartbeat"));
  });

  it("the poll check says when the next entry comes due: never one already due, never +inf", async () => {
    const client = createClient({ transport: t.redis });
    const poller = new Poller({ client, logger: silentLogger });
    const entry = (jid: string) => JSON.stringify({ class: "S", args: [], queue: "q", jid });
    assert.equal((await poller.runOnce()).nextDueAt, undefined, "nothing waits");
    const now = Date.now() / 1000;
    await t.redis.call(
      "ZADD",
      "schedule",
      String(now - 1),
      entry("due"),
      String(now + 30),
      entry("b"),
      "+inf",
      entry("c"),
    );
    await t.redis.call("ZADD", "retry", String(now + 12.25), entry("r"));
    const first = await poller.runOnce();
    assert.equal(first.promoted, 1);
    assert.ok(Math.abs(first.nextDueAt! - (now + 12.25) * 1000) < 1, `next ${first.nextDueAt} (retry's entry)`);
    await t.redis.call("ZREM", "retry", entry("r"));
    assert.ok(Math.abs((await poller.runOnce()).nextDueAt! - (now + 30) * 1000) < 1, "then schedule's");
    await t.redis.call("ZREM", "schedule", entry("b"));
    assert.equal((await poller.runOnce()).nextDueAt, undefined, "an entry scored +inf never comes due");
  });

  it("one poller of a fleet wakes for a due time: the first to see it claims it, a sooner entry moves the claim", async () => {
    const client = createClient({ transport: t.redis });
    const poller = (identity?: string) => new Poller({ client, logger: silentLogger, identity });
    const [a, b] = [poller("a:1:aaaaaaaaaaaa"), poller("b:2:bbbbbbbbbbbb")];
    const entry = (jid: string) => JSON.stringify({ class: "S", args: [], queue: "q", jid });
    const now = Date.now() / 1000;
    await t.redis.call("ZADD", "schedule", String(now + 30), entry("later"));
    assert.ok((await a.runOnce()).nextDueAt, "the first to see it claims it");
    assert.equal((await b.runOnce()).nextDueAt, undefined, "the other keeps its interval");
    assert.ok((await a.runOnce()).nextDueAt, "the claimer is told again");
    assert.ok((await poller().runOnce()).nextDueAt, "a poll without identity (serverless) is always told");
    await t.redis.call("ZADD", "schedule", String(now + 10), entry("sooner"));
    assert.ok(
      Math.abs((await b.runOnce()).nextDueAt! - (now + 10) * 1000) < 1,
      "a sooner entry: whoever sees it first",
    );
    assert.equal((await a.runOnce()).nextDueAt, undefined);
  });

  it("a worker's poller wakes when a scheduled job comes due, not up to an interval later", async () => {
    let ranAt = 0;
    const Soon = defineJob({ name: "Soon", perform: () => void (ranAt = Date.now()) });
    await createClient({ transport: t.redis }).push(Soon, [], { in: 2 });
    const at = Number(((await t.redis.call("ZRANGE", "schedule", 0, 0, "WITHSCORES")) as string[])[1]);
    // Polls 30-90 s apart: only the due time can bring this poll on time.
    t.worker = testWorker(t.redis, { jobs: [Soon], poller: true, pollIntervalAverage: 60, pollInitialWait: 0 });
    await t.worker.run();
    await waitFor(() => ranAt > 0, "the job ran", 15_000);
    const late = ranAt - at * 1000;
    assert.ok(late >= 0 && late < 2000, `ran ${late} ms after its time`);
  });

  it("over HTTP a poll of its own comes when a job comes due before the next beat, and none while idle", async () => {
    const scripts: string[] = [];
    const inner = t.redis;
    const http = Object.create(inner) as Transport;
    Object.defineProperty(http, "blocking", { value: false });
    http.script = (script, keys, args) => (scripts.push(script.name), inner.script(script, keys, args));
    let ranAt = 0;
    const Soon = defineJob({ name: "Soon", perform: () => void (ranAt = Date.now()) });
    await createClient({ transport: t.redis }).push(Soon, [], { in: 2 });
    const at = Number(((await t.redis.call("ZRANGE", "schedule", 0, 0, "WITHSCORES")) as string[])[1]);
    t.worker = testWorker(http, { jobs: [Soon], poller: true, pollMaxMs: 200, heartbeatInterval: 50 });
    await t.worker.run(); // the first beat's check says the job comes due in 2 s; the next beat is 50 s away
    await waitFor(() => ranAt > 0, "the job ran", 15_000);
    assert.ok(ranAt - at * 1000 < 3000, `ran ${ranAt - at * 1000} ms after its time`);
    assert.equal(
      scripts.filter((name) => name === "pollCheck").length,
      1,
      "one poll check of its own, at the due time",
    );
  });

  it("never recovers a live process's held jobs", async () => {
    const alive = "alive:1:abcdefabcdef";
    await t.redis.call("HSET", alive, "info", "{}");
    await plantHeld(t.redis, { identity: alive, jobs: ["{}"], started: 1 });
    const r = await new Poller({ client: createClient({ transport: t.redis }), logger: silentLogger }).runOnce();
    assert.equal(r.recovered, 0);
    assert.equal(await heldCount(t.redis, alive), 1);
  });
});
