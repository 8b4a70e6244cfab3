/**
 * The conformance suite's fault tests: blocking calls that abort without
 * ever taking a job afterwards, replies lost on the way back (never resent
 * unless idempotent), abortable views, and Redis out of memory. Registered by
 * `conformance()` for every transport; the faults themselves come from the
 * target (a lossy proxy, a gateway that drops a reply, a tiny maxmemory).
 */
import assert from "node:assert/strict";
import { TransportError } from "../../src/transport/transport_error.ts";
import { defineScript } from "../../src/transport/script.ts";
import { isIdempotent, type Transport } from "../../src/transport/transport.ts";
import { startLossyProxy } from "../support/lossy-proxy.ts";
import { redisServerPath, startRedis, type TestRedis } from "../support/redis.ts";

/** A second transport of the target's kind, for one fault test; closed by the test. */
export interface FaultTarget {
  transport: Transport;
  close(): Promise<void>;
}

/** The fault hooks a conformance target may offer (real servers only). */
export interface FaultHooks {
  /** A transport whose next reply can be lost on its way back (Redis runs the request); null to skip. */
  lossy?(): Promise<(FaultTarget & { dropNextReply(): void }) | null>;
  /** A transport on a Redis of its own with 2 MB `maxmemory` under `noeviction`. */
  full?(): Promise<FaultTarget | null>;
}

/** The flags of a Redis that runs out of memory at once. */
export const FULL_REDIS_ARGS = ["--maxmemory", "2mb", "--maxmemory-policy", "noeviction"];

/**
 * The fault targets of a TCP transport: one through a proxy that loses
 * replies, one on a private Redis with a tiny maxmemory.
 */
export function tcpFaults(
  server: TestRedis,
  open: (url: string) => Transport,
): FaultHooks {
  return {
    async lossy() {
      const proxy = await startLossyProxy({ redisPort: server.port });
      const transport = open(proxy.url);
      return {
        transport,
        dropNextReply: () => proxy.dropNextReply(),
        close: async () => {
          await transport.close();
          await proxy.stop();
        },
      };
    },
    async full() {
      if (!redisServerPath()) return null; // REDIS_URL mode without a local redis-server
      const full = await startRedis({ args: FULL_REDIS_ARGS });
      const transport = open(full.url);
      return {
        transport,
        close: async () => {
          await transport.close();
          await full.stop();
        },
      };
    },
  };
}
/** A write: running it twice pushes twice. */
const PUSH_ONE = defineScript({
  name: "conformancePushOne",
  keys: ["list"],
  argv: ["value"],
  lua: `return redis.call("RPUSH", KEYS[1], ARGV[1])`,
  twin: (redis, keys, argv) => redis.call("RPUSH", keys[0], argv[0]),
});

/** A read, declared idempotent: a transport may send it again. */
const COUNT_ONE = defineScript({
  name: "conformanceCountOne",
  keys: ["list"],
  argv: [],
  lua: `return redis.call("LLEN", KEYS[1])`,
  twin: (redis, keys) => redis.call("LLEN", keys[0]),
  idempotent: true,
});

/** Keeps Redis busy for ARGV[1] ms: a request whose reply is slow to come. */
const BUSY_LUA = `local t0 = redis.call("TIME")
while true do
  local t = redis.call("TIME")
  if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) >= tonumber(ARGV[1]) * 1000 then return 1 end
end`;

const lostReply = (e: unknown) => e instanceof TransportError && e.kind === "connection" && e.maybeApplied === true;
const oom = (e: unknown) => e instanceof TransportError && e.kind === "oom" && /Redis is out of memory/.test(e.message);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the suite hands the fault tests. */
export interface FaultSuite {
  /** Registers one test (skipped when the target is unavailable). */
  test(title: string, fn: () => Promise<void>): void;
  /** A fresh key under the suite's prefix. */
  key(name: string): string;
  /** The target's transport. */
  transport(): Transport;
  /** The target, with its fault hooks. */
  target(): FaultHooks;
}

/**
 * Registers the fault tests inside a conformance suite.
 *
 * @example
 * ```ts
 * faultTests({ test, key, transport: () => r, target: () => target! });
 * ```
 */
