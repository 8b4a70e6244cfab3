import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, defineJob, PayloadError } from "../mod.ts";
import { parsePayload, serializePayload, toEpochMs } from "../src/payload.ts";
import { createRegistry } from "../src/registry.ts";
import { assertJsonSafe } from "../src/json_safe.ts";
import { newJids } from "../src/payload.ts";

describe("payload", () => {
  it("writes a whole-second time with a fraction, so Ruby reads a Float, not Sidekiq 8 millis", () => {
    const json = serializePayload(
      {
        class: "A",
        args: [{ created_at: 5 }],
        queue: "q",
        jid: "j",
        created_at: 1700000000,
        enqueued_at: 1700000000.25,
      },
      "seconds",
    );
    assert.match(json, /"created_at":1700000000\.0[,}]/);
    assert.match(json, /"enqueued_at":1700000000\.25[,}]/);
    assert.match(json, /\[\{"created_at":5\}\]/, "nested fields are untouched");
    assert.equal(JSON.parse(json).created_at, 1700000000);
  });

  it("leaves a Sidekiq 8 job's integer-millisecond times alone when rewriting it", () => {
    const json = serializePayload({ class: "A", args: [], queue: "q", jid: "j", created_at: 1700000000123 }, "seconds");
    assert.match(json, /"created_at":1700000000123[,}]/);
  });

  it("reads both time formats by magnitude", () => {
    assert.equal(toEpochMs(1700000000.5), 1700000000500);
    assert.equal(toEpochMs(1700000000500), 1700000000500);
  });

  it("keeps unknown fields through parse and serialise", () => {
    const raw = '{"class":"A","args":[1],"queue":"q","jid":"j","bid":"batch-1","custom":{"x":[1,2]}}';
    const job = parsePayload(raw);
    assert.deepEqual(JSON.parse(serializePayload(job, "seconds")), JSON.parse(raw));
  });

  it("explains bad payloads", () => {
    assert.throws(() => parsePayload("{nope"), /not valid JSON/);
    assert.throws(() => parsePayload("[1]"), /not a JSON object/);
    assert.throws(() => parsePayload('{"args":[]}'), /'class' must be a non-empty string: current value is undefined/);
    assert.throws(() => parsePayload('{"class":"A","args":{}}'), /'args' must be an array/);
  });

  it("names the offending path of non-JSON-native args", () => {
    const cases: Array<[unknown, RegExp]> = [
      [[undefined], /args\[0\] is undefined/],
      [[1n], /args\[0\] is a bigint/],
      [[Infinity], /args\[0\] is Infinity/],
      [[{ a: new Map() }], /args\[0\]\.a is a Map/],
      [[() => 1], /args\[0\] is a function/],
      [[{ "bad key": new Date() }], /args\[0\]\["bad key"\] is a Date/],
    ];
    for (const [args, re] of cases) {
      assert.throws(
        () => assertJsonSafe(args, "args"),
        (e: unknown) => e instanceof PayloadError && re.test((e as Error).message),
      );
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => assertJsonSafe([cyclic], "args"), /args\[0\]\.self is a circular reference/);
    assert.doesNotThrow(() => assertJsonSafe([1, "s", true, null, [1], { a: { b: [] } }], "args"));
  });

  it("makes 24-hex jids", () => {
    const jids = newJids(10_000);
    assert.ok(jids.every((j) => /^[0-9a-f]{24}$/.test(j)));
    assert.equal(new Set(jids).size, 10_000);
  });

  it("makes jids one at a time from a pool of random bytes: few getRandomValues calls, no byte handed out twice", () => {
    const real = crypto.getRandomValues.bind(crypto);
    let calls = 0;
    const stub = (array: Uint8Array): Uint8Array => (calls++, real(array));
    Object.defineProperty(crypto, "getRandomValues", { value: stub, configurable: true, writable: true });
    const jids: string[] = [];
    try {
      // 1,000 single pushes' jids: 12 KB of randomness, across several refills of the pool.
      for (let i = 0; i < 1000; i++) jids.push(newJids(1)[0]);
    } finally {
      Object.defineProperty(crypto, "getRandomValues", { value: real, configurable: true, writable: true });
    }
    assert.ok(calls <= 4, `${calls} getRandomValues calls for 1,000 jids`);
    assert.equal(new Set(jids).size, 1000, "every jid differs (no byte of the pool reused)");
    assert.ok(jids.every((j) => /^[0-9a-f]{24}$/.test(j)) && !jids.includes("0".repeat(24)));
  });
});

