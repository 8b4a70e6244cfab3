/**
 * A private redis-server per test file: a free loopback port, no
 * persistence, stopped by `stop()` and, whatever happens to the test process
 * (crash, SIGKILL, runner timeout), when that process goes away. Never
 * touches the Redis on the default port 6379.
 *
 * Tests flush their database, so they never use `REDIS_URL`: many Sidekiq
 * users export it globally for their apps. An outside server is used only
 * when named by the test-only `EDGEKIQ_TEST_REDIS_URL`, and only if its
 * database is empty when a test file starts (keys there were not written by
 * the tests, so flushing them is refused, loudly).
 *
 * Works under Node, Bun and Deno (run Deno with -A).
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";

/** The variable that points tests at an outside Redis database (which must be empty). */
export const TEST_REDIS_ENV = "EDGEKIQ_TEST_REDIS_URL";

// A user's REDIS_URL must not reach a child process a test starts (a worker,
// the CLI, a Ruby script): the child would write into the user's Redis.
// Tests pass their own server's URL to children explicitly.
delete process.env.REDIS_URL;

/** A running Redis for tests. */
export interface TestRedis {
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  /** The TCP port. */
  port: number;
  /** Whether the tests started this server (false for `EDGEKIQ_TEST_REDIS_URL`). */
  owned: boolean;
  /** Stops the server and removes its directory; for an outside server, empties what the tests wrote. */
  stop(): Promise<void>;
}

/**
 * The redis-server binary on PATH, or null.
 *
 * @example
 * ```ts
 * if (!redisServerPath()) console.log("no redis-server");
 * ```
 */
export function redisServerPath(): string | null {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, "redis-server");
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch { /* not here */ }
  }
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let data = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500);
    socket.on("data", (d) => {
      data += d;
      if (data.includes("\r\n")) done(data.startsWith("+PONG"));
    });
    socket.on("error", () => done(false));
    socket.on("timeout", () => done(false));
    socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
  });
}

// A watchdog shell owns redis-server: it kills the server when its stdin (a
// pipe from this process) closes, which the OS does even if this process is
// SIGKILLed, so no orphan servers outlive a crashed or timed-out test run.
// Background jobs get /dev/null as stdin in sh, hence the fd 3 dance.
const WATCHDOG = `exec 3<&0
"$0" "$@" </dev/null &
pid=$!
(read _ <&3; kill $pid 2>/dev/null) &
exec 3<&-
wait $pid`;

const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) child.stdin?.destroy();
});

async function spawnOnce(
  binary: string,
  fixedPort?: number,
  extra: readonly string[] = [],
  givenDir?: string,
): Promise<TestRedis | null> {
  const port = fixedPort ?? await freePort();
  const dir = givenDir ?? mkdtempSync(join(tmpdir(), "edgekiq-redis-"));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  args.push("--daemonize", "no", "--dir", dir, ...extra);
  const child = spawn("sh", ["-c", WATCHDOG, binary, ...args], { stdio: ["pipe", "ignore", "ignore"] });
  children.add(child);
  child.on("error", () => {}); // reported below as "did not start"
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  // Do not keep the test process alive just for the server: a forgotten
  // stop() then ends with the process, and the watchdog reaps the server.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  const cleanup = async () => {
    child.ref(); // keep the process alive until the server is really gone
    child.stdin?.destroy();
    await exited;
    children.delete(child);
    if (!givenDir) rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await ping(port))) {
    if (gone) {
      await cleanup();
      return null; // most likely lost the port to another process: retry
    }
    if (Date.now() > deadline) {
      await cleanup();
      throw new Error(`redis-server did not answer PING on port ${port} within 10 s`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { url: `redis://127.0.0.1:${port}`, port, owned: true, stop: cleanup };
}

/**
 * Starts redis-server on a free loopback port (or `options.port`, to restart
 * a server where clients expect it) and waits until it answers PING.
 * `options.args` are extra redis-server flags, such as a tiny maxmemory.
 * `options.dir` is its working directory, kept at stop (the caller removes
 * it): a server restarted there with `--appendonly yes` finds its data.
 *
 * @example
 * ```ts
 * const redis = await startRedis();
 * try { console.log(redis.url); } finally { await redis.stop(); }
 * const full = await startRedis({ args: ["--maxmemory", "2mb", "--maxmemory-policy", "noeviction"] });
 * ```
 */
export async function startRedis(
  options: { port?: number; args?: readonly string[]; dir?: string } = {},
): Promise<TestRedis> {
  const binary = redisServerPath();
  if (!binary) throw new Error("redis-server is not on PATH");
  if (options.port === 6379) throw new Error("refusing to start a test redis-server on port 6379");
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = await spawnOnce(binary, options.port, options.args, options.dir);
    if (server) return server;
  }
  throw new Error("redis-server exited at start five times (port races or a broken install)");
}

let skipPrinted = false;

/**
 * Accepts an outside database only if it is empty: the tests flush it, and
 * keys already there are someone else's. At the end of the test file it is
 * emptied again (everything in it was written by the tests), so the next
 * test file finds it empty too.
 */
async function outsideRedis(url: string): Promise<TestRedis> {
  const { Redis } = await import("ioredis");
  const shown = url.replace(/\/\/([^@/]*)@/, "//***@");
  const connect = () => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  const admin = connect();
  let keys: number;
  try {
    await admin.connect();
    keys = await admin.dbsize();
  } finally {
    admin.disconnect();
  }
  if (keys !== 0) {
    throw new Error(
      `refusing ${TEST_REDIS_ENV}=${shown}: its database holds ${keys} keys the tests did not write, and the ` +
        "tests flush it. Point it at an empty database (another db number, e.g. /15), or unset it to let the " +
        "tests start their own redis-server.",
    );
  }
  return {
    url,
    port: Number(new URL(url).port || 6379),
    owned: false,
    async stop() {
      const client = connect();
      try {
        await client.connect();
        await client.flushdb();
      } finally {
        client.disconnect();
      }
    },
  };
}

/**
 * The Redis for a test file: an empty outside database named by
 * `EDGEKIQ_TEST_REDIS_URL`, else a private redis-server, else null (skip,
 * with one loud line per process) — but under `CI=true` a missing Redis
 * throws: CI must have one. `REDIS_URL` is never used.
 *
 * @example
 * ```ts
 * let redis: TestRedis | null;
 * before(async () => (redis = await testRedis()));
 * after(() => redis?.stop());
 * ```
 */
export async function testRedis(): Promise<TestRedis | null> {
  const url = process.env[TEST_REDIS_ENV];
  if (url) return await outsideRedis(url);
  if (redisServerPath()) return await startRedis();
  if (process.env.CI === "true") {
    throw new Error(`CI=true but there is no redis-server on PATH and no ${TEST_REDIS_ENV}`);
  }
  if (!skipPrinted) {
    skipPrinted = true;
    console.error(`SKIP: no redis-server and no ${TEST_REDIS_ENV} — Redis-backed tests skipped`);
  }
  return null;
}
