import { ioredisTransport } from "../../src/transport/ioredis.ts";
import { testRedis } from "../support/redis.ts";
import { conformance } from "./conformance.ts";

conformance("ioredis", async () => {
  const server = await testRedis();
  if (!server) return null;
  const transport = ioredisTransport({ url: server.url });
  return {
    transport,
    flushScripts: async () => void await transport.call("SCRIPT", "FLUSH"),
    close: async () => {
      await transport.close();
      await server.stop();
    },
  };
});
