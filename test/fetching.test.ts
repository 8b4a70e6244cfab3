import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, createClient, createWorker, defineJob, drain, type Transport, TransportError } from "../mod.ts";
import { aroundScripts, markScript } from "./support/outcome_writes.ts";
import { Prefetch } from "../src/server/prefetch.ts";
import { ReliableFetch } from "../src/server/reliable_fetch.ts";
import { EMPTY_FOR_MAX_MS, EMPTY_FOR_MS, EmptyQueues, FEW_QUEUES } from "../src/server/empty_queues.ts";
import { parseQueues } from "../src/server/queues.ts";
import { FETCH_FIXED_KEYS, type FetchResult, POP } from "../src/scripts/fetch.ts";
import { FETCH_BYTES } from "../src/scripts/pop_first.ts";
import { keys } from "../src/keys.ts";
import { recoverOrphans } from "../src/server/recovery.ts";
import type { Script } from "../src/transport/script.ts";
import type { RedisArg } from "../src/transport/transport.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { heldCount } from "./support/held.ts";
import { testWorker } from "./support/worker.ts";

describe("Prefetch", () => {
  it("stays at the floor until both a trip and a job are timed", () => {
    const p = new Prefetch({ concurrency: 10, min: 20, max: 100 });
    assert.equal(p.size, 20);
    p.trip(0.3);
    assert.equal(p.size, 20);
  });

  it("keeps the floor for jobs slower than a round trip", () => {
    const p = new Prefetch({ concurrency: 10, min: 20, max: 100 });
    p.trip(0.3);
    p.job(50);
    assert.equal(p.size, 20);
  });

  it("grows toward the ceiling for jobs that finish within a round trip, and shrinks back", () => {
    const p = new Prefetch({ concurrency: 10, min: 20, max: 100 });
    p.trip(0.5);
    p.job(0.2); // 2 * 10 * 0.5 / 0.2 = 50
    assert.equal(p.size, 50);
    for (let i = 0; i < 50; i++) p.job(0.01);
    assert.equal(p.size, 100, "capped at the ceiling");
    for (let i = 0; i < 100; i++) p.job(40);
    assert.equal(p.size, 20, "slow jobs bring it back to the floor");
  });

  it("is fixed when min and max are equal", () => {
    const p = new Prefetch({ concurrency: 4, min: 0, max: 0 });
    p.trip(1);
    p.job(0.001);
    assert.equal(p.size, 0);
  });
});

describe("EmptyQueues", () => {
  const names = Array.from({ length: FEW_QUEUES + 4 }, (_, i) => `q${i}`);
  const loaded = names.length - 1;
  // Every fetch finds all but the last (loaded) queue empty.
  const fetchAt = (empties: EmptyQueues, clock: { now: number }) => {
    const named = empties.named(true);
    const taken = named.indexOf(names[loaded]);
    empties.noted(named, { empty: Array.from({ length: Math.max(0, taken) }, (_, p) => p), taken, sentAt: clock.now });
    return named.length;
  };

  it("leaves a queue found empty out for longer each time it is found empty again, up to the cap", () => {
    const clock = { now: 1_000_000 };
    const empties = new EmptyQueues(parseQueues(names), { now: () => clock.now });
    const asked: number[] = []; // when every queue was named again, ms after the first fetch
    const start = clock.now;
    for (; clock.now - start < 3000; clock.now += 10) {
      if (fetchAt(empties, clock) === names.length) asked.push(clock.now - start);
    }
    // 0, then +50, +100, +200, +400, +400, ...: a long-empty queue is asked 2.5 times a second, not 20.
    const gaps = asked.slice(1).map((t, i) => t - asked[i]);
    assert.deepEqual(gaps.slice(0, 5), [
      EMPTY_FOR_MS,
      EMPTY_FOR_MS * 2,
      EMPTY_FOR_MS * 4,
      EMPTY_FOR_MAX_MS,
      EMPTY_FOR_MAX_MS,
    ]);
    assert.ok(gaps.every((g) => g <= EMPTY_FOR_MAX_MS), JSON.stringify(gaps));
  });

  it("starts a queue's count again once jobs are taken from it", () => {
    const clock = { now: 1_000_000 };
    const empties = new EmptyQueues(parseQueues(names), { now: () => clock.now });
    for (let i = 0; i < 300; i++, clock.now += 10) fetchAt(empties, clock); // q0 is on its longest wait now
    // Jobs arrive on q0: the next call naming it takes from it.
    clock.now += EMPTY_FOR_MAX_MS;
    const named = empties.named(true);
    assert.equal(named[0], "q0");
    empties.noted(named, { empty: [], taken: 0, sentAt: clock.now });
    // Found empty once more: back to the shortest wait.
    empties.noted(["q0"], { empty: [0], taken: -1, sentAt: clock.now });
    clock.now += EMPTY_FOR_MS - 1;
    assert.ok(!empties.named(true).includes("q0"), "sits out the first wait");
    clock.now += 1;
    assert.ok(empties.named(true).includes("q0"), "and is asked again after it");
  });

  it(`names every queue in every call with ${FEW_QUEUES} queues or fewer, and when not taking`, () => {
    const few = new EmptyQueues(parseQueues(names.slice(0, FEW_QUEUES)));
    few.noted(names.slice(0, FEW_QUEUES), { empty: [0, 1, 2], taken: 3, sentAt: Date.now() });
    assert.equal(few.named(true).length, FEW_QUEUES);
    const many = new EmptyQueues(parseQueues(names));
    many.noted(names, { empty: [0, 1, 2], taken: 3, sentAt: Date.now() });
    assert.equal(many.named(true).length, names.length - 3);
    assert.equal(many.named(false).length, names.length);
  });
});