export function faultTests({ test: register, key, transport, target }: FaultSuite): void {
  // Each test gets the target's transport as `r`, as the main suite names it.
  const test = (title: string, fn: (r: Transport) => Promise<void>) => register(title, () => fn(transport()));
  test("block() returns a job pushed while it waits; an abort before it starts sends nothing", async (r) => {
    const src = key("bsrc"), dst = key("bdst");
    const { signal } = new AbortController();
    if (!r.blocking) {
      await assert.rejects(
        r.block(["BLMOVE", src, dst, "RIGHT", "LEFT", 1], { signal }),
        (e: unknown) => e instanceof TransportError && /does not block/.test(e.message),
      );
      return;
    }
    const moving = r.block(["BLMOVE", src, dst, "RIGHT", "LEFT", 5], { signal });
    await sleep(50);
    await r.call("LPUSH", src, "job");
    assert.equal(await moving, "job");
    assert.deepEqual(await r.call("LRANGE", dst, 0, -1), ["job"]);
    const popping = r.block(["BRPOP", src, 5], { signal });
    await sleep(20);
    await r.call("LPUSH", src, "j2");
    assert.deepEqual(await popping, [src, "j2"]);
    await r.call("LPUSH", src, "stays");
    const before = { ...r.counters };
    const gone = new AbortController();
    gone.abort();
    assert.equal(await r.block(["BLMOVE", src, dst, "RIGHT", "LEFT", 5], { signal: gone.signal }), null);
    assert.deepEqual(r.counters, before, "nothing sent");
    assert.deepEqual(await r.call("LRANGE", src, 0, -1), ["stays"]);
  });

  test("block() aborted resolves null within 500 ms, and a job pushed afterwards stays in its list", async (r) => {
    if (!r.blocking) return;
    const src = key("asrc"), dst = key("adst");
    const controller = new AbortController();
    const waiting = r.block(["BLMOVE", src, dst, "RIGHT", "LEFT", 5], { signal: controller.signal });
    await sleep(50); // parked on the server
    const t0 = Date.now();
    controller.abort();
    assert.equal(await waiting, null);
    assert.ok(Date.now() - t0 < 500, `aborted after ${Date.now() - t0} ms`);
    await r.call("LPUSH", src, "later");
    await sleep(100); // a call still parked on the server would take it now
    assert.deepEqual(await r.call("LRANGE", src, 0, -1), ["later"]);
    assert.equal(await r.call("LLEN", dst), 0);
  });

  test("50 aborts racing pushes: every job is in its list or was returned by block(), none lost", async (r) => {
    if (!r.blocking) return;
    const src = key("rsrc"), dst = key("rdst");
    const taken: string[] = [];
    const pushed: string[] = [];
    for (let i = 0; i < 50; i++) {
      const controller = new AbortController();
      const waiting = r.block(["BLMOVE", src, dst, "RIGHT", "LEFT", 5], { signal: controller.signal });
      // Abort at once, on the next turn, or while the command is on the wire or parked.
      if (i % 4 === 1) await sleep(0);
      if (i % 4 === 2) await sleep(2);
      if (i % 4 === 3) await sleep(15);
      const job = `job${i}`;
      pushed.push(job);
      const push = i % 2 === 0 ? r.call("LPUSH", src, job) : null;
      const t0 = Date.now();
      controller.abort();
      const got = await waiting;
      // Bounded, not fast: a starved CI machine has taken 588 ms.
      assert.ok(Date.now() - t0 < 2_000, `abort ${i} took ${Date.now() - t0} ms`);
      await (push ?? r.call("LPUSH", src, job));
      if (got !== null) taken.push(got as string);
    }
    await sleep(100); // a call left parked on the server would move a job now
    const left = (await r.call("LRANGE", src, 0, -1)) as string[];
    const moved = (await r.call("LRANGE", dst, 0, -1)) as string[];
    assert.deepEqual([...moved].sort(), [...taken].sort(), "every moved job was returned to its caller");
    assert.deepEqual([...left, ...moved].sort(), [...pushed].sort(), "no job lost or doubled");
  });

  test("scripts are not idempotent unless declared; a request is idempotent when every command reads", async () => {
    assert.equal(PUSH_ONE.idempotent, false);
    assert.equal(COUNT_ONE.idempotent, true);
    assert.equal(isIdempotent([["GET", "k"], ["lrange", "q", 0, -1], ["SCRIPT", "exists", "abc"]]), true);
    assert.equal(isIdempotent([["GET", "k"], ["LPUSH", "q", "x"]]), false);
    assert.equal(isIdempotent([["SCRIPT", "LOAD", "return 1"]]), false);
  });

  test("a lost reply: writes are never sent again and reject with maybeApplied; reads are retried once", async (r) => {
    const lossy = await target().lossy?.();
    if (!lossy) return;
    const t = lossy.transport;
    // Arm only on a connected transport, so the lost reply is ours, not a handshake's.
    const lose = async <T>(request: () => Promise<T>): Promise<T> => {
      await t.call("PING");
      lossy.dropNextReply();
      return await request();
    };
    try {
      const l = key("lost");
      await t.script(PUSH_ONE, [key("warm")], ["x"]); // cached: one EVALSHA per call below
      await t.script(COUNT_ONE, [key("warm")], []);
      await t.pipeline([["PING"]], { atomic: true }); // a MULTI connection opened (and its handshake done)
      await assert.rejects(lose(() => t.call("LPUSH", l, "once")), lostReply);
      assert.equal(await t.call("LLEN", l), 1, "applied once, not sent again");
      assert.deepEqual(await lose(() => t.call("LRANGE", l, 0, -1)), ["once"], "a read is sent again");
      await assert.rejects(lose(() => t.pipeline([["RPUSH", l, "two"], ["LLEN", l]], { atomic: true })), lostReply);
      await assert.rejects(lose(() => t.pipeline([["RPUSH", l, "three"]])), lostReply);
      await assert.rejects(lose(() => t.script(PUSH_ONE, [l], ["four"])), lostReply);
      // A write whose connection dropped may not have run at all (Bun sends
      // MULTI ahead of the rest); what matters is that none ran twice.
      const list = (await r.call("LRANGE", l, 0, -1)) as string[];
      assert.deepEqual(list, ["once", "two", "three", "four"].filter((v) => list.includes(v)), "no write ran twice");
      assert.deepEqual(await lose(() => t.pipeline([["LLEN", l], ["LINDEX", l, 0]])), [list.length, "once"]);
      assert.equal(await lose(() => t.script(COUNT_ONE, [l], [])), list.length, "an idempotent script is sent again");
    } finally {
      await lossy.close();
    }
  });

  test("withSignal(): one set of counters; after the abort nothing is sent, and a pending request gives up", async (r) => {
    const controller = new AbortController();
    const view = r.withSignal?.(controller.signal);
    assert.ok(view, "every transport offers withSignal");
    const k = key("ws");
    const before = r.counters.commands;
    assert.equal(await view.call("SET", k, "1"), "OK");
    assert.equal(r.counters.commands - before, 1, "the view counts on the transport's counters");
    if (view === r) return; // memory: requests finish as they are made, nothing to abort
    controller.abort(new Error("budget spent"));
    const sent = r.counters.commands;
    await assert.rejects(
      view.call("INCR", k),
      (e: unknown) =>
        e instanceof TransportError && e.kind === "connection" && !e.maybeApplied && /budget spent/.test(e.message),
    );
    assert.equal(r.counters.commands, sent, "nothing sent");
    assert.equal(await r.call("GET", k), "1");
    const slow = new AbortController();
    const busy = r.withSignal!(slow.signal).call("EVAL", BUSY_LUA, 0, 400);
    await sleep(50);
    const t0 = Date.now();
    slow.abort();
    await assert.rejects(busy, lostReply);
    assert.ok(Date.now() - t0 < 300, `gave up after ${Date.now() - t0} ms`);
  });

  test("out of memory: writes, MULTI blocks, pipelines and scripts reject with kind oom saying so", async () => {
    const full = await target().full?.();
    if (!full) return;
    const t = full.transport;
    try {
      // Fill until Redis refuses a write. A request's own read buffer
      // (16 KB and up) counts too and is freed after it, so the data then
      // sits just under the limit; halving the limit keeps it over.
      const chunk = "x".repeat(1000);
      let error: unknown;
      for (let i = 0; i < 200 && !error; i++) {
        const sets = Array.from({ length: 50 }, (_, j) => ["SET", `fill:${i}:${j}`, chunk] as const);
        await t.pipeline(sets).catch((e) => (error = e));
      }
      assert.ok(oom(error), `filling ended with ${error}`);
      await t.call("CONFIG", "SET", "maxmemory", "1mb");
      await assert.rejects(t.call("LPUSH", "queue:default", "{}"), oom);
      await assert.rejects(
        t.pipeline([["LPUSH", "queue:default", "{}"], ["SADD", "queues", "default"]], { atomic: true }),
        oom,
      );
      await assert.rejects(t.pipeline([["LPUSH", "queue:default", "{}"]]), oom);
      await assert.rejects(t.script(PUSH_ONE, ["queue:default"], ["{}"]), oom);
      assert.equal(await t.call("LLEN", "queue:default"), 0, "nothing written");
    } finally {
      await full.close();
    }
  });
}
