/**
 * Behaviour every TCP transport (ioredis, Bun) owes beyond the conformance
 * suite: blocking calls on their own connections, a prompt close(), fast
 * "connection" errors while Redis is down, and recovery once it is back.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { TransportError } from "../../src/transport/transport_error.ts";
import type { Command, Transport } from "../../src/transport/transport.ts";
import { defineScript } from "../../src/transport/script.ts";
import { startRedis, type TestRedis, testRedis } from "./redis.ts";

const isConnection = (e: unknown) => e instanceof TransportError && e.kind === "connection";

/**
 * Registers the TCP-transport behaviour tests for one adapter.
 *
 * @example
 * ```ts
 * tcpTransportBehaviour("ioredis", (url) => ioredisTransport({ url }));
 * ```
 */
export function tcpTransportBehaviour(name: string, open: (url: string) => Transport): void {
  describe(`${name} transport behaviour`, () => {
    let server: TestRedis | null = null;
    before(async () => (server = await testRedis()));
    after(() => server?.stop());

    it("runs several blocking calls at once, each on its own connection, beside ordinary commands", async () => {
      if (!server) return;
      const r = open(server.url);
      try {
        const q = `tcp:${Date.now()}:q`;
        const pops = [1, 2, 3].map((i) => r.call("BRPOP", `${q}${i}`, 5));
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(await r.call("PING"), "PONG", "ordinary commands are not stuck behind the blocked ones");
        for (const i of [3, 1, 2]) await r.call("LPUSH", `${q}${i}`, `v${i}`);
        assert.deepEqual(await Promise.all(pops), [[`${q}1`, "v1"], [`${q}2`, "v2"], [`${q}3`, "v3"]]);
        // The pooled connections are reused, not multiplied.
        assert.deepEqual(await r.call("BRPOP", `${q}1`, 0.05), null);
      } finally {
        await r.close();
      }
    });

    it("aborts a blocking call without closing its connection, and replaces one that dropped", async () => {
      if (!server) return;
      const r = open(server.url);
      const connections = async () =>
        Number(/total_connections_received:(\d+)/.exec(String(await r.call("INFO", "stats")))![1]);
      try {
        const q = `tcp:${Date.now()}:abort`;
        const first = new AbortController();
        const waiting = r.block(["BRPOP", q, 5], { signal: first.signal });
        await new Promise((resolve) => setTimeout(resolve, 50));
        first.abort();
        assert.equal(await waiting, null);
        const opened = await connections();
        for (let i = 0; i < 20; i++) {
          const c = new AbortController();
          const parked = r.block(["BRPOP", q, 5], { signal: c.signal });
          await new Promise((resolve) => setTimeout(resolve, i % 2 ? 0 : 10));
          c.abort();
          assert.equal(await parked, null);
        }
        // One may be opened while another waits for its last UNBLOCK's answer; never one per abort.
        const more = await connections() - opened;
        assert.ok(more <= 1, `${more} connections opened for 20 aborted calls`);
        // A dedicated connection killed under a blocked call: the call fails
        // (it may have moved something), and the next call gets a new one.
        const blocked = r.block(["BRPOP", q, 5], { signal: new AbortController().signal }).catch((e: unknown) => e);
        await new Promise((resolve) => setTimeout(resolve, 50));
        await r.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); // every one but the main connection
        assert.ok(isConnection(await blocked), `the killed call ended with ${await blocked}`);
        let reply: unknown = undefined;
        for (let i = 0; i < 100 && reply === undefined; i++) {
          reply = await r.call("LPUSH", q, "after").catch(() => undefined);
          if (reply === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        // The idle one was killed too; the client may not have noticed yet,
        // so one call can still fail on it before it is replaced.
        let got: unknown = undefined;
        for (let i = 0; i < 2 && got === undefined; i++) {
          got = await r.block(["BRPOP", q, 1], { signal: new AbortController().signal }).catch((e) => {
            if (!isConnection(e)) throw e;
            return undefined;
          });
        }
        assert.deepEqual(got, [q, "after"]);
      } finally {
        await r.close();
      }
    });

    it("runs a script behind a blocking call, on its connection, as soon as the wait ends (blockThen)", async () => {
      if (!server) return;
      const r = open(server.url);
      try {
        await checkBlockThen(r, { tag: `{bt${Date.now()}}`, flushScripts: () => r.call("SCRIPT", "FLUSH") });
      } finally {
        await r.close();
      }
    });

    it("close() rejects pending blocking calls at once", async () => {
      if (!server) return;
      const r = open(server.url);
      const pending = r.call("BLMOVE", `tcp:${Date.now()}:empty`, "x", "RIGHT", "LEFT", 0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const t0 = Date.now();
      // The rejection is awaited from before close(): it may land while close() is still on its way, and a rejection
      // with no handler yet is an unhandled one (a CI run failed on it).
      const rejected = assert.rejects(pending, isConnection);
      await r.close();
      await rejected;
      assert.ok(Date.now() - t0 < 1000, `close took ${Date.now() - t0} ms`);
      await assert.rejects(r.call("BRPOP", "q", 1), isConnection);
    });

    it("fails fast with a connection error when Redis is unreachable", async () => {
      if (!server) return;
      // Borrow a port and free it again: nothing listens there afterwards.
      const scratch = await startRedis().catch(() => null);
      if (!scratch) return; // EDGEKIQ_TEST_REDIS_URL mode without a local redis-server
      const url = scratch.url;
      await scratch.stop();
      const r = open(url);
      const t0 = Date.now();
      await assert.rejects(r.call("PING"), isConnection);
      await assert.rejects(r.pipeline([["PING"], ["PING"]]), isConnection);
      assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
      await r.close();
    });

    it("recovers after Redis restarts", async () => {
      if (!server) return;
      const first = await startRedis().catch(() => null);
      if (!first) return;
      const r = open(first.url);
      let second: TestRedis | null = null;
      try {
        assert.equal(await r.call("SET", "k", "v"), "OK");
        await first.stop();
        await assert.rejects(r.call("GET", "k"), isConnection);
        second = await startRedis({ port: first.port });
        let reply: unknown = undefined;
        for (let i = 0; i < 100 && reply === undefined; i++) {
          reply = await r.call("GET", "k").catch(() => undefined); // a fresh, empty server
          if (reply === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.equal(reply, null);
        assert.equal(await r.call("LPUSH", "q", "a"), 1);
        assert.deepEqual(await r.call("BRPOP", "q", 1), ["q", "a"], "blocking connections recover too");
      } finally {
        await r.close();
        await second?.stop();
      }
    });
  });
}

/** Reads a list: what a script behind a blocking move sees of its destination. */
const LIST_PROBE = defineScript<string[]>({
  name: "list-probe",
  keys: ["list"],
  argv: [],
  lua: `return redis.call("LRANGE", KEYS[1], 0, -1)`,
  twin: (redis, keys) => redis.call("LRANGE", keys[0], 0, -1),
  decode: (reply) => (reply as string[]).map(String),
});

/**
 * Checks {@link Transport.blockThen} on a transport that has it: the script
 * runs on the server right after the wait ends (served, timed out, aborted),
 * in the same round trip, falls back on NOSCRIPT, and is refused unsent when
 * the wait was aborted before it started. `tag` is a hash tag the keys share
 * (a cluster runs both on the node that owns it); `flushScripts` empties the
 * script cache of every server the keys may live on.
 *
 * @example
 * ```ts
 * it("blockThen", () => checkBlockThen(transport, { tag: `{t${Date.now()}}`, flushScripts }));
 * ```
 */
export async function checkBlockThen(
  r: Transport,
  { tag, flushScripts }: { tag: string; flushScripts: () => Promise<unknown> },
): Promise<void> {
  assert.ok(r.blockThen, `the ${r.kind} transport has blockThen`);
  const src = `${tag}:src`;
  const dst = `${tag}:dst`;
  const move = (seconds: number): Command => ["BLMOVE", src, dst, "RIGHT", "LEFT", seconds];
  const probe = { script: LIST_PROBE, keys: [dst], args: [] };
  const never = new AbortController().signal;
  // Timed out: the script still runs, once the wait is over.
  const timedOut = await r.blockThen!(move(0.1), probe, { signal: never });
  assert.equal(timedOut.reply, null);
  assert.deepEqual(await timedOut.after, []);
  // Served by a push (the dedicated connection is open by now): the script saw the moved job, and the pair was one round trip of two commands.
  const trips = r.counters.roundTrips;
  const commands = r.counters.commands;
  const served = r.blockThen!(move(5), probe, { signal: never });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await r.call("LPUSH", src, "job-1");
  const first = await served;
  assert.equal(first.reply, "job-1");
  assert.deepEqual(await first.after, ["job-1"]);
  assert.equal(r.counters.roundTrips - trips, 2, "the pair and the push: one round trip each");
  assert.equal(r.counters.commands - commands, 3);
  // Aborted while waiting: the wait answers null, and the script ran after it.
  const controller = new AbortController();
  const waiting = r.blockThen!(move(5), probe, { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const t0 = Date.now();
  controller.abort();
  const aborted = await waiting;
  assert.ok(Date.now() - t0 < 2000, "the abort ended the wait");
  assert.equal(aborted.reply, null);
  assert.deepEqual(await aborted.after, ["job-1"]);
  // Aborted before it started: nothing sent, the script refused as never run.
  const gone = await r.blockThen!(move(5), probe, { signal: controller.signal });
  assert.equal(gone.reply, null);
  await assert.rejects(gone.after, (e: unknown) => e instanceof TransportError && e.maybeApplied === false);
  // The server lost its scripts: the script goes again the usual way (it never ran).
  await flushScripts();
  const flushed = r.blockThen!(move(5), probe, { signal: never });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await r.call("LPUSH", src, "job-2");
  const again = await flushed;
  assert.equal(again.reply, "job-2");
  assert.deepEqual(await again.after, ["job-2", "job-1"]);
  assert.deepEqual(await r.call("LRANGE", src, 0, -1), []);
}