describe("defineJob and the registry", () => {
  it("validates options eagerly with Sidekiq-style messages", () => {
    assert.throws(
      () => defineJob({ name: "X", retry: -1, perform() {} }),
      (e: unknown) =>
        e instanceof ConfigError && e.message === "Cannot define job X as 'retry' must be >= 0: current value is -1",
    );
    assert.throws(() => defineJob({ name: "", perform() {} }), /'name' must be a non-empty string/);
    assert.throws(() => defineJob({ name: "X", queue: "a b", perform() {} }), /'queue' must be a non-empty string/);
    assert.throws(() => defineJob({ name: "X", retryFor: 0, perform() {} }), /'retryFor' must be > 0/);
    assert.throws(() => defineJob({ name: "X", perform: 1 as never }), /'perform' must be a function/);
  });

  it("resolves only registered names, never prototype keys", () => {
    const A = defineJob({ name: "A", perform() {} });
    const registry = createRegistry({ A, notAJob: 42 });
    assert.equal(registry.get("A"), A);
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      assert.equal(registry.get(name), undefined);
    }
    assert.throws(() => createRegistry([A, defineJob({ name: "A", perform() {} })]), /twice/);
  });
});

describe("payload depth and unreadable input", () => {
  const deepJson = (depth: number) => `{"class":"A","jid":"j","args":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;

  it("parsePayload throws a PayloadError, never a RangeError, for a payload nested too deeply", () => {
    for (const depth of [101, 5_000, 1_000_000]) {
      assert.throws(
        () => parsePayload(deepJson(depth)),
        (e: unknown) => e instanceof PayloadError && /nests more than 100 levels deep/.test(e.message),
        `depth ${depth}`,
      );
    }
    assert.deepEqual(parsePayload(deepJson(100)).args.flat(Infinity), []);
  });

  it("serialising a payload JSON cannot hold throws a PayloadError naming the job", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    // What a runtime's JSON.stringify throws when its stack runs out (V8 near 5,000 levels).
    const overflow = {
      toJSON() {
        throw new RangeError("Maximum call stack size exceeded");
      },
    };
    const cases: Array<[unknown[], RegExp]> = [
      [[cyclic], /JSON cannot hold it \(.*(circular|cyclic)/i],
      [[1n], /JSON cannot hold it \(.*BigInt/i],
      [[overflow], /nested too deeply \(Maximum call stack size exceeded\)/],
    ];
    for (const [args, re] of cases) {
      for (const format of ["seconds", "millis"] as const) {
        assert.throws(
          () => serializePayload({ class: "A", jid: "j1", queue: "q", args }, format),
          (e: unknown) =>
            e instanceof PayloadError && /^Cannot write job A j1 as /.test(e.message) && re.test(e.message),
          `${format} ${re}`,
        );
      }
    }
    // However deep, serialising either works or throws a PayloadError: never a bare RangeError.
    let deep: unknown[] = [];
    for (let i = 0; i < 300_000; i++) deep = [deep];
    try {
      serializePayload({ class: "A", jid: "j1", queue: "q", args: [deep] }, "seconds");
    } catch (e) {
      assert.ok(e instanceof PayloadError, String(e));
    }
  });

  it("describes any value in a short, escaped excerpt", async () => {
    const { describeValue } = await import("../src/describe_value.ts");
    let deep: unknown[] = [];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    for (let i = 0; i < 300_000; i++) deep = [deep];
    assert.ok(describeValue(deep).length <= 80);
    assert.equal(describeValue(NaN), "NaN");
    assert.equal(describeValue("\u009b2J" + "x".repeat(100)).includes("\u009b"), false);
    assert.ok(describeValue({ big: "x".repeat(1_000_000) }).length <= 80);
  });
});
