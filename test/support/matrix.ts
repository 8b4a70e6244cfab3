/**
 * The transport matrix for engine and client tests: the memory transport
 * always; ioredis against a private redis-server; Bun's RedisClient under
 * Bun; @upstash/redis through the REST gateway fixture.
 *
 * Each target is opened once per test file (its own redis-server, or the
 * empty database EDGEKIQ_TEST_REDIS_URL names) and flushed between tests.
 */
import { after, before } from "node:test";
import type { Transport } from "../../src/transport/transport.ts";
import { memoryTransport } from "../../src/transport/adapters/memory/memory_transport.ts";
import { spawnSync } from "node:child_process";
import { TEST_REDIS_ENV, testRedis } from "./redis.ts";

let availability: boolean | undefined;
/** Whether a real Redis can be had: EDGEKIQ_TEST_REDIS_URL, or redis-server on PATH. Loud when not. */
export function redisAvailable(): boolean {
  if (availability !== undefined) return availability;
  const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
  availability = Boolean(env[TEST_REDIS_ENV]) || spawnSync("sh", ["-c", "command -v redis-server"]).status === 0;
  if (!availability) {
    if (env.CI === "true") throw new Error(`CI must have Redis: no redis-server on PATH and no ${TEST_REDIS_ENV}`);
    console.error(`SKIP: no redis-server and no ${TEST_REDIS_ENV} — Redis-backed tests skipped`);
  }
  return availability;
}

export interface Target {
  name: string;
  /** A transport for this target (several may be opened; all closed at the end). */
  open(): Promise<Transport>;
  /** Empties the database. */
  flush(): Promise<void>;
  /** Server URL for real targets (for Ruby and child processes). */
  url?: string;
}

export type TargetName = "memory" | "ioredis" | "bun" | "upstash" | "cluster";

const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

/**
 * Registers before/after hooks and returns the targets to run a suite over.
 * Call at the top level of a test file. `names` limits the matrix.
 */
export function matrix(names: TargetName[] = ["memory", "ioredis", "bun"]): Target[] {
  const targets: Target[] = [];
  // EDGEKIQ_TEST_TARGETS=memory,ioredis narrows the matrix while developing.
  const only = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env
    .EDGEKIQ_TEST_TARGETS;
  const picked = only ? names.filter((n) => only.split(",").includes(n)) : names;
  const wanted = picked.includes("memory") || !redisAvailable()
    ? picked.filter((n) => n === "memory" || redisAvailable())
    : picked;
  const opened: Transport[] = [];
  let server: Awaited<ReturnType<typeof testRedis>> = null;
  let gateway: { url: string; stop(): Promise<void> } | undefined;
  let admin: Transport | undefined;

  const shared = memoryTransport();
  if (wanted.includes("memory")) {
    targets.push({
      name: "memory",
      open: () => Promise.resolve(shared),
      flush: async () => void await shared.call("FLUSHDB"),
    });
  }
  const flushReal = async () => {
    if (!admin) throw new Error("no redis");
    // Only the tests' own keys are here: testRedis() refused an outside
    // database that was not empty. Its script cache is shared with other
    // databases and clients, so only a server the tests started loses it.
    await admin.call("FLUSHDB");
    if (server?.owned) await admin.call("SCRIPT", "FLUSH");
  };
  const real = (name: TargetName, make: (url: string) => Promise<Transport>): Target => ({
    name,
    get url() {
      return server?.url;
    },
    async open() {
      if (!server) throw new Error("no redis");
      const t = await make(server.url);
      opened.push(t);
      return t;
    },
    flush: flushReal,
  });
  if (wanted.includes("ioredis")) {
    targets.push(
      real(
        "ioredis",
        async (url) =>
          (await import("../../src/transport/adapters/ioredis/ioredis_transport.ts")).ioredisTransport({ url }),
      ),
    );
  }
  if (wanted.includes("bun") && isBun) {
    targets.push(
      real(
        "bun",
        async (url) => (await import("../../src/transport/adapters/bun/bun_transport.ts")).bunTransport({ url }),
      ),
    );
  }
  if (wanted.includes("upstash")) {
    targets.push(real("upstash", async (url) => {
      const { startUpstashGateway } = await import("./upstash-gateway.ts");
      gateway ??= await startUpstashGateway({ redisUrl: url, token: "test-token" });
      const { upstashTransport } = await import("../../src/transport/adapters/upstash/upstash_transport.ts");
      return upstashTransport({ url: gateway.url, token: "test-token" });
    }));
  }
  // A private six-node Redis Cluster through the cluster transport (its own key layout: suites that name raw
  // Sidekiq keys cannot use it). Started only when a suite asks for it.
  let cluster: import("./cluster.ts").TestCluster | undefined;
  let clusterAdmin: import("ioredis").Cluster | undefined;
  if (wanted.includes("cluster") && redisAvailable()) {
    targets.push({
      name: "cluster",
      async open() {
        if (!cluster) throw new Error("no cluster");
        const { clusterTransport } = await import("../../src/transport/adapters/cluster/cluster_transport.ts");
        const t = clusterTransport({ nodes: cluster.seeds });
        opened.push(t);
        return t;
      },
      async flush() {
        if (!clusterAdmin) throw new Error("no cluster");
        await Promise.all(clusterAdmin.nodes("master").map((node) => node.flushall()));
      },
    });
  }
  // Registered last: node:test may run a root-level before() at once.
  before(async () => {
    if (targets.some((t) => t.name === "cluster")) {
      const { startCluster } = await import("./cluster.ts");
      const { Cluster } = await import("ioredis");
      cluster = await startCluster();
      const admin = clusterAdmin = new Cluster(cluster.seeds, { scaleReads: "master" });
      // Its node list is settled once it is ready: before that, seed connections may still be replaced.
      await new Promise<void>((resolve, reject) => {
        admin.once("ready", resolve);
        admin.once("error", reject);
      });
    }
    if (!targets.some((t) => t.name !== "memory" && t.name !== "cluster")) return;
    server = await testRedis();
    if (server) {
      const { ioredisTransport } = await import("../../src/transport/adapters/ioredis/ioredis_transport.ts");
      admin = ioredisTransport({ url: server.url });
    }
  });
  after(async () => {
    await Promise.allSettled(opened.map((t) => t.close()));
    await admin?.close();
    await gateway?.stop();
    await server?.stop();
    clusterAdmin?.disconnect();
    await cluster?.stop();
  });

  return targets;
}

/**
 * Waits until `check` returns a truthy value, polling; fails after `timeoutMs`.
 */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