describe("queue order", () => {
  it("orders a subset as the whole list would, leaving the others out", () => {
    assert.deepEqual(
      parseQueues(["a", "b", "c", "d"]).order(undefined, ["b", "d"]),
      ["b", "d"],
      "strict keeps its order",
    );
    const weighted = parseQueues(["a,3", "b,5", "c,1"]);
    // A fixed sequence of draws: the same test on every run.
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    let aFirst = 0;
    for (let i = 0; i < 20_000; i++) {
      const order = weighted.order(random, ["a", "c"]);
      assert.deepEqual([...order].sort(), ["a", "c"]);
      if (order[0] === "a") aFirst++;
    }
    // a leads with probability 3 / (3 + 1) among a and c.
    assert.ok(Math.abs(aFirst / 20_000 - 0.75) < 0.02, `a first ${aFirst} of 20,000`);
  });
});

describe("prefetch option", () => {
  for (const bad of [-1, 1.5]) {
    it(`rejects prefetch ${bad} with a message naming it`, () => {
      assert.throws(
        () =>
          createWorker({
            transport: {} as Transport,
            jobs: [],
            capsules: { main: { queues: ["default"], prefetch: bad } },
            handleSignals: false,
          }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message ===
            `Cannot create capsule 'main' as 'prefetch' must be a whole number >= 0: current value is ${bad}`,
      );
    });
  }
});

/** Wraps a transport to watch its fetch scripts: how many, how many at once, and how many jobs they asked for at once. */
function watchFetches(inner: Transport) {
  const seen = {
    calls: 0,
    inFlight: 0,
    peak: 0,
    asked: 0,
    peakAsked: 0,
    named: [] as number[],
    got: [] as number[],
  };
  const transport: Transport = {
    kind: inner.kind,
    blocking: inner.blocking,
    counters: inner.counters,
    call: (command, ...args) => inner.call(command, ...args),
    block: (command, options) => inner.block(command, options),
    pipeline: (commands, options) => inner.pipeline(commands, options),
    close: () => inner.close(),
    async script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      if (script.name === "pop") {
        // The basic fetch's pop: KEYS are the queues named, then the paused set.
        seen.named.push(keys.length - 1);
        return inner.script(script, keys, args);
      }
      if (script.name !== "fetch") return inner.script(script, keys, args);
      const count = Number(args[2]); // ARGV: identity, ttl, count, ...
      seen.calls++;
      // KEYS: six fixed, the queues named, then u (ARGV[10]) keys to release.
      seen.named.push(keys.length - FETCH_FIXED_KEYS - Number(args[9]));
      seen.peak = Math.max(seen.peak, ++seen.inFlight);
      seen.peakAsked = Math.max(seen.peakAsked, seen.asked += count);
      try {
        const result = await inner.script(script, keys, args);
        seen.got.push((result as FetchResult).jobs.length);
        return result;
      } finally {
        seen.inFlight--;
        seen.asked -= count;
      }
    },
  };
  return { transport, seen };
}

