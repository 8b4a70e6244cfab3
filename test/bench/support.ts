/**
 * Shared pieces of the benchmark harness: a private redis-server, a tiny
 * RESP client for the parent's admin commands (FLUSHDB, INFO), and child
 * processes with hard timeouts (commands.ts says how each system starts).
 *
 * Everything talks to loopback only; the harness never touches a Redis it
 * did not start unless EDGEKIQ_BENCH_REDIS_URL says so.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createServer, Socket } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { JobCost } from "./redis-snapshot.ts";

export const benchDir = fileURLToPath(new URL(".", import.meta.url));
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** What every child prints as its last stdout line (fields a system cannot measure are null). */
export interface ChildResult {
  jobsPerSec?: number | null;
  seconds?: number | null;
  rssMB?: number | null;
  roundTripsPerJob?: number | null;
  serverCommandsPerJob?: number | null;
  p50?: number | null;
  p99?: number | null;
  pctIdeal?: number | null;
  jobs?: number;
  /** Redis's cost per job, read by the harness around the child's phases. */
  redis?: { push?: JobCost; drain?: JobCost; run?: JobCost };
  [extra: string]: unknown;
}

/** A child's outcome: its result, or why there is none. */
export type Outcome =
  | { status: "ok"; result: ChildResult; wallSeconds: number }
  | { status: "timeout" | "error"; detail: string; wallSeconds: number }
  | { status: "skipped"; detail: string; wallSeconds: 0 };

// ---------------------------------------------------------------------------
// Redis

export interface BenchRedis {
  url: string;
  /** Whether the harness started it (and so may restart or stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

/** A free loopback TCP port. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a private redis-server on a free loopback port, or uses
 * EDGEKIQ_BENCH_REDIS_URL. Not REDIS_URL: many Sidekiq users export it for
 * their apps, and the benchmark flushes its database between runs, so an
 * outside database must be named on purpose and must start empty.
 */
export async function startRedis(): Promise<BenchRedis> {
  const fromEnv = process.env.EDGEKIQ_BENCH_REDIS_URL;
  if (fromEnv) {
    const keys = await redisCommand(fromEnv, ["DBSIZE"]);
    if (keys !== 0) {
      throw new Error(
        `refusing EDGEKIQ_BENCH_REDIS_URL: its database holds ${keys} keys the benchmark did not write, ` +
          "and the benchmark flushes it; point it at an empty database or unset it",
      );
    }
    return { url: fromEnv, owned: false, stop: () => Promise.resolve() };
  }
  return await startPrivateRedis();
}

/** A redis-server of the harness's own on a free loopback port, stopped (at the latest) when the harness exits. */
export async function startPrivateRedis(): Promise<BenchRedis> {
  if (spawnSync("sh", ["-c", "command -v redis-server"]).status !== 0) {
    throw new Error("no redis-server on PATH and no EDGEKIQ_BENCH_REDIS_URL: cannot benchmark");
  }
  const port = await freePort();
  const proc = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const url = `redis://127.0.0.1:${port}`;
  const killOnExit = () => proc.kill("SIGKILL");
  process.once("exit", killOnExit);
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      if ((await redisCommand(url, ["PING"])) === "PONG") break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill("SIGKILL");
      throw new Error(`redis-server did not start on port ${port}`);
    }
    await sleep(50);
  }
  return {
    url,
    owned: true,
    stop: async () => {
      process.off("exit", killOnExit);
      if (proc.exitCode !== null) return;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGTERM");
      await Promise.race([exited, sleep(3000)]);
      if (proc.exitCode === null) proc.kill("SIGKILL");
    },
  };
}

/**
 * Sends one command on a fresh connection and returns its reply (strings,
 * integers, arrays; errors reject). For the parent's handful of admin calls.
 */
