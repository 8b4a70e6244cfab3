/**
 * One conformance suite for every transport: the same assertions on the
 * memory transport, ioredis against redis-server, Bun's RedisClient, and
 * @upstash/redis through the REST gateway fixture. It uses node:test and
 * node:assert only, so it runs under `tsx --test`, `bun test` and `deno test`.
 * Every test writes under its own random prefix instead of flushing, because
 * the target may be shared.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { TransportError } from "../../src/transport/transport_error.ts";
import { defineScript } from "../../src/transport/script.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { type FaultHooks, faultTests } from "./conformance_faults.ts";

/** What `open` hands the suite: a transport, how to close it, and (real servers) how to flush scripts. */
export interface ConformanceTarget extends FaultHooks {
  transport: Transport;
  close(): Promise<void>;
  /** SCRIPT FLUSH on a real server; absent for memory. */
  flushScripts?(): Promise<void>;
}

const ECHO_KEYS = defineScript({
  name: "conformanceEcho",
  keys: ["list", "counter"],
  argv: ["value"],
  lua: `
redis.call("RPUSH", KEYS[1], ARGV[1])
local n = redis.call("INCRBY", KEYS[2], 2)
return {KEYS[1], n, false, redis.call("LRANGE", KEYS[1], 0, -1)}
`,
  twin(redis, keys, argv) {
    redis.call("RPUSH", keys[0], argv[0]);
    const n = redis.call("INCRBY", keys[1], 2);
    return [keys[0], n, null, redis.call("LRANGE", keys[0], 0, -1)];
  },
});

const ERROR_REPLY = defineScript({
  name: "conformanceErrorReply",
  keys: [],
  argv: [],
  lua: `return redis.error_reply("EDGEKIQTEST boom")`,
  twin: () => {
    throw new Error("EDGEKIQTEST boom");
  },
});

const BAD = defineScript({
  name: "conformanceBad",
  keys: ["k"],
  argv: [],
  lua: `return redis.call("LPUSH", KEYS[1], "x")`,
  twin: (redis, keys) => redis.call("LPUSH", keys[0], "x"),
});

let seq = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Registers the suite for one transport. `open` may return null when the
 * target is unavailable (no redis-server): the tests then pass vacuously
 * after the harness printed one loud SKIP line.
 */
