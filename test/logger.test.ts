import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { createClient, createLogger, defineJob, JobArgsError, memoryTransport } from "../mod.ts";
import { sanitize, truncate } from "../src/sanitize.ts";

function capture(options: { json?: boolean; maxFieldLength?: number } = {}) {
  const lines: string[] = [];
  const logger = createLogger({ ...options, write: (line) => void lines.push(line) });
  return { logger, lines };
}

describe("sanitize and truncate", () => {
  it("escape terminal controls and invisible marks, and cut long text with its length", () => {
    assert.equal(sanitize("ok\u001b[2J\u0007"), "ok\\x1b[2J\\x07");
    assert.equal(sanitize("a\nb\tc\r"), "a\\nb\\tc\\r");
    assert.equal(sanitize("\u009b31m \u202eevil \u200b"), "\\x9b31m \\u202eevil \\u200b");
    assert.equal(sanitize("héllo 日本 🎉"), "héllo 日本 🎉");
    assert.equal(truncate("x".repeat(1000), 10), "xxxxxxxxxx… (1000 chars)");
    assert.equal(truncate("short"), "short");
    // A surrogate pair is kept whole or dropped, never split.
    assert.equal(truncate("a🎉bc", 2), "a… (5 chars)");
  });
});

describe("logger output", () => {
  it("escapes control characters in plain text: message, keys and values", () => {
    const { logger, lines } = capture();
    logger.child({ jid: "j\u001b[31mred" }).warn("bad \u001b]0;title\u0007 job", {
      "k\u001b": "v\u009b",
      args: ["\u001b[2J"],
    });
    assert.equal(lines.length, 1);
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(lines[0], /[\u0000-\u001f\u007f-\u009f]/);
    assert.match(
      lines[0],
      /WARN {2}bad \\x1b\]0;title\\x07 job jid="j\\u001b\[31mred" k\\x1b="v\\x9b" args=\["\\u001b\[2J"\]$/,
    );
  });

  it("cuts a 1 MiB jid to a few hundred characters with its length, in both formats", () => {
    const jid = "a".repeat(1 << 20);
    const plain = capture();
    plain.logger.child({ jid }).info("start");
    assert.ok(plain.lines[0].length < 700, `${plain.lines[0].length} chars`);
    assert.match(plain.lines[0], /jid="a{500}… \(1048576 chars\)"$/);
    const json = capture({ json: true });
    json.logger.child({ jid, args: [jid] }).info("m".repeat(1 << 20));
    assert.ok(json.lines[0].length < 4000, `${json.lines[0].length} chars`);
    const line = JSON.parse(json.lines[0]);
    assert.equal(line.jid, `${"a".repeat(500)}… (1048576 chars)`);
    assert.match(line.args, /^\["a{498}… \(1048580 chars\)$/);
    assert.match(line.msg, /^m{2000}… \(1048576 chars\)$/);
  });

  it("writes JSON lines that parse back to the same short values, with C1 and bidi marks escaped", () => {
    const { logger, lines } = capture({ json: true });
    logger.info("x\u009by", { queue: "q\u202e", n: 1, ok: true, list: [1, "a"], err: new TypeError("boom") });
    assert.doesNotMatch(lines[0], /[\u007f-\u009f\u202e]/);
    const line = JSON.parse(lines[0]);
    assert.deepEqual([line.msg, line.queue, line.n, line.ok, line.list, line.err], [
      "x\u009by",
      "q\u202e",
      1,
      true,
      [1, "a"],
      "TypeError: boom",
    ]);
  });

  it("never throws on a value JSON cannot hold", () => {
    const { logger, lines } = capture();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    logger.info("m", { cyclic, big: 10n, fn: () => 1 });
    assert.match(lines[0], /cyclic="\[unserialisable\]" big="\[unserialisable\]" fn=/);
    const json = capture({ json: true });
    json.logger.info("m", { cyclic, big: 10n, fn: () => 1 });
    assert.equal(JSON.parse(json.lines[0]).cyclic, "[unserialisable]");
  });
});

describe("schema errors", () => {
  it("quote hostile or huge arguments only as a short, escaped excerpt", async () => {
    const Typed = defineJob({ name: "Typed", args: v.tuple([v.number()]), perform() {} });
    const client = createClient({ transport: memoryTransport() });
    const hostile = "\u001b[2J" + "x".repeat(1 << 20);
    const error = await client.push(Typed, [hostile as unknown as number]).then(
      () => assert.fail("pushed"),
      (e: unknown) => e as JobArgsError,
    );
    assert.ok(error instanceof JobArgsError);
    assert.ok(error.message.length < 400, `${error.message.length} chars`);
    assert.ok(!error.message.includes("\u001b"));
    assert.ok(error.issues[0].message.length <= 220);
    assert.equal(error.issues[0].path, "args[0]");
  });
});
