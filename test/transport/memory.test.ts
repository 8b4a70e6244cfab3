/**
 * The memory transport: the shared conformance suite, then what only an
 * in-process store can show (expiry without a server, close() with pending
 * blocking pops, big lists, Redis's ordering and wording details).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { TransportError } from "../../src/transport/transport_error.ts";
import { memoryTransport } from "../../src/transport/adapters/memory/memory_transport.ts";
import { defineScript } from "../../src/transport/script.ts";
import { conformance } from "./conformance.ts";

conformance("memory", async () => {
  const transport = memoryTransport();
  return { transport, close: () => transport.close() };
});

/** Polls `check` every 5 ms until it is truthy, failing after `timeoutMs`. */
async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const rejectsWith = (message: string | RegExp, kind = "command") => (e: unknown) =>
  e instanceof TransportError && e.kind === kind &&
  (typeof message === "string" ? e.message === message : message.test(e.message));

describe("memory transport", () => {
  it("expires strings lazily, and TTL/PTTL/PERSIST follow", async () => {
    const r = memoryTransport();
    await r.call("SET", "k", "v", "PX", 30);
    assert.equal(await r.call("GET", "k"), "v");
    const pttl = (await r.call("PTTL", "k")) as number;
    assert.ok(pttl > 0 && pttl <= 30);
    await waitFor(async () => (await r.call("GET", "k")) === null, "expiry");
    assert.equal(await r.call("EXISTS", "k"), 0);
    assert.equal(await r.call("TTL", "k"), -2);
    await r.call("SET", "p", "v", "EX", 10);
    assert.equal(await r.call("PERSIST", "p"), 1);
    assert.equal(await r.call("TTL", "p"), -1);
    assert.equal(await r.call("PEXPIRE", "p", 0), 1, "a past deadline deletes at once");
    assert.equal(await r.call("EXISTS", "p"), 0);
  });

  it("close() answers pending blocking pops with null and leaves no timer", async () => {
    const r = memoryTransport();
    const forever = r.call("BRPOP", "q", 0);
    const timed = r.call("BLMOVE", "q", "p", "RIGHT", "LEFT", 3600);
    const huge = r.call("BLPOP", "q", 60 * 60 * 24 * 365); // past setTimeout's 24.8-day limit
    await r.close();
    assert.deepEqual(await Promise.all([forever, timed, huge]), [null, null, null]);
    // After close the data is still there, and blocking pops no longer wait.
    await r.call("RPUSH", "q", "x");
    assert.equal(await r.call("BRPOP", "other", 0), null);
    assert.deepEqual(await r.call("BRPOP", "q", 0), ["q", "x"]);
  });

  it("serves blocked clients in arrival order, before the next command", async () => {
    const r = memoryTransport();
    const first = r.call("BRPOP", "q", 5);
    const second = r.call("BRPOP", "q", 5);
    await r.call("LPUSH", "q", "a");
    assert.equal(await r.call("RPOP", "q"), null, "the blocked client was served first");
    assert.deepEqual(await first, ["q", "a"]);
    await r.pipeline([["LPUSH", "q", "b", "c"]]);
    assert.deepEqual(await second, ["q", "b"]);
    assert.deepEqual(await r.call("LRANGE", "q", 0, -1), ["c"]);
  });

  it("wakes a blocked pop from a script's push and chains BLMOVEs", async () => {
    const r = memoryTransport();
    const push = defineScript({
      name: "push",
      keys: ["list"],
      argv: ["value"],
      lua: `return redis.call("LPUSH", KEYS[1], ARGV[1])`,
      twin: (redis, keys, argv) => redis.call("LPUSH", keys[0], argv[0]),
    });
    const moved = r.call("BLMOVE", "a", "b", "RIGHT", "LEFT", 5);
    const popped = r.call("BRPOP", "b", 5);
    assert.equal(await r.script(push, ["a"], ["job"]), 1);
    assert.equal(await moved, "job");
    assert.deepEqual(await popped, ["b", "job"]);
    assert.equal(await r.call("DBSIZE"), 0);
  });

  it("keeps 100k-item lists correct at both ends", async () => {
    const r = memoryTransport();
    const items = Array.from({ length: 100_000 }, (_, i) => String(i));
    for (let i = 0; i < items.length; i += 10_000) await r.call("LPUSH", "big", ...items.slice(i, i + 10_000));
    assert.equal(await r.call("LLEN", "big"), 100_000);
    assert.deepEqual(await r.call("RPOP", "big", 3), ["0", "1", "2"]);
    assert.equal(await r.call("LPOP", "big"), "99999");
    assert.equal(await r.call("LINDEX", "big", 0), "99998");
    let n = 0;
    while ((await r.call("RPOP", "big")) !== null) n++;
    assert.equal(n, 99_996);
    assert.equal(await r.call("EXISTS", "big"), 0);
  });

  it("orders sorted-set ties by member bytes, as Redis's memcmp does", async () => {
    const r = memoryTransport();
    await r.call("ZADD", "z", 1, "\uFFFD", 1, "😀", 1, "b", 1, "a", 0, "z");
    assert.deepEqual(await r.call("ZRANGE", "z", 0, -1), ["z", "a", "b", "\uFFFD", "😀"]);
    await r.call("ZADD", "f", 0.1, "x", 1e-7, "y", 3, "w");
    assert.deepEqual(await r.call("ZRANGE", "f", 0, -1, "WITHSCORES"), ["y", "1e-07", "x", "0.1", "w", "3"]);
  });

  it("words errors as Redis does", async () => {
    const r = memoryTransport();
    await r.call("SET", "s", "v");
    await assert.rejects(
      r.call("LPUSH", "s", "x"),
      rejectsWith("WRONGTYPE Operation against a key holding the wrong kind of value", "wrongtype"),
    );
    await assert.rejects(r.call("lpush", "k"), rejectsWith("ERR wrong number of arguments for 'lpush' command"));
    await assert.rejects(r.call("GET", "a", "b"), rejectsWith("ERR wrong number of arguments for 'get' command"));
    await assert.rejects(r.call("FOO", "a"), rejectsWith("ERR unknown command 'FOO', with args beginning with: 'a' "));
    await assert.rejects(r.call("SET", "k", "v", "BOGUS"), rejectsWith("ERR syntax error"));
    await assert.rejects(r.call("INCRBY", "k", "1.5"), rejectsWith("ERR value is not an integer or out of range"));
    await assert.rejects(r.call("ZADD", "z", "x", "m"), rejectsWith("ERR value is not a valid float"));
    await assert.rejects(r.call("ZRANGEBYSCORE", "z", "x", 1), rejectsWith("ERR min or max is not a float"));
    await assert.rejects(r.call("BRPOP", "q", -1), rejectsWith("ERR timeout is negative"));
    await assert.rejects(r.call("EVAL", "return 1", 0), rejectsWith(/no Lua/));
    await assert.rejects(
      r.pipeline([["SET", "t", "1"], ["LLEN"]], { atomic: true }),
      rejectsWith(/^EXECABORT/),
    );
    assert.equal(await r.call("EXISTS", "t"), 0);
  });

  it("runs the other commands the engine and its API use", async () => {
    const r = memoryTransport();
    assert.equal(await r.call("PING"), "PONG");
    assert.equal(await r.call("echo", "hi"), "hi");
    assert.equal((await r.call("TIME") as string[]).length, 2);
    assert.equal(await r.call("MSET", "a", "1", "b", "2"), "OK");
    assert.equal(await r.call("SET", "a", "9", "XX", "GET"), "1");
    assert.equal(await r.call("DECRBY", "a", 10), -1);
    assert.deepEqual((await r.call("KEYS", "[ab]") as string[]).sort(), ["a", "b"]);
    await r.call("HSET", "h", "f", "v");
    await r.call("SADD", "s", "m");
    assert.deepEqual(await r.call("SCAN", 0, "TYPE", "hash"), ["0", ["h"]]);
    assert.deepEqual(await r.call("SSCAN", "s", 0), ["0", ["m"]]);
    assert.deepEqual(await r.call("HSCAN", "h", 0, "MATCH", "f*"), ["0", ["f", "v"]]);
    assert.equal(await r.call("TYPE", "s"), "set");
    assert.equal(await r.call("HSETNX", "h", "f", "x"), 0);
    assert.equal(await r.call("HMSET", "h", "g", "w"), "OK");
    assert.deepEqual(await r.call("HKEYS", "h"), ["f", "g"]);
    assert.deepEqual(await r.call("HVALS", "h"), ["v", "w"]);
    assert.equal(await r.call("HEXISTS", "h", "g"), 1);
    const info = (await r.call("INFO")) as string;
    assert.match(info, /# Memory\r\nmaxmemory_policy:noeviction\r\n/);
    assert.match(info, /# Stats\r\ntotal_commands_processed:\d+\r\n/);
    const sha = await r.call("SCRIPT", "LOAD", "return 1");
    assert.equal(sha, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    assert.deepEqual(await r.call("SCRIPT", "EXISTS", sha as string, "0000"), [1, 0]);
    assert.equal(await r.call("FLUSHALL"), "OK");
    assert.equal(await r.call("DBSIZE"), 0);
  });

  it("shapes script replies as Lua would and keeps scripts atomic", async () => {
    const r = memoryTransport();
    const s = defineScript({
      name: "frac",
      keys: [],
      argv: [],
      lua: `return {3.7, -2.5}`,
      twin: () => [3.7, -2.5],
      decode: (reply) => reply as number[],
    });
    assert.deepEqual(await r.script(s, [], []), [3, -2]);
  });
});
