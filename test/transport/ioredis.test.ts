import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { ConfigError } from "../../src/errors.ts";
import { TransportError } from "../../src/transport/transport_error.ts";
import { startLossyProxy } from "../support/lossy-proxy.ts";
import { type TestRedis, testRedis } from "../support/redis.ts";
import { tcpTransportBehaviour } from "../support/tcp-transport.ts";
import { conformance } from "./conformance.ts";
import { tcpFaults } from "./conformance_faults.ts";

conformance("ioredis", async () => {
  const server = await testRedis();
  if (!server) return null;
  const transport = ioredisTransport({ url: server.url });
  return {
    transport,
    ...tcpFaults(server, (url) => ioredisTransport({ url })),
    flushScripts: async () => void await transport.call("SCRIPT", "FLUSH"),
    close: async () => {
      await transport.close();
      await server.stop();
    },
  };
});

conformance("ioredis (auto-pipelining)", async () => {
  const server = await testRedis();
  if (!server) return null;
  const transport = ioredisTransport({ url: server.url, autoPipelining: true });
  return {
    transport,
    ...tcpFaults(server, (url) => ioredisTransport({ url, autoPipelining: true })),
    close: async () => {
      await transport.close();
      await server.stop();
    },
  };
});

tcpTransportBehaviour("ioredis", (url) => ioredisTransport({ url }));

describe("ioredis transport", () => {
  let server: TestRedis | null = null;
  before(async () => (server = await testRedis()));
  after(() => server?.stop());

  it("leaves a client it was given open, unless told it owns it (RESP2 and RESP3 clients)", async () => {
    if (!server) return;
    for (const protocol of [2, 3] as const) {
      const client: Redis = new Redis(server.url, { protocol });
      const borrowed = ioredisTransport({ client });
      assert.deepEqual(await borrowed.call("HGETALL", "none"), []);
      assert.equal(await borrowed.call("BRPOP", "nothing", 0.05), null); // duplicates a blocking connection
      await borrowed.close();
      assert.equal(await client.ping(), "PONG");
      const owned = ioredisTransport({ client, owned: true });
      await owned.call("PING");
      await owned.close();
      if (client.status !== "end") await new Promise((resolve) => client.once("end", resolve));
    }
  });

  it("refuses RESP3 connections, whose reply shapes differ, and resending unanswered commands", () => {
    assert.throws(() => ioredisTransport({ redisOptions: { protocol: 3, lazyConnect: true } }), ConfigError);
    assert.throws(
      () => ioredisTransport({ redisOptions: { autoResendUnfulfilledCommands: true, lazyConnect: true } }),
      /autoResendUnfulfilledCommands/,
    );
  });

  it("never resends through a given client that would (ioredis's default): it is duplicated without", async () => {
    if (!server) return;
    const proxy = await startLossyProxy({ redisPort: server.port });
    const client = new Redis(proxy.url, { protocol: 2 });
    const t = ioredisTransport({ client });
    try {
      await t.call("DEL", "given:list");
      proxy.dropNextReply();
      await assert.rejects(
        t.call("LPUSH", "given:list", "x"),
        (e: unknown) => e instanceof TransportError && e.kind === "connection" && e.maybeApplied,
      );
      assert.equal(await t.call("LLEN", "given:list"), 1, "applied once");
      assert.equal(proxy.dropped, 1);
    } finally {
      await t.close();
      client.disconnect();
      await proxy.stop();
    }
  });

  it("with auto-pipelining, a MULTI block never takes in a command another caller issued in the same tick", async () => {
    if (!server) return;
    const t = ioredisTransport({ url: server.url, autoPipelining: true });
    try {
      await t.call("SET", "tick:a", "1");
      // The GET waits for the next tick in ioredis's auto-pipeline; a MULTI written at once would wrap it.
      const got = t.call("GET", "tick:a");
      const block = t.pipeline([["SET", "tick:b", "2"], ["GET", "tick:b"]], { atomic: true });
      assert.deepEqual(await Promise.all([got, block]), ["1", ["OK", "2"]]);
    } finally {
      await t.close();
    }
  });

  it("sends pipelines and MULTI blocks as plain commands, not through ioredis's Pipeline (which V8 keeps past every young GC)", async () => {
    if (!server) return;
    const client = new Redis(server.url, { protocol: 2, autoResendUnfulfilledCommands: false });
    let pipelines = 0;
    client.pipeline = () => {
      pipelines++;
      throw new Error("pipeline() called");
    };
    client.multi = () => {
      pipelines++;
      throw new Error("multi() called");
    };
    const t = ioredisTransport({ client });
    try {
      await t.call("DEL", "plain:list", "plain:str");
      assert.deepEqual(await t.pipeline([["RPUSH", "plain:list", "a", "b"], ["LRANGE", "plain:list", 0, -1]]), [2, [
        "a",
        "b",
      ]]);
      assert.deepEqual(
        await t.pipeline([["SET", "plain:str", "x"], ["LPOP", "plain:list"], ["GET", "plain:str"]], { atomic: true }),
        ["OK", "a", "x"],
      );
      // A command Redis runs but fails inside EXEC, and one it refuses to queue (EXECABORT, with the refusal's reason).
      await assert.rejects(
        t.pipeline([["SET", "plain:str", "y"], ["LPUSH", "plain:str", "z"]], { atomic: true }),
        (e: unknown) => e instanceof TransportError && /WRONGTYPE/.test(e.message),
      );
      assert.equal(await t.call("GET", "plain:str"), "y", "the block ran: Redis does not roll back");
      await assert.rejects(
        t.pipeline([["SET", "plain:str", "z"], ["GET"]], { atomic: true }),
        (e: unknown) => e instanceof TransportError && /EXECABORT/.test(e.message) && /wrong number/.test(e.message),
      );
      assert.equal(await t.call("GET", "plain:str"), "y", "the refused block ran nothing");
      await assert.rejects(
        t.pipeline([["GET", "plain:str"], ["LPUSH", "plain:str", "z"]]),
        (e: unknown) => e instanceof TransportError && /WRONGTYPE/.test(e.message),
      );
      assert.equal(pipelines, 0);
    } finally {
      await t.close();
      client.disconnect();
    }
  });
});
