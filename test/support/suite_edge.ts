/**
 * The edge test scaffold several suites shared as copies: a private
 * redis-server, the Upstash REST gateway in front of it, a direct ioredis
 * transport to it (for assertions), and optionally an app bundled and
 * started in workerd with the gateway's URL and token as bindings. Hooks
 * are registered on the calling `describe`; everything is stopped after it.
 */
import { after, before } from "node:test";
import type { Transport } from "../../src/transport/transport.ts";
import { bundleForWorkerd, startWorkerd, type WorkerdApp } from "./workerd.ts";

/** What a suite reads inside its tests (after `before` ran). */
export interface EdgeSuite {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** The gateway (Upstash's REST protocol), and the Redis commands it forwarded. */
  readonly gateway: { readonly url: string; readonly commands: number };
  /** A direct transport to the server, for setting up and checking state. */
  readonly redis: Transport;
  /** The app in workerd (only with `app`). */
  readonly workerd: WorkerdApp;
}

/** Options for {@link suiteEdge}. */
export interface EdgeSuiteOptions {
  /** The gateway's bearer token. */
  token: string;
  /** An app to bundle and start in workerd: a file under the repository, or source text. */
  app?: { file: string } | { contents: string };
  /** The app's bindings, given the gateway's URL (default `{ URL, TOKEN }`). */
  bindings?: (gatewayUrl: string) => Record<string, string>;
  /** Where the app's outbound requests go (default: forwarded as they are). */
  outbound?: (request: Request) => Promise<Response>;
  /** Checks the bundle before it starts (e.g. that no TCP client is in it). */
  checkBundle?: (code: string) => void;
}

/**
 * Registers the hooks and returns the suite's parts.
 *
 * @example
 * ```ts
 * describe("edge", () => {
 *   const edge = suiteEdge({ token: "t", app: { contents: entry } });
 *   it("runs", async () => void (await edge.workerd.mf.dispatchFetch("http://x/")));
 * });
 * ```
 */
export function suiteEdge(options: EdgeSuiteOptions): EdgeSuite {
  let server: { url: string; stop(): Promise<void> } | null | undefined;
  let gateway: { url: string; readonly commands: number; stop(): Promise<void> } | undefined;
  let redis: Transport | undefined;
  let app: WorkerdApp | undefined;
  before(async () => {
    const { testRedis } = await import("./redis.ts");
    const { startUpstashGateway } = await import("./upstash-gateway.ts");
    const { ioredisTransport } = await import("../../src/transport/adapters/ioredis/ioredis_transport.ts");
    server = await testRedis();
    gateway = await startUpstashGateway({ redisUrl: server!.url, token: options.token });
    redis = ioredisTransport({ url: server!.url });
    if (options.app) {
      const code = await bundleForWorkerd(options.app);
      options.checkBundle?.(code);
      const bindings = options.bindings?.(gateway.url) ?? { URL: gateway.url, TOKEN: options.token };
      app = await startWorkerd(code, { bindings, outbound: options.outbound });
    }
  });
  after(async () => {
    await app?.dispose();
    await redis?.close();
    await gateway?.stop();
    await server?.stop();
  });
  return {
    get url() {
      return server!.url;
    },
    get gateway() {
      return gateway!;
    },
    get redis() {
      return redis!;
    },
    get workerd() {
      if (!app) throw new Error("suiteEdge: no app was started (pass `app`)");
      return app;
    },
  };
}
