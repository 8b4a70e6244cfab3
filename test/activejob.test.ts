import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createClient, memoryTransport, PayloadError } from "../mod.ts";
import { parsePayload } from "../src/extend.ts";
import { activeJobArguments, globalId, isActiveJob, keywords, performLater, rubySymbol } from "../src/activejob.ts";

const S = "ActiveJob::Serializers::";
/** What Rails 7.1's ActiveJob::Core#serialize returns (see the fixture's $comment). */
const fixture = JSON.parse(
  readFileSync(new URL("./interop/fixtures/activejob.json", import.meta.url), "utf8"),
) as { serialized: Record<string, unknown> };

/** A job hash around `args`, as ActiveJob::Core#serialize writes it. */
const jobData = (args: unknown[]) => ({ ...fixture.serialized, arguments: args });

describe("ActiveJob arguments", () => {
  it("reads the Rails fixture: a GlobalID, a string and keyword arguments with a Symbol", () => {
    assert.deepEqual(activeJobArguments(fixture.serialized), [
      "gid://app/User/42",
      "ada@example.com",
      { greeting: "warm" },
    ]);
  });

  it("reads hashes as Rails' argument_serialization_test writes them, markers removed", () => {
    // activejob/test/cases/argument_serialization_test.rb, "serialize a hash" / "deserialize a hash".
    const hashes = [
      { a: 1, _aj_symbol_keys: ["a"] },
      { a: 1, _aj_symbol_keys: [] },
      { a: 1 },
      { a: 1, _aj_hash_with_indifferent_access: true },
      { a: 1, _aj_ruby2_keywords: ["a"] },
    ];
    assert.deepEqual(activeJobArguments(jobData(hashes)), hashes.map(() => ({ a: 1 })));
    // "should dive deep into arrays and hashes": [3, [person]] and [{ "a" => person }].
    assert.deepEqual(
      activeJobArguments(jobData([3, [{ _aj_globalid: "gid://app/Person/5" }], {
        a: { _aj_globalid: "gid://app/Person/5" },
        _aj_symbol_keys: [],
      }])),
      [3, ["gid://app/Person/5"], { a: "gid://app/Person/5" }],
    );
    // A GlobalID string stays a string; a hash with _aj_globalid among other keys is a hash.
    assert.deepEqual(activeJobArguments(jobData(["gid://app/Person/5", { _aj_globalid: "x", b: 2 }])), [
      "gid://app/Person/5",
      { _aj_globalid: "x", b: 2 },
    ]);
  });

  it("reads every serializer Rails 7.0-8.1 ships, as documented", () => {
    // Each value as the serializer in activejob/lib/active_job/serializers/*.rb writes it for the
    // objects of argument_serialization_test.rb.
    const wire = [
      { _aj_serialized: `${S}SymbolSerializer`, value: "warm" },
      { _aj_serialized: `${S}BigDecimalSerializer`, value: "5.0" },
      { _aj_serialized: `${S}DateSerializer`, value: "2001-02-03" },
      { _aj_serialized: `${S}TimeSerializer`, value: "2002-10-31T02:02:02.123456789+02:00" },
      { _aj_serialized: `${S}DateTimeSerializer`, value: "2001-02-03T04:05:06.123456000+03:00" },
      {
        _aj_serialized: `${S}TimeWithZoneSerializer`,
        value: "1999-12-31T23:59:59.123456789Z",
        time_zone: "Etc/UTC",
      },
      {
        _aj_serialized: `${S}DurationSerializer`,
        value: 93600,
        parts: [[{ _aj_serialized: `${S}SymbolSerializer`, value: "days" }, 1], [
          { _aj_serialized: `${S}SymbolSerializer`, value: "hours" },
          2,
        ]],
      },
      { _aj_serialized: `${S}ModuleSerializer`, value: "String" },
      { _aj_serialized: `${S}RangeSerializer`, begin: 1, end: 10, exclude_end: false },
      {
        _aj_serialized: `${S}RangeSerializer`,
        begin: { _aj_serialized: `${S}DateSerializer`, value: "2001-02-03" },
        end: null,
        exclude_end: true,
      },
      { _aj_serialized: "MoneySerializer", cents: 100, currency: "EUR" },
    ];
    assert.deepEqual(activeJobArguments(jobData(wire)), [
      "warm",
      "5.0",
      "2001-02-03",
      "2002-10-31T02:02:02.123456789+02:00",
      "2001-02-03T04:05:06.123456000+03:00",
      "1999-12-31T23:59:59.123456789Z",
      93600,
      "String",
      { begin: 1, end: 10, exclude_end: false },
      { begin: "2001-02-03", end: null, exclude_end: true },
      { _aj_serialized: "MoneySerializer", cents: 100, currency: "EUR" },
    ]);
  });

  it("refuses what is not an ActiveJob hash, or a malformed argument, with a PayloadError", () => {
    for (const bad of [null, "x", [1], { job_class: "A" }, { arguments: "no" }]) {
      assert.throws(
        () => activeJobArguments(bad),
        (e: unknown) => e instanceof PayloadError && /'arguments' array/.test(e.message),
      );
    }
    assert.throws(
      () => activeJobArguments(jobData([{ _aj_globalid: 5 }])),
      /arguments\[0\] as its GlobalID is not a string/,
    );
    assert.throws(
      () => activeJobArguments(jobData([[{ _aj_serialized: `${S}DurationSerializer`, value: "1 day" }]])),
      /arguments\[0\]\[0\] as its Duration is not a number/,
    );
  });

  it("keeps a hostile '__proto__' key a plain key", () => {
    const [hash] = activeJobArguments(
      JSON.parse('{"arguments":[{"__proto__":{"polluted":true},"_aj_symbol_keys":[]}]}'),
    );
    assert.equal(Object.getPrototypeOf(hash), Object.prototype);
    assert.deepEqual(Object.keys(hash as object), ["__proto__"]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("recognises both wrapper classes", () => {
    const payload = (cls: string) =>
      parsePayload(JSON.stringify({ class: cls, wrapped: "WelcomeMailerJob", args: [fixture.serialized], jid: "j" }));
    assert.equal(isActiveJob(payload("ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper")), true);
    assert.equal(isActiveJob(payload("Sidekiq::ActiveJob::Wrapper")), true);
    assert.equal(isActiveJob(payload("WelcomeMailerJob")), false);
  });
});

describe("performLater", () => {
  it("pushes what Rails' Sidekiq adapter pushes, and reads back to the same arguments", async () => {
    const redis = memoryTransport();
    const client = createClient({ transport: redis });
    const when = new Date("2025-01-08T17:40:42.123Z");
    const jid = await performLater(client, "WelcomeMailerJob", {
      args: [globalId("gid://app/User/42"), "ada@example.com", keywords({ greeting: rubySymbol("warm") }), {
        nested: [1, when],
      }],
      queue: "mailers",
    });
    const raw = (await redis.call("RPOP", "queue:mailers")) as string;
    const payload = parsePayload(raw);
    assert.equal(payload.jid, jid);
    assert.equal(payload.class, "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper");
    assert.equal(payload.wrapped, "WelcomeMailerJob");
    assert.equal(payload.queue, "mailers");
    assert.equal(isActiveJob(payload), true);
    const data = payload.args[0] as Record<string, unknown>;
    // Every key ActiveJob::Core#serialize writes, in its order.
    assert.deepEqual(Object.keys(data), Object.keys(fixture.serialized));
    assert.match(String(data.job_id), /^[0-9a-f-]{36}$/);
    assert.equal(data.queue_name, "mailers");
    assert.deepEqual((data.arguments as unknown[]).slice(0, 3), fixture.serialized.arguments as unknown[]);
    assert.deepEqual((data.arguments as unknown[])[3], {
      nested: [1, { _aj_serialized: `${S}TimeSerializer`, value: "2025-01-08T17:40:42.123Z" }],
      _aj_symbol_keys: [],
    });
    assert.deepEqual(activeJobArguments(data), [
      "gid://app/User/42",
      "ada@example.com",
      { greeting: "warm" },
      { nested: [1, "2025-01-08T17:40:42.123Z"] },
    ]);
    await performLater(client, "Later", { args: [], wait: 60 });
    assert.equal(await redis.call("ZCARD", "schedule"), 1);
    await assert.rejects(
      performLater(client, "Bad", { args: [{ _aj_symbol_keys: 1 }] }),
      /reserved key '_aj_symbol_keys'/,
    );
  });
});
