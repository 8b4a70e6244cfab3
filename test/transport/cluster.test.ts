import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { clusterTransport } from "../../src/transport/adapters/cluster/cluster_transport.ts";
import { hashTagOf, keySlot } from "../../src/key_slot.ts";
import { ConfigError } from "../../src/errors.ts";
import { TransportError } from "../../src/transport/transport_error.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { clusterAvailable, startCluster, type TestCluster } from "../support/cluster.ts";
import { checkBlockThen } from "../support/tcp-transport.ts";
import { conformance } from "./conformance.ts";

conformance("cluster", async () => {
  if (!clusterAvailable()) return null;
  const cluster = await startCluster();
  const transport = clusterTransport({ nodes: cluster.seeds });
  return {
    transport,
    close: async () => {
      await transport.close();
      await cluster.stop();
    },
  };
});

describe("key slots", () => {
  it("match CLUSTER KEYSLOT's known values and honour hash tags", () => {
    assert.equal(keySlot("foo"), 12182);
    assert.equal(keySlot("bar"), 5061);
    assert.equal(keySlot("123456789"), 12739);
    assert.equal(keySlot("{user1000}.following"), keySlot("{user1000}.followers"));
    assert.equal(hashTagOf("{}:x"), "{}:x");
    assert.equal(hashTagOf("a{b}c{d}"), "b");
    assert.equal(hashTagOf("a{b"), "a{b");
  });
});

describe("cluster transport", () => {
  let cluster: TestCluster | undefined;
  let t: Transport;
  before(async () => {
    if (!clusterAvailable()) return;
    cluster = await startCluster();
    t = clusterTransport({ nodes: cluster.seeds });
  });
  after(async () => {
    await t?.close();
    await cluster?.stop();
  });

  it("refuses bad seeds with a clear error", () => {
    assert.throws(() => clusterTransport({ nodes: [] }), ConfigError);
    assert.throws(() => clusterTransport({ nodes: [42 as unknown as string] }), /each of 'nodes' must be/);
    assert.throws(
      () => clusterTransport({ nodes: ["127.0.0.1:1"], redisOptions: { protocol: 3 } }),
      /RESP3/,
    );
  });

  it("agrees with the server's CLUSTER KEYSLOT", async () => {
    if (!cluster) return;
    for (const key of ["{edgekiq}:queue:default", "queue:critical", "{app}:retry", "é{ü}x", "stat:processed"]) {
      assert.equal(Number(await t.call("CLUSTER", "KEYSLOT", key)), keySlot(key), key);
    }
  });

  it("reports the cluster keyspace and routes keys to every primary", async () => {
    if (!cluster) return;
    assert.equal(t.keyspace, "cluster");
    assert.equal(t.kind, "cluster");
    // 60 keys with different tags land on all three primaries; each is read back through the right node.
    for (let i = 0; i < 60; i++) await t.call("SET", `{k${i}}`, String(i));
    for (let i = 0; i < 60; i++) assert.equal(await t.call("GET", `{k${i}}`), String(i));
    const counts = await Promise.all(
      (await cluster.primaries()).map(async (port) => Number((await cluster!.cli(port, "DBSIZE")).trim())),
    );
    assert.equal(counts.length, 3);
    assert.ok(counts.every((n) => n > 0), `keys on every primary: ${counts}`);
  });

  it("SCANs every primary behind one cursor", async () => {
    if (!cluster) return;
    const want = new Set<string>();
    for (let i = 0; i < 90; i++) {
      await t.call("SET", `scan:{s${i}}`, "x");
      want.add(`scan:{s${i}}`);
    }
    const seen = new Set<string>();
    let cursor = "0", pages = 0;
    do {
      const [next, items] = (await t.call("SCAN", cursor, "MATCH", "scan:*", "COUNT", 10)) as [string, string[]];
      for (const item of items) seen.add(item);
      cursor = next;
      pages++;
    } while (cursor !== "0" && pages < 1000);
    assert.deepEqual(seen, want);
  });

  it("refuses a script whose keys cross slots (CROSSSLOT), without running it", async () => {
    if (!cluster) return;
    await assert.rejects(
      t.pipeline([["SET", "{a}x", "1"], ["SET", "{b}x", "1"]], { atomic: true }),
      (e: unknown) => e instanceof TransportError || e instanceof Error,
    );
    await assert.rejects(t.call("EVAL", "return 1", 2, "{a}y", "{b}y"), /CROSSSLOT/);
  });

  it("blocks on the primary owning the key, and an abort unblocks it there", async () => {
    if (!cluster) return;
    const controller = new AbortController();
    const started = Date.now();
    const waiting = t.block(["BLMOVE", "{blk}:src", "{blk}:dst", "RIGHT", "LEFT", 5], { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    assert.equal(await waiting, null);
    assert.ok(Date.now() - started < 2000, "aborted long before its 5 s timeout");
    // A push wakes a blocked fetch.
    const second = t.block(["BLMOVE", "{blk}:src", "{blk}:dst", "RIGHT", "LEFT", 5], {
      signal: new AbortController().signal,
    });
    await new Promise((r) => setTimeout(r, 50));
    await t.call("LPUSH", "{blk}:src", "job");
    assert.equal(await second, "job");
    assert.deepEqual(await t.call("LRANGE", "{blk}:dst", 0, -1), ["job"]);
  });

  it("runs a script behind a blocking call on the primary owning its key (blockThen)", async () => {
    if (!cluster) return;
    await checkBlockThen(t, { tag: "{bthen}", flushScripts: () => t.eachPrimary!(["SCRIPT", "FLUSH"]) });
    // With replicated durability every write is followed by WAIT: a script written behind a wait would have none.
    const replicated = clusterTransport({ nodes: cluster.seeds, durability: "replicated" });
    try {
      assert.equal(replicated.blockThen, undefined);
    } finally {
      await replicated.close();
    }
  });
});
