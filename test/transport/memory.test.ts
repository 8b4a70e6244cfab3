import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { memoryTransport } from "../../src/transport/memory.ts";
import { conformance } from "./conformance.ts";
import { waitFor } from "../support/matrix.ts";

conformance("memory", async () => {
  const transport = memoryTransport();
  return { transport, close: () => transport.close() };
});

describe("memory transport", () => {
  it("expires strings", async () => {
    const r = memoryTransport();
    await r.call("SET", "k", "v", "PX", 30);
    assert.equal(await r.call("GET", "k"), "v");
    await waitFor(async () => (await r.call("GET", "k")) === null, "expiry", 2000);
    assert.equal(await r.call("EXISTS", "k"), 0);
  });

  it("close() answers pending blocking pops with null and leaves no timer", async () => {
    const r = memoryTransport();
    const pending = r.call("BRPOP", "q", 0);
    const timed = r.call("BLMOVE", "q", "p", "RIGHT", "LEFT", 3600);
    await r.close();
    assert.equal(await pending, null);
    assert.equal(await timed, null);
  });

  it("serves blocked clients in arrival order", async () => {
    const r = memoryTransport();
    const first = r.call("BRPOP", "q", 5);
    const second = r.call("BRPOP", "q", 5);
    await r.call("LPUSH", "q", "a");
    assert.deepEqual(await first, ["q", "a"]);
    await r.call("LPUSH", "q", "b");
    assert.deepEqual(await second, ["q", "b"]);
  });

  it("keeps 100k-item lists correct at both ends", async () => {
    const r = memoryTransport();
    const items = Array.from({ length: 100_000 }, (_, i) => String(i));
    for (let i = 0; i < items.length; i += 10_000) await r.call("LPUSH", "big", ...items.slice(i, i + 10_000));
    assert.equal(await r.call("LLEN", "big"), 100_000);
    assert.deepEqual(await r.call("RPOP", "big", 3), ["0", "1", "2"]);
    assert.equal(await r.call("LPOP", "big"), "99999");
    assert.equal(await r.call("LINDEX", "big", 0), "99998");
  });
});
