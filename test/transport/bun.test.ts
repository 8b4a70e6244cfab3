import { bunTransport } from "../../src/transport/bun.ts";
import { testRedis } from "../support/redis.ts";
import { conformance } from "./conformance.ts";

const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

// Bun's built-in client exists only under Bun; elsewhere this file registers nothing.
if (isBun) {
  conformance("bun", async () => {
    const server = await testRedis();
    if (!server) return null;
    const transport = bunTransport({ url: server.url });
    return {
      transport,
      flushScripts: async () => void await transport.call("SCRIPT", "FLUSH"),
      close: async () => {
        await transport.close();
        await server.stop();
      },
    };
  });
}