/** `n` no-op jobs queued, and how many have run. */
async function backlog(redis: Transport, n: number) {
  const state = { done: 0 };
  const Quick = defineJob({
    name: "Quick",
    perform() {
      state.done++;
    },
  });
  await createClient({ transport: redis }).pushBulk(Quick, Array.from({ length: n }, () => []));
  return { Quick, state };
}

/** A reliable fetcher of `queues` for process `identity`, its entry alive and its held hash registered. */
async function registeredFetch(redis: Transport, identity: string, queues: string[], transport = redis) {
  const k = keys();
  const fetcher = new ReliableFetch({
    transport,
    keys: k,
    identity,
    capsule: "default",
    queues: parseQueues(queues),
    blockSeconds: 1,
    ttl: 60,
  });
  await redis.call("HSET", k.process(identity), "beat", 1);
  await fetcher.register();
  return fetcher;
}

/** A job's payload on `queue`. */
const rawJob = (jid: string, queue: string) => JSON.stringify({ class: "J", args: [], queue, jid });

/** `inner`, with each run of the script `name` shown to `seen` first. */
function spyScript(inner: Transport, name: string, seen: (keys: string[], argv: RedisArg[]) => void): Transport {
  return Object.create(inner, {
    script: {
      value: (script: Script<unknown>, scriptKeys: string[], argv: RedisArg[]) => {
        if (script.name === name) seen(scriptKeys, argv);
        return inner.script(script, scriptKeys, argv);
      },
    },
  });
}

