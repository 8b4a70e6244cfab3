/**
 * A private redis-server per test file: a free loopback port, no
 * persistence, killed on stop and at process exit. `REDIS_URL` overrides.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
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
    socket.setTimeout(500);
    socket.on("data", (d) => {
      data += d;
      if (data.includes("\r\n")) {
        socket.destroy();
        resolve(data.startsWith("+PONG"));
      }
    });
    socket.on("error", () => resolve(false));
    socket.on("timeout", () => (socket.destroy(), resolve(false)));
    socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
  });
}

const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** Starts redis-server on a free port and waits until it answers PING. */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "edgekiq-redis-"));
  const child = spawn("redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "no",
    "--dir",
    dir,
  ], { stdio: "ignore" });
  children.add(child);
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await ping(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      children.delete(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The Redis for a test file: `REDIS_URL` when set on purpose, else a private
 * redis-server, else null (skip) — but under CI=true a missing Redis fails.
 */
export async function testRedis(): Promise<TestRedis | null> {
  if (process.env.REDIS_URL) {
    const url = process.env.REDIS_URL;
    return { url, port: Number(new URL(url).port || 6379), stop: async () => {} };
  }
  try {
    return await startRedis();
  } catch (error) {
    if (process.env.CI === "true") throw error;
    console.error(`SKIP: no redis-server and no REDIS_URL — Redis-backed tests skipped (${(error as Error).message})`);
    return null;
  }
}
