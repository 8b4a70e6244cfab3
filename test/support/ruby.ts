/**
 * Drives Ruby Sidekiq (Debian's ruby-sidekiq 6.4) for the interop tests:
 * one-shot scripts (`runRuby`, `rubyJson`) and long-running ones such as an
 * embedded `Sidekiq::Launcher` (`spawnRuby`). Scripts live in
 * `test/interop/ruby/` and read `REDIS_URL`, which is passed to the Ruby
 * child only.
 *
 * Works under Node, Bun and Deno (run Deno with -A).
 *
 * @module
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { isAbsolute, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The directory of the interop Ruby scripts. */
export const RUBY_DIR: string = fileURLToPath(new URL("../interop/ruby/", import.meta.url));

let available: { ok: boolean; version?: string; reason?: string } | undefined;

/**
 * Whether `ruby` with the sidekiq gem is installed. Prints one loud SKIP line
 * when not; under `CI=true` (CI installs ruby-sidekiq) it throws instead.
 *
 * @example
 * ```ts
 * describe("interop", { skip: rubySkip() }, () => { ... });
 * ```
 */
export function rubyAvailable(): boolean {
  if (available === undefined) {
    const probe = spawnSync("ruby", ["-e", 'require "sidekiq"; print Sidekiq::VERSION'], {
      encoding: "utf8",
      timeout: 30_000,
    });
    available = probe.status === 0 ? { ok: true, version: String(probe.stdout).trim() } : {
      ok: false,
      reason: probe.error
        ? `no ruby on PATH (${(probe.error as Error).message})`
        : `ruby cannot load the sidekiq gem: ${String(probe.stderr).trim().split("\n")[0]}`,
    };
    if (!available.ok) {
      if (process.env.CI === "true") {
        throw new Error(`CI=true but Ruby Sidekiq is missing (${available.reason}): apt-get install ruby-sidekiq`);
      }
      console.error(`SKIP: ${available.reason} — Ruby interop tests skipped`);
    }
  }
  return available.ok;
}

/** `false` when Ruby Sidekiq is here, else the skip reason (for `describe(..., { skip })`). */
export function rubySkip(): false | string {
  return rubyAvailable() ? false : `Ruby Sidekiq is not installed (${available?.reason})`;
}

/** The installed Sidekiq gem's version, e.g. `"6.4.1"`, or undefined. */
export function rubySidekiqVersion(): string | undefined {
  return rubyAvailable() ? available?.version : undefined;
}

/** Options for {@link runRuby} and {@link spawnRuby}. */
export interface RubyOptions {
  /** Extra environment for the Ruby child (REDIS_URL goes here). */
  env?: Record<string, string>;
  /** Command-line arguments after the script. */
  args?: readonly string[];
  /** Kill the child after this long; default 30 s for `runRuby`, none for `spawnRuby`. */
  timeoutMs?: number;
}

/** What a finished Ruby script printed, and how it exited. */
export interface RubyResult {
  stdout: string;
  stderr: string;
  /** The exit code, or the signal name if it was killed. */
  code: number | string;
}

function scriptPath(script: string): string {
  return isAbsolute(script) ? script : join(RUBY_DIR, script.endsWith(".rb") ? script : `${script}.rb`);
}

function start(script: string, options: RubyOptions): ChildProcess {
  return spawn("ruby", [scriptPath(script), ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * Runs a script from `test/interop/ruby/` (name with or without `.rb`, or
 * an absolute path) to completion.
 *
 * @example
 * ```ts
 * const { stdout, code } = await runRuby("stats", { env: { REDIS_URL: url } });
 * ```
 */
export function runRuby(script: string, options: RubyOptions = {}): Promise<RubyResult> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const child = start(script, options);
    let stdout = "", stderr = "";
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => (stdout += d));
    child.stderr!.on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      stderr += `\n[runRuby: killed after ${timeoutMs} ms]`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code: code ?? signal ?? -1 });
    });
  });
}