eachTarget("fetching", (t) => {
  it("drains a backlog in batches, never more than two fetches on their way", async () => {
    const { Quick, state } = await backlog(t.redis, 2000);
    const { transport, seen } = watchFetches(t.redis);
    t.worker = testWorker(transport, { jobs: [Quick], concurrency: 4 });
    await t.worker.run();
    await waitFor(() => state.done === 2000, "2,000 jobs");
    await t.worker.stop();
    assert.ok(seen.peak <= 2, `at most two fetches at once (saw ${seen.peak})`);
    assert.ok(seen.calls <= 2000 / 4, `batches of 4 or more on average (${seen.calls} fetches for 2,000 jobs)`);
    assert.equal(await heldCount(t.redis, t.worker.identity), 0, "every job acked");
    if (t.target.name !== "memory") {
      // Over a socket a round trip takes far longer than a no-op job, so the
      // default prefetch grows past its floor of 2 x concurrency.
      assert.ok(seen.peakAsked > 4 + 8, `prefetch grew: asked for ${seen.peakAsked} at once`);
    }
  });

  it("does not ask again while a job runs and the queue is empty", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const Long = defineJob({
      name: "Long",
      async perform() {
        started++;
        await gate;
      },
    });
    await createClient({ transport: t.redis }).push(Long, []);
    const { transport, seen } = watchFetches(t.redis);
    // One slot, busy: no processor is waiting, so nothing should poll.
    t.worker = testWorker(transport, { jobs: [Long], concurrency: 1 });
    await t.worker.run();
    await waitFor(() => started === 1, "the job started");
    await waitFor(() => seen.inFlight === 0, "fetches settled");
    const before = seen.calls;
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(seen.calls - before <= 1, `fetches while busy and empty: ${seen.calls - before}`);
    release();
    await t.worker.stop();
  });

  it("drain() starts with nothing held and grows its prefetch for quick jobs over a socket", async () => {
    const { Quick, state } = await backlog(t.redis, 2000);
    const { transport, seen } = watchFetches(t.redis);
    const result = await drain({ transport, jobs: [Quick], budgetMs: 20_000, concurrency: 4 });
    assert.deepEqual([result.processed, result.remaining, state.done], [2000, 0, 2000]);
    assert.ok(seen.peak <= 2, `at most two fetches at once (saw ${seen.peak})`);
    if (t.target.name !== "memory") {
      assert.ok(seen.peakAsked > 4, `prefetch grew: asked for ${seen.peakAsked} at once`);
      assert.ok(result.commandsPerJob < 0.1, `commands per job ${result.commandsPerJob}`);
    }
  });

  it("keeps an explicit prefetch: never asks for more than concurrency + prefetch", async () => {
    const { Quick, state } = await backlog(t.redis, 300);
    const { transport, seen } = watchFetches(t.redis);
    t.worker = testWorker(transport, {
      jobs: [Quick],
      capsules: { main: { queues: ["default"], concurrency: 2, prefetch: 1 } },
    });
    await t.worker.run();
    await waitFor(() => state.done === 300, "300 jobs");
    assert.ok(seen.peakAsked <= 3, `asked for ${seen.peakAsked} at once`);
  });

  for (const fetch of ["reliable", "basic"] as const) {
    it(`a busy capsule of 100 queues names the few with work, not all 100, and a job on a quiet one still runs (${fetch})`, async () => {
      const queues = Array.from({ length: 100 }, (_, i) => `q${i}`);
      const done = new Set<string>();
      const Quick = defineJob({ name: "Quick", perform: (ctx) => void done.add(ctx.jid) });
      const client = createClient({ transport: t.redis });
      // The load on the last queue of a strict order: every fetch used to walk the 99 empty ones.
      const jids = await client.pushBulk(Quick, Array.from({ length: 3000 }, () => []), { queue: "q99" });
      const { transport, seen } = watchFetches(t.redis);
      t.worker = testWorker(transport, { jobs: [Quick], fetch, capsules: { many: { queues, concurrency: 4 } } });
      await t.worker.run();
      await waitFor(() => done.size >= 500, "500 jobs");
      const early = await client.push(Quick, [], { queue: "q0" });
      await waitFor(() => done.size === 3001, "every job, the one on q0 too", 30_000);
      assert.ok(done.has(early!) && jids.every((jid) => done.has(jid!)));
      const few = seen.named.filter((n) => n <= 2).length;
      // How many depends on the machine: a queue found empty sits out EMPTY_FOR_MS, so on a starved machine whose
      // fetches come further apart more of them name all 100. Before, every fetch named all 100.
      assert.ok(few >= 5, `fetches name few queues: ${JSON.stringify(seen.named.slice(0, 40))}`);
      assert.ok(seen.named.some((n) => n === 100), "and every queue is asked now and then");
    });
  }

  it(`a capsule of ${FEW_QUEUES} queues or fewer names every queue in every fetch (strict order exactly)`, async () => {
    const queues = Array.from({ length: FEW_QUEUES }, (_, i) => `q${i}`);
    const { Quick, state } = await backlog(t.redis, 0);
    await createClient({ transport: t.redis }).pushBulk(Quick, Array.from({ length: 500 }, () => []), {
      queue: `q${FEW_QUEUES - 1}`,
    });
    const { transport, seen } = watchFetches(t.redis);
    t.worker = testWorker(transport, { jobs: [Quick], capsules: { few: { queues, concurrency: 4 } } });
    await t.worker.run();
    await waitFor(() => state.done === 500, "500 jobs");
    assert.ok(seen.named.every((n) => n === FEW_QUEUES || n === 0), JSON.stringify(seen.named));
  });

  it("carries a finished job's outcome write in its next call, and acknowledges the job only in a later one", async () => {
    // One key per write: SET note:<jid> for every jid the frames carry (see frameWrites).
    const NOTE = markScript("noteDone", "note");
    let failures = 1;
    const after: { written: boolean; held: number }[] = [];
    let jid = "";
    const flaky = aroundScripts(t.redis, async (script, _keys, _argv, run) => {
      if (script.name === "fetch+noteDone" && failures-- > 0) {
        throw new TransportError("connection", "Connection is closed.", { maybeApplied: false });
      }
      const reply = await run();
      after.push({
        written: (await t.redis.call("GET", `note:${jid}`)) === "1",
        held: await heldCount(t.redis, "carrier"),
      });
      return reply;
    });
    const fetcher = await registeredFetch(t.redis, "carrier", ["default"], flaky);
    const uncarried: string[] = [];
    const carriable = fetcher.carries({
      uncarried: (unit) => (uncarried.push(unit.raw), Promise.resolve("ack")),
      wanted: () => {},
    });
    const Note = defineJob({ name: "Note", perform() {} });
    jid = (await createClient({ transport: t.redis }).push(Note, []))!;
    const { units } = await fetcher.take(10, 1);
    assert.equal(units.length, 1);
    after.length = 0;
    const write = { script: NOTE, keys: ["note"], args: [jid], coalesce: true };
    assert.equal(carriable(write), true, "any key is carried on a single Redis");
    fetcher.carry(units[0], { write, mayBeRequeued: false });
    // The carrying call fails before reaching Redis: nothing written, the job still held, the write kept for the next.
    await assert.rejects(fetcher.flush(), TransportError);
    assert.equal(await t.redis.call("GET", `note:${jid}`), null);
    assert.equal(await heldCount(t.redis, "carrier"), 1);
    await fetcher.flush();
    assert.deepEqual(after, [{ written: true, held: 1 }, { written: true, held: 0 }], "written first, acked after");
    assert.deepEqual(uncarried, [], "a call that may succeed again is not written another way");
    // On a cluster one call's keys share a slot: a feature's keys outside the namespace's hash tag are not carried.
    const onCluster = new ReliableFetch({
      transport: Object.create(t.redis, { keyspace: { value: "cluster" } }),
      keys: keys("", "cluster"),
      identity: "carrier2",
      capsule: "default",
      queues: parseQueues(["default"]),
      blockSeconds: 1,
      ttl: 60,
    }).carries({ uncarried: () => Promise.resolve("ack"), wanted: () => {} });
    assert.equal(onCluster(write), false, "an untagged key goes in a call of its own");
    assert.equal(onCluster({ ...write, keys: ["{edgekiq}:note"] }), true, "a key under the namespace's tag is carried");
  });

  it("a write carried while a blocking wait with a call behind it is on its way goes at once, not after the wait", async () => {
    const NOTE = markScript("noteDone", "note");
    const fetcher = await registeredFetch(t.redis, "carrier3", ["default"]);
    fetcher.carries({ uncarried: () => Promise.resolve("ack"), wanted: () => {} });
    const Note = defineJob({ name: "Note", perform() {} });
    const jid = (await createClient({ transport: t.redis }).push(Note, []))!;
    const { units } = await fetcher.take(10, 1);
    // A slot finishes its job while the others wait in Redis (1 s at most) with the call that would take the next burst.
    const controller = new AbortController();
    const waiting = fetcher.block(controller.signal, { take: 5, startNow: 0 });
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    fetcher.carry(units[0], {
      write: { script: NOTE, keys: ["note"], args: [jid], coalesce: true },
      mayBeRequeued: false,
    });
    try {
      await waitFor(async () => (await t.redis.call("GET", `note:${jid}`)) === "1", "the carried write", 3000);
      assert.ok(Date.now() - started < 700, `written ${Date.now() - started} ms later, not once the wait ended`);
    } finally {
      controller.abort();
      await waiting;
    }
  });

  it("a carried job whose process was recovered meanwhile is acknowledged by its payload: its requeued copy is taken back", async () => {
    const k = keys();
    const fetcher = await registeredFetch(t.redis, "stalled", ["default"]);
    fetcher.carries({ uncarried: () => Promise.resolve("ack"), wanted: () => {} });
    await t.redis.call("LPUSH", "queue:default", rawJob("j1", "default"));
    const [unit] = (await fetcher.take(5, 1)).units;
    // Another process recovered this one while it stalled: the job is back on its queue, the held hash gone.
    const held = k.held("stalled", "default");
    await t.redis.call("HDEL", k.heldRegistry, held);
    await t.redis.call("DEL", held);
    await t.redis.call("LPUSH", "queue:default", unit.raw);
    const write = { script: markScript("setDone", "done"), keys: ["done"], args: ["j1"], coalesce: true };
    fetcher.carry(unit, { write, mayBeRequeued: false });
    await fetcher.flush();
    assert.equal(await t.redis.call("GET", "done:j1"), "1", "the outcome is written");
    assert.equal(
      await t.redis.call("LLEN", "queue:default"),
      0,
      "the requeued copy is taken back: it does not run again",
    );
  });

  it("one held hash per capsule: recovery puts each batch back on its own queue, even with no list of queues", async () => {
    const k = keys();
    for (const listed of [true, false]) {
      await t.target.flush();
      const identity = `many:1:${listed}`;
      const fetcher = await registeredFetch(t.redis, identity, ["a", "b"]);
      await t.redis.call("LPUSH", "queue:a", rawJob("a1", "a"));
      await t.redis.call("LPUSH", "queue:b", rawJob("b1", "b"), rawJob("b2", "b"));
      assert.equal((await fetcher.take(5)).units.length, 1, "a first (strict)");
      assert.equal((await fetcher.take(5)).units.length, 2, "then b");
      assert.deepEqual(fetcher.heldKeys, [k.held(identity, "default")]);
      assert.equal(await heldCount(t.redis, identity), 3);
      // A crash before the list of queues was written: the batches name their queues.
      if (!listed) await t.redis.call("HDEL", k.held(identity, "default"), "#queues");
      await t.redis.call("DEL", k.process(identity));
      const result = await recoverOrphans({ transport: t.redis, keys: k });
      assert.equal(result.requeued, 3);
      const jids = async (q: string) =>
        ((await t.redis.call("LRANGE", q, 0, -1)) as string[]).map((raw) => JSON.parse(raw).jid);
      assert.deepEqual(await jids("queue:a"), ["a1"]);
      assert.deepEqual((await jids("queue:b")).sort(), ["b1", "b2"]);
      assert.equal(await heldCount(t.redis, identity), 0);
    }
  });

  it("sends the capsule's queue names only to register its held hash again after a recovery", async () => {
    const k = keys();
    const identity = "names:1";
    const sent: string[] = [];
    const transport = spyScript(t.redis, "fetch", (_keys, argv) => sent.push(String(argv[11])));
    const fetcher = await registeredFetch(t.redis, identity, ["a", "b"], transport);
    const held = k.held(identity, "default");
    await t.redis.call("LPUSH", "queue:b", rawJob("b1", "b"));
    assert.equal((await fetcher.take(5)).units.length, 1);
    assert.deepEqual(sent, [""], "a registered hash needs no names");
    // Another process recovered this one while it stalled: the hash and its registration are gone.
    await t.redis.call("HDEL", k.heldRegistry, held);
    await t.redis.call("DEL", held);
    await t.redis.call("LPUSH", "queue:a", rawJob("a1", "a"));
    const take = await fetcher.take(5);
    assert.deepEqual(take.units.map((u) => u.queue), ["a"]);
    assert.equal(take.reregistered, true);
    assert.deepEqual(sent, ["", "", "a,b"], "asked for the names, then sent them");
    assert.equal(await t.redis.call("HGET", held, "#queues"), "a,b");
    assert.equal(await t.redis.call("HGET", k.heldRegistry, held), identity);
    assert.equal(await t.redis.call("LLEN", "queue:a"), 0, "the first call took nothing");
  });

  it("a clean stop names the queues its held batches came from, and every queue when a batch it does not know is held", async () => {
    const k = keys();
    const identity = "stop:1";
    const released: number[] = [];
    const transport = spyScript(t.redis, "release", (scriptKeys) => released.push((scriptKeys.length - 2) / 2));
    const queues = Array.from({ length: 100 }, (_, i) => `q${i}`);
    const first = await registeredFetch(t.redis, identity, queues, transport);
    await t.redis.call("LPUSH", "queue:q7", rawJob("j1", "q7"));
    assert.equal((await first.take(5)).units.length, 1);
    assert.equal(await first.release(), 1, "the running job went back");
    assert.deepEqual(released, [1], "naming only q7");
    assert.equal(await t.redis.call("LLEN", "queue:q7"), 1);

    // A batch this fetcher never saw (a lost reply's, say) is held for q3: the narrow release refuses, the full one runs.
    released.length = 0;
    const second = await registeredFetch(t.redis, identity, queues, transport);
    assert.equal((await second.take(5)).units.length, 1, "j1 again");
    await t.redis.call("HSET", k.held(identity, "default"), "999", `q3\0${rawJob("j2", "q3")}`);
    assert.equal(await second.release(), 2);
    assert.deepEqual(released, [1, 100]);
    assert.equal(await t.redis.call("LLEN", "queue:q3"), 1);
    assert.equal(await t.redis.call("LLEN", "queue:q7"), 1);
    assert.equal(await heldCount(t.redis, identity), 0);
  });

  it("stores a batch over 7,680 bytes in pieces that fit Lua's 8 KiB buffer, and every way out of the hash drops them all", async () => {
    const k = keys();
    const identity = "pieces:1";
    const held = k.held(identity, "default");
    const fetcher = await registeredFetch(t.redis, identity, ["default"]);
    // 120 jobs of about 200 bytes: 24 KB, four pieces.
    const push = (tag: string) =>
      t.redis.call(
        "LPUSH",
        k.queue("default"),
        ...Array.from({ length: 120 }, (_, i) => rawJob(`${tag}${i}`.padEnd(150, "-"), "default")),
      );
    const stored = async () => {
      const flat = (await t.redis.call("HGETALL", held)) as string[];
      const out = new Map<string, string>();
      for (let i = 0; i < flat.length; i += 2) if (/^\d+(:\d+)?$/.test(flat[i])) out.set(flat[i], flat[i + 1]);
      return out;
    };
    const jids = (units: { raw: string }[]) => units.map((u) => JSON.parse(u.raw).jid.replace(/-+$/, ""));

    await push("a");
    const first = await fetcher.take(200);
    assert.deepEqual(jids(first.units), Array.from({ length: 120 }, (_, i) => `a${i}`), "every job, in order");
    const pieces = await stored();
    assert.ok(pieces.size > 1, `stored in ${pieces.size} field(s)`);
    for (const [field, value] of pieces) {
      assert.ok(new TextEncoder().encode(value).length <= 8192, `${field}: ${value.length} bytes`);
    }
    // Done: one ack entry drops every piece.
    for (const unit of first.units) fetcher.ack(unit, false);
    await fetcher.flush();
    assert.deepEqual([...(await stored()).keys()], [], "nothing left of a done batch");

    // Partly done, then the rest put back: the marks drop every piece with the batch.
    await push("b");
    const second = await fetcher.take(200);
    for (const unit of second.units.slice(0, 50)) fetcher.ack(unit, false);
    assert.equal(await fetcher.requeue(second.units.slice(50)), 70);
    await fetcher.flush();
    assert.deepEqual([...(await stored()).keys()], [], "nothing left of a settled batch");
    assert.equal(await t.redis.call("LLEN", k.queue("default")), 70);
    await t.redis.call("DEL", k.queue("default"));

    // Recovered after a crash: every piece's jobs go back, in order.
    await push("c");
    assert.equal((await fetcher.take(200)).units.length, 120);
    await t.redis.call("DEL", k.process(identity));
    assert.equal((await recoverOrphans({ transport: t.redis, keys: k })).requeued, 120);
    const back = ((await t.redis.call("LRANGE", k.queue("default"), 0, -1)) as string[]).reverse();
    assert.deepEqual(jids(back.map((raw) => ({ raw }))), Array.from({ length: 120 }, (_, i) => `c${i}`));
    assert.equal(await heldCount(t.redis, identity), 0);
  });

  it("moves large jobs in batches of at most 1 MiB, however many were asked for", async () => {
    const state = { done: 0 };
    const Big = defineJob({ name: "Big", perform: (_ctx, _text: string) => void state.done++ });
    await createClient({ transport: t.redis }).pushBulk(Big, Array.from({ length: 60 }, () => ["x".repeat(200_000)]));
    const { transport, seen } = watchFetches(t.redis);
    t.worker = testWorker(transport, {
      jobs: [Big],
      capsules: { big: { queues: ["default"], concurrency: 20, prefetch: 40 } },
    });
    await t.worker.run();
    await waitFor(() => state.done === 60, "60 jobs of 200 KB");
    // Asked for up to 60 at once, each fetch moved what fits in 1 MiB (five of 200 KB).
    assert.ok(seen.peakAsked > 5, `asked for ${seen.peakAsked}`);
    assert.ok(seen.got.every((n) => n <= Math.floor(FETCH_BYTES / 200_000)), JSON.stringify(seen.got));
  });

  it("a pop past the byte budget leaves the rest where it was, oldest first", async () => {
    const k = keys();
    // Ten jobs of 300 KB, oldest at the pop end: the budget (1 MiB) takes three; seven stay, in their order.
    const jobs = Array.from(
      { length: 10 },
      (_, i) => JSON.stringify({ class: "Big", jid: `j${i}`, pad: "x".repeat(300_000) }),
    );
    for (const raw of jobs) await t.redis.call("LPUSH", k.queue("big"), raw);
    const popped = await t.redis.script(POP, [k.queue("big"), k.paused], [10, "big"]);
    assert.deepEqual(popped.jobs.map((raw) => JSON.parse(raw).jid), ["j0", "j1", "j2"]);
    const left = (await t.redis.call("LRANGE", k.queue("big"), 0, -1)) as string[];
    assert.deepEqual(left.map((raw) => JSON.parse(raw).jid).reverse(), ["j3", "j4", "j5", "j6", "j7", "j8", "j9"]);
  });
});