export function redisCommand(url: string, args: string[], timeoutMs = 30_000): Promise<unknown> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis ${args[0]} timed out`));
    }, timeoutMs);
    const done = (error: Error | null, value?: unknown) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    socket.on("error", (error) => done(error));
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      const parsed = parseResp(buffer, 0);
      if (!parsed) return;
      if (parsed.value instanceof Error) done(parsed.value);
      else done(null, parsed.value);
    });
    socket.connect(Number(port || 6379), hostname || "127.0.0.1", () => {
      let out = `*${args.length}\r\n`;
      for (const a of args) out += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
      socket.write(out);
    });
  });
}

function parseResp(buf: Buffer, at: number): { value: unknown; end: number } | null {
  const lineEnd = buf.indexOf("\r\n", at);
  if (lineEnd < 0) return null;
  const type = String.fromCharCode(buf[at]);
  const line = buf.toString("utf8", at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case "+":
      return { value: line, end: next };
    case "-":
      return { value: new Error(line), end: next };
    case ":":
      return { value: Number(line), end: next };
    case "$": {
      const len = Number(line);
      if (len < 0) return { value: null, end: next };
      if (buf.length < next + len + 2) return null;
      return { value: buf.toString("utf8", next, next + len), end: next + len + 2 };
    }
    case "*": {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: unknown[] = [];
      let pos = next;
      for (let i = 0; i < count; i++) {
        const item = parseResp(buf, pos);
        if (!item) return null;
        items.push(item.value);
        pos = item.end;
      }
      return { value: items, end: pos };
    }
    default:
      throw new Error(`unexpected RESP type ${JSON.stringify(type)}`);
  }
}

/** Empties the database and the script cache between runs. */
export async function flushRedis(url: string): Promise<void> {
  await redisCommand(url, ["FLUSHDB"]);
  await redisCommand(url, ["SCRIPT", "FLUSH"]);
}

/** INFO stats total_commands_processed. */
export async function totalCommands(url: string): Promise<number> {
  const info = String(await redisCommand(url, ["INFO", "stats"]));
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN);
}

// ---------------------------------------------------------------------------
// Systems and children
/** Running children, so an interrupt of the harness can stop them (add long-lived ones too). */
export const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) killTree(child);
});

/**
 * Runs one child with a hard timeout (SIGKILL on overrun) and parses the
 * JSON on its last stdout line. Stderr is kept for error reports only.
 */
export async function runChild(
  spec: { command: string; args: string[] },
  extraArgs: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<Outcome> {
  const started = performance.now();
  const proc = spawn(spec.command, [...spec.args, ...extraArgs], {
    cwd: repoRoot,
    env: { ...process.env, ...env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  live.add(proc);
  let stdout = "";
  let stderr = "";
  proc.stdout!.on("data", (d) => (stdout += d));
  proc.stderr!.on("data", (d) => {
    stderr += d;
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killTree(proc);
  }, timeoutMs);
  const code = await new Promise<number | string>((resolve) => {
    proc.on("error", (error) => resolve(String(error)));
    proc.on("exit", (c, signal) => resolve(c ?? signal ?? -1));
  });
  // Let the pipes drain; the last line may still be in flight.
  await Promise.race([new Promise((r) => proc.stdout!.once("close", r)), sleep(1000)]);
  clearTimeout(timer);
  live.delete(proc);
  killTree(proc); // grandchildren (npx) must not outlive the run
  const wallSeconds = (performance.now() - started) / 1000;
  if (timedOut) return { status: "timeout", detail: `killed after ${timeoutMs / 1000} s`, wallSeconds };
  const last = stdout.trim().split("\n").pop() ?? "";
  try {
    const result = JSON.parse(last) as ChildResult;
    if (result && typeof result === "object" && !("error" in result)) return { status: "ok", result, wallSeconds };
    return { status: "error", detail: String((result as { error?: unknown }).error), wallSeconds };
  } catch {
    return { status: "error", detail: `exit ${code}: ${summarizeError(stderr || stdout)}`, wallSeconds };
  }
}

/** A child that lives through a measurement: it says "ready", then reports, then prints its result. */
export interface LongChild {
  proc: ChildProcess;
  /** Settles when the child prints "ready" (or exits without). */
  ready: Promise<boolean>;
  /** The JSON on its last other line, or `{ error }`. */
  result: Promise<Record<string, unknown>>;
}

/**
 * Starts a child that takes part in a measurement with others: stdin stays
 * open for commands ("go", "stop"), stdout's "ready" line settles `ready`,
 * `onLine` sees every other line, and the last of them is the result. The
 * caller must end it (killTree) if it does not exit on its own.
 */
export function startLongChild(
  spec: { command: string; args: string[] },
  extraArgs: string[],
  onLine: (line: string) => void = () => {},
): LongChild {
  const proc = spawn(spec.command, [...spec.args, ...extraArgs], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "inherit"],
    detached: true,
  });
  live.add(proc);
  let ready!: (ok: boolean) => void;
  const readyPromise = new Promise<boolean>((resolve) => (ready = resolve));
  let last = "";
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    if (line === "ready") ready(true);
    else {
      onLine(line);
      last = line;
    }
  });
  const result = new Promise<Record<string, unknown>>((resolve) => {
    proc.on("exit", (code) => {
      live.delete(proc);
      ready(false);
      try {
        resolve(JSON.parse(last));
      } catch {
        resolve({ error: `exit ${code}: ${last.slice(0, 300)}` });
      }
    });
  });
  return { proc, ready: readyPromise, result };
}

/** The most telling line of a crashed child's output: its first error line, else its last line. */
function summarizeError(output: string): string {
  const lines = output.split("\n").map((l) => l.trim()).filter(Boolean);
  const error = lines.find((l) => /^(\w*Error|error)\b|Error: |\w*Exception: /.test(l));
  return (error ?? lines.pop() ?? "no output").slice(0, 300);
}

/** SIGKILLs a detached child's whole process group. */
export function killTree(proc: ChildProcess): void {
  if (proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, "SIGKILL"); // the child's own process group (detached)
  } catch { /* already gone */ }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A progress line on stderr. */
export function progress(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}