export function conformance(name: string, open: () => Promise<ConformanceTarget | null>): void {
  describe(`transport conformance: ${name}`, () => {
    let target: ConformanceTarget | null = null;
    let r: Transport;
    const run = crypto.randomUUID().slice(0, 8);
    // One hash tag per run: multi-key commands and scripts stay in one slot on a Redis Cluster too.
    const key = (k: string) => `{conf:${run}}:${++seq}:${k}`;
    before(async () => {
      target = await open();
      if (target) r = target.transport;
    });
    after(async () => {
      await target?.close();
    });
    const test = (title: string, fn: () => Promise<void>) =>
      it(title, async () => {
        if (!target) return; // no server: the harness printed one loud SKIP line
        await fn();
      });

    test("strings: SET NX EX, GET, MGET, INCRBY, EXPIRE, TTL, EXISTS, DEL, UNLINK", async () => {
      const a = key("a"), b = key("b");
      assert.equal(await r.call("SET", a, "1", "NX", "EX", 100), "OK");
      assert.equal(await r.call("SET", a, "2", "NX", "EX", 100), null);
      assert.equal(await r.call("GET", a), "1");
      assert.equal(await r.call("INCRBY", a, 41), 42);
      assert.deepEqual(await r.call("MGET", a, b), ["42", null]);
      const ttl = (await r.call("TTL", a)) as number;
      assert.ok(ttl > 90 && ttl <= 100, `ttl ${ttl}`);
      assert.equal(await r.call("EXPIRE", b, 10), 0);
      assert.equal(await r.call("TTL", b), -2);
      await r.call("SET", b, "x");
      assert.equal(await r.call("TTL", b), -1);
      assert.equal(await r.call("EXISTS", a, b, key("none")), 2);
      assert.equal(await r.call("DEL", a), 1);
      assert.equal(await r.call("UNLINK", b, a), 1);
    });

    test("replies are normalised: strings stay strings, integers are numbers, nil is null", async () => {
      const k = key("s");
      await r.call("SET", k, '{"a":1}');
      assert.equal(await r.call("GET", k), '{"a":1}');
      await r.call("SET", k, "123");
      assert.equal(await r.call("GET", k), "123");
      assert.equal(await r.call("GET", key("missing")), null);
      assert.equal(typeof (await r.call("EXISTS", k)), "number");
    });

    test("lists: LPUSH/RPUSH/LRANGE/LLEN/LREM/LMOVE/RPOPLPUSH/RPOP count/LINDEX", async () => {
      const l = key("l"), m = key("m");
      assert.equal(await r.call("LPUSH", l, "a", "b", "c"), 3);
      assert.equal(await r.call("RPUSH", l, "z"), 4);
      assert.deepEqual(await r.call("LRANGE", l, 0, -1), ["c", "b", "a", "z"]);
      assert.equal(await r.call("LINDEX", l, -1), "z");
      assert.equal(await r.call("LREM", l, 1, "b"), 1);
      assert.equal(await r.call("LLEN", l), 3);
      assert.equal(await r.call("LMOVE", l, m, "RIGHT", "LEFT"), "z");
      assert.equal(await r.call("RPOPLPUSH", l, m), "a");
      assert.deepEqual(await r.call("LRANGE", m, 0, -1), ["a", "z"]);
      assert.deepEqual(await r.call("RPOP", m, 5), ["z", "a"]);
      assert.equal(await r.call("RPOP", m, 5), null);
      assert.equal(await r.call("EXISTS", m), 0, "an emptied list is deleted");
      await r.call("RPUSH", l, "x", "y", "x", "x");
      assert.equal(await r.call("LREM", l, -2, "x"), 2);
      assert.deepEqual(await r.call("LRANGE", l, 0, -1), ["c", "x", "y"]);
    });

    test("a transport that promises call order applies back-to-back pipelines in that order", async () => {
      if (!r.ordered) return;
      const l = key("ordered");
      await Promise.all(Array.from({ length: 100 }, (_, i) => r.pipeline([["RPUSH", l, String(i)]], { atomic: true })));
      assert.deepEqual(await r.call("LRANGE", l, 0, -1), Array.from({ length: 100 }, (_, i) => String(i)));
    });

    test("blocking pops: data at once, null on timeout, and wake-up on a push from the same transport", async () => {
      if (!r.blocking) return; // HTTP transports do not block; the upstash suite checks they refuse to
      const l = key("bl"), p = key("bp");
      await r.call("LPUSH", l, "now");
      assert.deepEqual(await r.call("BRPOP", l, 1), [l, "now"]);
      const t0 = Date.now();
      assert.equal(await r.call("BRPOP", l, 0.2), null);
      const waited = Date.now() - t0;
      assert.ok(waited >= 100 && waited < 3000, `timed out after ${waited} ms`);
      // The blocked call must not stall the push: it runs on its own connection.
      const blocked = r.call("BLMOVE", l, p, "RIGHT", "LEFT", 5);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const t1 = Date.now();
      await r.call("LPUSH", l, "wake");
      assert.equal(await blocked, "wake");
      assert.ok(Date.now() - t1 < 2000, "woken by the push, not the timeout");
      assert.deepEqual(await r.call("LRANGE", p, 0, -1), ["wake"]);
    });

    test("sets: SADD/SREM/SMEMBERS/SCARD/SISMEMBER", async () => {
      const s = key("set");
      assert.equal(await r.call("SADD", s, "a", "b", "a"), 2);
      assert.equal(await r.call("SCARD", s), 2);
      assert.equal(await r.call("SISMEMBER", s, "a"), 1);
      assert.deepEqual(((await r.call("SMEMBERS", s)) as string[]).sort(), ["a", "b"]);
      assert.equal(await r.call("SREM", s, "a", "zz"), 1);
    });

    test("sorted sets: ZADD/ZRANGE BYSCORE LIMIT/ZREM/ZCARD/ZSCORE/ZREMRANGEBYSCORE/ZREMRANGEBYRANK/ZSCAN", async () => {
      const z = key("z");
      assert.equal(await r.call("ZADD", z, 3, "c", 1.5, "a", 2, "b", 2, "bb"), 4);
      assert.deepEqual(await r.call("ZRANGE", z, "-inf", 2, "BYSCORE", "LIMIT", 0, 2), ["a", "b"]);
      assert.deepEqual(await r.call("ZRANGE", z, "(1.5", "+inf", "BYSCORE"), ["b", "bb", "c"]);
      assert.deepEqual(await r.call("ZRANGE", z, 0, 0, "WITHSCORES"), ["a", "1.5"]);
      assert.deepEqual(await r.call("ZRANGEBYSCORE", z, 2, 2), ["b", "bb"]);
      assert.equal(await r.call("ZSCORE", z, "a"), "1.5");
      assert.equal(await r.call("ZSCORE", z, "nope"), null);
      const scan = (await r.call("ZSCAN", z, 0, "MATCH", "b*", "COUNT", 100)) as [string, string[]];
      assert.equal(scan[0], "0");
      assert.deepEqual(scan[1], ["b", "2", "bb", "2"]);
      assert.equal(await r.call("ZREM", z, "c", "nope"), 1);
      assert.equal(await r.call("ZREMRANGEBYSCORE", z, "-inf", "(2"), 1);
      assert.equal(await r.call("ZREMRANGEBYRANK", z, 0, -2), 1);
      assert.equal(await r.call("ZCARD", z), 1);
    });

    test("hashes: HSET/HGET/HGETALL/HDEL/HINCRBY/HLEN/HMGET", async () => {
      const h = key("h");
      assert.equal(await r.call("HSET", h, "a", "1", "b", "x"), 2);
      assert.equal(await r.call("HGET", h, "b"), "x");
      assert.deepEqual(await r.call("HGETALL", h), ["a", "1", "b", "x"]);
      assert.deepEqual(await r.call("HMGET", h, "a", "zz"), ["1", null]);
      assert.equal(await r.call("HINCRBY", h, "a", 5), 6);
      assert.equal(await r.call("HDEL", h, "b", "zz"), 1);
      assert.equal(await r.call("HLEN", h), 1);
      assert.deepEqual(await r.call("HGETALL", key("none")), []);
    });

    test("pipelines: ordered replies, k commands in one round trip", async () => {
      const l = key("p");
      const before = { ...r.counters };
      const replies = await r.pipeline([["RPUSH", l, "a", "b"], ["LLEN", l], ["LRANGE", l, 0, -1]]);
      assert.deepEqual(replies, [2, 2, ["a", "b"]]);
      assert.equal(r.counters.commands - before.commands, 3);
      assert.equal(r.counters.roundTrips - before.roundTrips, 1);
    });

    test("MULTI atomicity: a command Redis refuses to queue aborts all; runtime errors reject after the rest ran", async () => {
      const a = key("a"), s = key("s");
      await assert.rejects(r.pipeline([["SET", a, "1"], ["NOSUCHCOMMAND", a]], { atomic: true }), TransportError);
      assert.equal(await r.call("EXISTS", a), 0, "nothing applied");
      await r.call("SET", s, "str");
      await assert.rejects(
        r.pipeline([["SET", a, "1"], ["LPUSH", s, "x"], ["SET", key("b"), "2"]]),
        (e: unknown) => e instanceof TransportError && e.kind === "wrongtype",
      );
      assert.equal(await r.call("GET", a), "1", "the good commands ran");
    });

    test("scripts: typed reply, twin equals Lua, one command per call, NOSCRIPT recovery", async () => {
      const l = key("sl"), c = key("sc");
      const reply = await r.script(ECHO_KEYS, [l, c], ["v1"]); // may load the script first (NOSCRIPT -> EVAL)
      assert.deepEqual(reply, [l, 2, null, ["v1"]]);
      const before = { ...r.counters };
      await r.script(ECHO_KEYS, [key("sl2"), key("sc2")], ["v"]);
      assert.equal(r.counters.commands - before.commands, 1, "a cached script is one command");
      if (target!.flushScripts) {
        await target!.flushScripts();
        assert.deepEqual(await r.script(ECHO_KEYS, [l, c], ["v2"]), [l, 4, null, ["v1", "v2"]]);
      }
    });

    test("binary-safe and unicode strings round-trip", async () => {
      const k = key("u");
      for (const value of ["emoji 🚀✨", "nul\u0000byte", "日本語と中文", "line\r\nbreak", "x".repeat(1024 * 1024)]) {
        await r.call("SET", k, value);
        assert.equal(await r.call("GET", k), value);
        await r.call("RPUSH", `${k}:list`, value);
        assert.equal(await r.call("RPOP", `${k}:list`), value);
      }
    });

    test("error kinds: WRONGTYPE, unknown command, errors inside scripts", async () => {
      const s = key("w");
      await r.call("SET", s, "v");
      await assert.rejects(
        r.call("LPUSH", s, "x"),
        (e: unknown) => e instanceof TransportError && e.kind === "wrongtype",
      );
      await assert.rejects(
        r.call("NOSUCHCOMMAND"),
        (e: unknown) => e instanceof TransportError && e.kind === "command",
      );
      await assert.rejects(
        r.script(BAD, [s], []),
        (e: unknown) => e instanceof TransportError && e.kind === "wrongtype",
      );
    });
    test("counters: a call is one command and one round trip; so is a script", async () => {
      const before = { ...r.counters };
      await r.call("PING");
      assert.deepEqual(
        [r.counters.commands - before.commands, r.counters.roundTrips - before.roundTrips],
        [1, 1],
      );
      await r.script(ECHO_KEYS, [key("cl"), key("cc")], ["v"]); // may add an EVAL after NOSCRIPT
      const mid = { ...r.counters };
      await r.script(ECHO_KEYS, [key("cl"), key("cc")], ["v"]);
      assert.deepEqual([r.counters.commands - mid.commands, r.counters.roundTrips - mid.roundTrips], [1, 1]);
    });

    test("BRPOP wakes on a push to any watched key, oldest waiter first", async () => {
      if (!r.blocking) return;
      const a = key("wa"), b = key("wb");
      const first = r.call("BRPOP", a, b, 5);
      await sleep(50);
      await r.call("RPUSH", b, "x");
      assert.deepEqual(await first, [b, "x"]);
      assert.equal(await r.call("EXISTS", b), 0, "the waiter took the item");
      const t0 = Date.now();
      assert.equal(await r.call("BLMOVE", a, b, "RIGHT", "LEFT", 0.1), null);
      assert.ok(Date.now() - t0 < 3000);
    });

    test("lists: LTRIM, LPOP count, LREM with count 0, RPOP of a missing key", async () => {
      const l = key("lt");
      await r.call("RPUSH", l, "a", "b", "a", "c", "a");
      assert.equal(await r.call("LREM", l, 0, "a"), 3);
      assert.deepEqual(await r.call("LRANGE", l, 0, -1), ["b", "c"]);
      await r.call("RPUSH", l, "d", "e");
      assert.equal(await r.call("LTRIM", l, 1, -2), "OK");
      assert.deepEqual(await r.call("LRANGE", l, 0, -1), ["c", "d"]);
      assert.deepEqual(await r.call("LPOP", l, 1), ["c"]);
      assert.equal(await r.call("RPOP", key("none")), null);
      assert.deepEqual(await r.call("LRANGE", key("none"), 0, -1), []);
    });

    test("sorted sets: ZRANGEBYSCORE LIMIT, REV, inf scores, ZINCRBY, ZRANK, ZADD options", async () => {
      const z = key("zz");
      assert.equal(await r.call("ZADD", z, "-inf", "lo", "+inf", "hi", 1700000000.5, "t", 5, "b", 5, "a"), 5);
      assert.deepEqual(await r.call("ZRANGEBYSCORE", z, "-inf", "+inf", "LIMIT", 1, 3), ["a", "b", "t"]);
      assert.deepEqual(await r.call("ZRANGEBYSCORE", z, "(5", "inf", "WITHSCORES"), ["t", "1700000000.5", "hi", "inf"]);
      assert.deepEqual(await r.call("ZREVRANGEBYSCORE", z, 5, "-inf", "LIMIT", 0, 2), ["b", "a"]);
      assert.deepEqual(await r.call("ZRANGE", z, "+inf", 5, "BYSCORE", "REV", "LIMIT", 0, 2), ["hi", "t"]);
      assert.deepEqual(await r.call("ZREVRANGE", z, 0, 1), ["hi", "t"]);
      assert.equal(await r.call("ZSCORE", z, "lo"), "-inf");
      assert.equal(await r.call("ZCOUNT", z, 5, "(1700000000.5"), 2);
      assert.equal(await r.call("ZINCRBY", z, 2.5, "a"), "7.5");
      assert.equal(await r.call("ZRANK", z, "a"), 2);
      assert.equal(await r.call("ZADD", z, "NX", 1, "a"), 0);
      assert.equal(await r.call("ZADD", z, "XX", "CH", 8, "a", 9, "new"), 1);
      assert.equal(await r.call("ZADD", z, "GT", "CH", 1, "a"), 0);
      assert.equal(await r.call("ZADD", z, "INCR", 2, "a"), "10");
      assert.equal(await r.call("ZSCORE", z, "new"), null);
      assert.deepEqual(await r.call("ZPOPMIN", z), ["lo", "-inf"]);
    });

    test("pipelines: an atomic batch with a wrong arity applies nothing", async () => {
      const a = key("ar");
      await assert.rejects(
        r.pipeline([["SET", a, "1"], ["LLEN"]], { atomic: true }),
        (e: unknown) => e instanceof TransportError,
      );
      assert.equal(await r.call("GET", a), null);
      assert.deepEqual(await r.pipeline([["SET", a, "1"], ["INCR", a]], { atomic: true }), ["OK", 2]);
    });

    test("errors: wrong arity and a bad integer are command errors; error_reply in a script rejects", async () => {
      await assert.rejects(r.call("LLEN"), (e: unknown) => e instanceof TransportError && e.kind === "command");
      const k = key("ni");
      await r.call("SET", k, "abc");
      await assert.rejects(
        r.call("INCR", k),
        (e: unknown) => e instanceof TransportError && /not an integer or out of range/.test(e.message),
      );
      await assert.rejects(
        r.script(ERROR_REPLY, [], []),
        (e: unknown) => e instanceof TransportError && /boom/.test(e.message),
      );
    });

    test("streams: XADD MAXLEN ~ and =, XLEN, XRANGE/XREVRANGE with COUNT and ( bounds, XREAD, XTRIM, XDEL, TYPE", async () => {
      const s = key("stream");
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await r.call("XADD", s, "MAXLEN", "=", 3, "*", "n", String(i))) as string);
      assert.ok(ids.every((id, i) => /^\d+-\d+$/.test(id) && (i === 0 || id !== ids[i - 1])), ids.join());
      assert.equal(await r.call("XLEN", s), 3, "MAXLEN = keeps the newest three");
      assert.equal(await r.call("TYPE", s), "stream");
      const all = (await r.call("XRANGE", s, "-", "+")) as [string, string[]][];
      assert.deepEqual(all, ids.slice(2).map((id, i) => [id, ["n", String(i + 2)]]));
      assert.deepEqual(await r.call("XRANGE", s, `(${ids[2]}`, "+", "COUNT", 1), [[ids[3], ["n", "3"]]]);
      assert.deepEqual(await r.call("XREVRANGE", s, "+", "-", "COUNT", 2), [[ids[4], ["n", "4"]], [ids[3], [
        "n",
        "3",
      ]]]);
      assert.deepEqual(await r.call("XREAD", "COUNT", 10, "STREAMS", s, ids[3]), [[s, [[ids[4], ["n", "4"]]]]]);
      assert.equal(await r.call("XREAD", "STREAMS", s, ids[4]), null, "nothing after the last entry");
      assert.equal(await r.call("XREAD", "STREAMS", key("none"), "0-0"), null);
      await assert.rejects(
        r.call("XADD", s, "1-1", "n", "x"),
        (e: unknown) => e instanceof TransportError && /equal or smaller/.test(e.message),
      );
      assert.equal(await r.call("XDEL", s, ids[2]), 1);
      assert.equal(await r.call("XTRIM", s, "MAXLEN", 1), 1);
      assert.deepEqual(await r.call("XRANGE", s, "-", "+"), [[ids[4], ["n", "4"]]]);
      // MAXLEN ~ may keep more than asked (Redis trims whole nodes), never fewer.
      const t = key("approx");
      for (let i = 0; i < 250; i++) await r.call("XADD", t, "MAXLEN", "~", 100, "*", "i", String(i));
      const len = (await r.call("XLEN", t)) as number;
      assert.ok(len >= 100 && len <= 250, `length ${len}`);
      assert.deepEqual(((await r.call("XREVRANGE", t, "+", "-", "COUNT", 1)) as [string, string[]][])[0][1], [
        "i",
        "249",
      ]);
      assert.equal(await r.call("XADD", key("nomk"), "NOMKSTREAM", "*", "a", "b"), null);
      assert.equal(await r.call("EXISTS", key("nomk")), 0);
    });

    test("XREAD BLOCK: at once when entries wait, woken by an XADD, null on timeout or abort, $ is the last entry", async () => {
      if (!r.blocking) {
        await assert.rejects(
          r.block(["XREAD", "BLOCK", 100, "STREAMS", key("x"), "$"], { signal: new AbortController().signal }),
          (e: unknown) => e instanceof TransportError,
        );
        return;
      }
      const s = key("bstream");
      const first = (await r.call("XADD", s, "*", "a", "1")) as string;
      const never = new AbortController().signal;
      assert.deepEqual(await r.block(["XREAD", "BLOCK", 1000, "STREAMS", s, "0-0"], { signal: never }), [
        [s, [[first, ["a", "1"]]]],
      ]);
      // Blocked on its own connection: the XADD that wakes it goes through meanwhile.
      const waiting = r.block(["XREAD", "COUNT", 10, "BLOCK", 5000, "STREAMS", s, "$"], { signal: never });
      await sleep(100);
      const t0 = Date.now();
      const second = (await r.call("XADD", s, "*", "a", "2")) as string;
      assert.deepEqual(await waiting, [[s, [[second, ["a", "2"]]]]], "$ meant after the entry already there");
      assert.ok(Date.now() - t0 < 2000, "woken by the XADD, not the timeout");
      const t1 = Date.now();
      assert.equal(await r.block(["XREAD", "BLOCK", 200, "STREAMS", s, "$"], { signal: never }), null);
      assert.ok(Date.now() - t1 >= 150, "waited for its timeout");
      const abort = new AbortController();
      const aborted = r.block(["XREAD", "BLOCK", 0, "STREAMS", s, "$"], { signal: abort.signal });
      await sleep(50);
      abort.abort();
      assert.equal(await aborted, null, "an abort ends a wait without a timeout");
      // The connection it waited on is still good: the next call works.
      assert.equal(await r.call("XLEN", s), 2);
    });

    faultTests({ test, key, transport: () => r, target: () => target! });
  });
}
