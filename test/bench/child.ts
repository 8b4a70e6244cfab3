/**
 * Child-side helpers for the edgekiq benchmark scripts, which run on Node,
 * Bun and Deno: argument parsing, the transport under test, INFO-based
 * server command counts, RSS, and the final JSON line.
 */
import process from "node:process";
import type { Transport } from "../../src/transport/transport.ts";

/** `--name value` pairs from argv. */
export function args(): Record<string, string> {
  const out: Record<string, string> = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) continue;
    const next = argv[i + 1];
    if (next === undefined || next.startsWith("--")) out[a.slice(2)] = "true";
    else out[a.slice(2)] = argv[++i];
  }
  return out;
}

/** The runtime this child is on. */
export function runtimeName(): "node" | "bun" | "deno" {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  return g.Deno ? "deno" : g.Bun ? "bun" : "node";
}

/** Opens the transport under test: `ioredis` anywhere, `bun` (RedisClient) under Bun. */
export async function openTransport(kind: string, url: string): Promise<Transport> {
  if (kind === "ioredis") {
    const { ioredisTransport } = await import("../../src/transport/adapters/ioredis/ioredis_transport.ts");
    return ioredisTransport({ url });
  }
  if (kind === "bun") {
    if (runtimeName() !== "bun") throw new Error("the bun transport needs Bun");
    const { bunTransport } = await import("../../src/transport/adapters/bun/bun_transport.ts");
    return bunTransport({ url });
  }
  throw new Error(`unknown transport ${kind}`);
}

/** INFO stats total_commands_processed, read through an admin transport. */
export async function serverCommands(admin: Transport): Promise<number> {
  const info = String(await admin.call("INFO", "stats"));
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN);
}

/** Redis's main-thread CPU (µs) and commands processed so far, from one INFO. */
export async function redisCounters(admin: Transport): Promise<{ cpuUs: number; commands: number }> {
  const info = String(await admin.call("INFO", "cpu", "stats"));
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
  return {
    cpuUs: Math.round((field("used_cpu_sys_main_thread") + field("used_cpu_user_main_thread")) * 1e6),
    commands: field("total_commands_processed"),
  };
}

/**
 * What Redis spent (main-thread CPU µs, commands) while `fn` ran, less the
 * INFO that opened the window.
 */
export async function redisCostOf<T>(
  admin: Transport,
  fn: () => Promise<T>,
): Promise<{ value: T; cpuUs: number; commands: number }> {
  const before = await redisCounters(admin);
  const value = await fn();
  const after = await redisCounters(admin);
  return { value, cpuUs: after.cpuUs - before.cpuUs, commands: after.commands - before.commands - 1 };
}

/**
 * Measures server commands between `start()` and `stop()`: the delta of
 * total_commands_processed, minus the INFO that started the window.
 */
export async function commandWindow(admin: Transport): Promise<{ stop(): Promise<number> }> {
  const before = await serverCommands(admin);
  return { stop: async () => (await serverCommands(admin)) - before - 1 };
}

/**
 * The queue list of the scaling scenarios' worker: `n - 1` empty queues
 * listed before the one that holds the load ("default"), so a strict fetch
 * walks every empty one first; weighted mode gives queue i weight 1 + i % 3.
 */
export function benchQueues(n: number, mode: "strict" | "weighted"): string[] {
  const names = [...Array.from({ length: n - 1 }, (_, i) => `empty-${i + 1}`), "default"];
  return mode === "strict" ? names : names.map((name, i) => `${name},${1 + (i % 3)}`);
}

/** A job argument of `bytes` ASCII characters (nothing JSON must escape). */
export function filler(bytes: number): string {
  const unit = "edgekiq-scaling-payload-0123456789abcdefghijklmnopqrstuvwxyz-";
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

/** Resident set size in MB. */
export function rssMB(): number {
  return round(process.memoryUsage().rss / 1048576, 1);
}

/** The highest RSS this process reached, in MB (null where the runtime cannot say). */
export function peakRssMB(): number | null {
  try {
    return round(process.resourceUsage().maxRSS / 1024, 1);
  } catch {
    return null;
  }
}

/** This process's CPU time (user + system) from now until `stop()`, in µs. */
export function cpuWindow(): { stop(): number } {
  const before = process.cpuUsage();
  return {
    stop: () => {
      const used = process.cpuUsage(before);
      return used.user + used.system;
    },
  };
}

/** V8 heap in use, in MB. */
export function heapMB(): number {
  return round(process.memoryUsage().heapUsed / 1048576, 1);
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Prints the result as the last stdout line and exits (open handles must not keep a child alive). */
export function emit(result: Record<string, unknown>): never {
  process.stdout.write(JSON.stringify(result) + "\n");
  process.exit(0);
}

/**
 * Runs a child's main function: a hard internal deadline, and any failure
 * reported as `{"error": ...}` on the last line.
 */
export function main(fn: (a: Record<string, string>) => Promise<Record<string, unknown>>): void {
  const a = args();
  const limit = Number(a.deadline ?? 600) * 1000;
  const timer = setTimeout(() => {
    process.stdout.write(JSON.stringify({ error: `internal deadline of ${limit / 1000} s passed` }) + "\n");
    process.exit(2);
  }, limit);
  fn(a).then(
    (result) => {
      clearTimeout(timer);
      emit(result);
    },
    (error) => {
      process.stderr.write(String((error as Error)?.stack ?? error) + "\n");
      process.stdout.write(JSON.stringify({ error: String((error as Error)?.message ?? error) }) + "\n");
      process.exit(1);
    },
  );
}

/** Waits until `check()` is true, polling every `everyMs`; throws after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs: number, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The p-th percentile (0..100) of sorted numbers. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}
