import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { bunTransport } from "../../src/transport/adapters/bun/bun_transport.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import type { Command, Transport } from "../../src/transport/transport.ts";
import { type TestRedis, testRedis } from "../support/redis.ts";
import { tcpTransportBehaviour } from "../support/tcp-transport.ts";
import { conformance } from "./conformance.ts";
import { tcpFaults } from "./conformance_faults.ts";

const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

if (!isBun) {
  it("bun transport", { skip: "Bun's built-in RedisClient exists only under Bun (run `bun test`)" }, () => {});
} else {
  conformance("bun", async () => {
    const server = await testRedis();
    if (!server) return null;
    const transport = bunTransport({ url: server.url });
    return {
      transport,
      ...tcpFaults(server, (url) => bunTransport({ url })),
      flushScripts: async () => void await transport.call("SCRIPT", "FLUSH"),
      close: async () => {
        await transport.close();
        await server.stop();
      },
    };
  });

  tcpTransportBehaviour("bun", (url) => bunTransport({ url }));

  describe("bun transport: RESP3 replies normalised to ioredis's RESP2 shapes", () => {
    let server: TestRedis | null = null;
    let bun: Transport, io: Transport;
    before(async () => {
      server = await testRedis();
      if (!server) return;
      bun = bunTransport({ url: server.url });
      io = ioredisTransport({ url: server.url });
    });
    after(async () => {
      await bun?.close();
      await io?.close();
      await server?.stop();
    });

    // Scores that print the same in JavaScript and in every Redis version
    // (Redis < 7.2 prints 0.1 as "0.10000000000000001"; Bun cannot know).
    const script = (k: string): Command[] => [
      ["ZADD", `${k}z`, 0.5, "a", 1732323232.5, "b", 3, "c", "-inf", "m", "+inf", "n"],
      ["ZRANGE", `${k}z`, 0, -1, "WITHSCORES"],
      ["ZRANGE", `${k}z`, "-inf", "+inf", "BYSCORE", "LIMIT", 0, 2, "WITHSCORES"],
      ["ZMSCORE", `${k}z`, "a", "x", "m"],
      ["ZSCORE", `${k}z`, "n"],
      ["ZINCRBY", `${k}z`, 1, "c"],
      ["ZADD", `${k}z`, "INCR", 1, "c"],
      ["ZADD", `${k}z`, "NX", "INCR", 1, "c"],
      ["ZPOPMIN", `${k}z`],
      ["ZPOPMAX", `${k}z`, 2],
      ["ZMPOP", 1, `${k}z`, "MIN", "COUNT", 1],
      ["ZUNION", 1, `${k}z`, "WITHSCORES"],
      ["BZPOPMIN", `${k}z`, 1],
      ["BZPOPMIN", `${k}z`, 0.05],
      ["HSET", `${k}h`, "field", "1"],
      ["HGETALL", `${k}h`],
      ["HRANDFIELD", `${k}h`, 1, "WITHVALUES"],
      ["SMEMBERS", `${k}none`],
      ["EVAL", "return {redis.status_reply('OK'), 'OK', true, false, 3.7, {1, 'x'}}", 0],
      ["CONFIG", "GET", "maxmemory-policy"],
      ["INCRBYFLOAT", `${k}f`, "1.5"],
    ];

    it("call() gives the same replies", async () => {
      if (!server) return;
      const replies = async (t: Transport, k: string) => {
        const out = [];
        for (const [name, ...args] of script(k)) out.push(await t.call(name, ...args));
        return JSON.stringify(out).replaceAll(k, "K");
      };
      assert.equal(await replies(bun, "resp:bun:"), await replies(io, "resp:io:"));
    });

    it("pipeline() and atomic pipeline() give the same replies", async () => {
      if (!server) return;
      const blocking = new Set(["BZPOPMIN"]);
      for (const atomic of [false, true]) {
        const run = async (t: Transport, k: string) =>
          JSON.stringify(await t.pipeline(script(k).filter(([n]) => !blocking.has(n)), { atomic })).replaceAll(k, "K");
        assert.equal(await run(bun, `pipe:${atomic}:bun:`), await run(io, `pipe:${atomic}:io:`));
      }
    });
  });
}
