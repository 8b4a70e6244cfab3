/**
 * One conformance suite for every transport: the same assertions on the
 * memory transport, ioredis against redis-server, Bun's RedisClient, and
 * @upstash/redis through the REST gateway fixture.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { TransportError } from "../../src/errors.ts";
import { defineScript } from "../../src/transport/script.ts";
import type { Transport } from "../../src/transport/transport.ts";

export interface ConformanceTarget {
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

const BAD = defineScript({
  name: "conformanceBad",
  keys: ["k"],
  argv: [],
  lua: `return redis.call("LPUSH", KEYS[1], "x")`,
  twin: (redis, keys) => redis.call("LPUSH", keys[0], "x"),
});

let seq = 0;

/** Registers the suite for one transport. */
export function conformance(name: string, open: () => Promise<ConformanceTarget | null>): void {
  describe(`transport conformance: ${name}`, () => {
    let target: ConformanceTarget | null = null;
    let r: Transport;
    const key = (k: string) => `conf:${Date.now().toString(36)}:${++seq}:${k}`;
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
  });
}
