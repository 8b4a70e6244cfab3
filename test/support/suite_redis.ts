/**
 * A private redis-server for one `describe` block, and an ioredis transport
 * to it: started in the block's `before`, closed and stopped in its `after`,
 * with the child processes the block started (`running`) killed first.
 */
import { after, before } from "node:test";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { type TestRedis, testRedis } from "./redis.ts";
import type { Spawned } from "../fixtures/cli-spawn.ts";

/** The suite's server: read inside tests (after `before` ran). */
export interface SuiteRedis {
  /** `redis://127.0.0.1:<port>`, for child processes. */
  readonly url: string;
  readonly redis: Transport;
  /** Child processes the block started: SIGKILLed in its `after`, before the server stops. */
  readonly running: Spawned[];
}

/**
 * Registers the hooks and returns the suite's server.
 *
 * @example
 * ```ts
 * describe("worker process", () => {
 *   const suite = suiteRedis();
 *   it("...", async () => void (await suite.redis.call("PING")));
 * });
 * ```
 */
export function suiteRedis(): SuiteRedis {
  let server: TestRedis | null = null;
  let redis: Transport | undefined;
  const running: Spawned[] = [];
  before(async () => {
    server = await testRedis();
    redis = ioredisTransport({ url: server!.url });
  });
  after(async () => {
    for (const child of running) child.kill("SIGKILL");
    await redis?.close();
    await server?.stop();
  });
  return {
    get url() {
      return server!.url;
    },
    get redis() {
      return redis!;
    },
    running,
  };
}
