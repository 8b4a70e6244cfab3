/**
 * Spawns a fixture script on the same runtime the tests run on (Node via
 * tsx, Bun, or Deno), so signal and crash tests exercise each runtime's own
 * process APIs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const g = globalThis as { Bun?: unknown; Deno?: unknown };
export const runtimeName = g.Deno ? "deno" : g.Bun ? "bun" : "node";

export interface Child {
  proc: ChildProcess;
  /** Everything printed so far (stdout + stderr). */
  output(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  /**
   * Sends a signal by pid. (Deno's ChildProcess#kill reports the child as
   * killed by that signal even when it handled it and exited 0.)
   */
  signal(name: NodeJS.Signals): void;
  /** Waits for a line matching `re` in the output. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

export function spawnFixture(name: string, env: Record<string, string>): Child {
  const script = fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
  const [cmd, args] = runtimeName === "deno"
    ? [process.execPath, ["run", "-A", "--no-check", script]]
    : runtimeName === "bun"
    ? [process.execPath, [script]]
    : [process.execPath, ["--import", "tsx", script]];
  const proc = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | string>((resolve) =>
    proc.on("exit", (code, signal) => resolve(code ?? signal ?? -1))
  );
  return {
    proc,
    output: () => out,
    exited,
    signal: (name) => void process.kill(proc.pid!, name),
    async waitFor(re, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = out.match(re);
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${re} in child output:\n${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