/**
 * Runs a script that prints one JSON document as its last stdout line and
 * returns it parsed; throws with the script's stderr if it failed.
 *
 * @example
 * ```ts
 * const retries = await rubyJson<RubyJob[]>("retry_set", { env: { REDIS_URL: url } });
 * ```
 */
export async function rubyJson<T = unknown>(script: string, options: RubyOptions = {}): Promise<T> {
  const result = await runRuby(script, options);
  const last = result.stdout.trim().split("\n").pop() ?? "";
  if (result.code !== 0) {
    throw new Error(`ruby ${script} ${(options.args ?? []).join(" ")} exited ${result.code}:\n${result.stderr}`);
  }
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`ruby ${script} printed no JSON:\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
}

/** A long-running Ruby process. */
export interface RubyProcess {
  /** Its pid. */
  readonly pid: number;
  /** Everything printed on stdout so far. */
  stdout(): string;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (or signal name) when it exits. */
  readonly exited: Promise<number | string>;
  /** Waits for a stdout or stderr line matching `pattern`; rejects if it exits first or on timeout. */
  waitForLine(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  /** Sends TERM and waits for the exit; SIGKILL after `timeoutMs` (default 15 s). Resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | string>;
}

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }
});

/**
 * Starts a long-running script (an embedded Sidekiq launcher, say) with its
 * output captured.
 *
 * @example
 * ```ts
 * const ruby = spawnRuby("launcher", { env: { REDIS_URL: url, QUEUES: "default" } });
 * await ruby.waitForLine("ready");
 * ...
 * await ruby.stop();
 * ```
 */
export function spawnRuby(script: string, options: RubyOptions = {}): RubyProcess {
  const child = start(script, options);
  running.add(child);
  let out = "", err = "";
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stdout!.on("data", (d: string) => (out += d));
  child.stderr!.on("data", (d: string) => (err += d));
  let code: number | string | undefined;
  let spawnError: Error | undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.on("error", (error) => {
      spawnError = error;
      code = -1;
      resolve(-1);
    });
    child.on("close", (c, signal) => {
      code = c ?? signal ?? -1;
      running.delete(child);
      resolve(code);
    });
  });
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => {
    err += `\n[spawnRuby: killed after ${options.timeoutMs} ms]`;
    child.kill("SIGKILL");
  }, options.timeoutMs);
  void exited.then(() => clearTimeout(timer));
  const describeExit = () => `${script} exited ${code}${spawnError ? ` (${spawnError.message})` : ""}`;
  return {
    get pid() {
      return child.pid ?? -1;
    },
    stdout: () => out,
    stderr: () => err,
    exited,
    async waitForLine(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      const test = (line: string) => typeof pattern === "string" ? line.includes(pattern) : pattern.test(line);
      for (;;) {
        const line = `${out}\n${err}`.split("\n").find(test);
        if (line !== undefined) return line;
        if (code !== undefined) {
          throw new Error(`${describeExit()} before printing ${pattern}:\nstdout: ${out}\nstderr: ${err}`);
        }
        if (Date.now() > deadline) {
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${pattern} from ${script}:\n${out}\n${err}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop(timeoutMs = 15_000) {
      if (code === undefined) {
        try {
          // By pid: Deno's ChildProcess#kill reports a child that handled TERM and exited 0 as killed.
          process.kill(child.pid!, "SIGTERM");
        } catch { /* already gone */ }
        let kill: ReturnType<typeof setTimeout> | undefined;
        const killed = new Promise<void>((resolve) => {
          kill = setTimeout(() => {
            err += `\n[spawnRuby: SIGKILL after ${timeoutMs} ms without exiting on TERM]`;
            if (code === undefined) process.kill(child.pid!, "SIGKILL");
            resolve();
          }, timeoutMs);
        });
        await Promise.race([exited, killed]);
        clearTimeout(kill);
      }
      return await exited;
    },
  };
}
