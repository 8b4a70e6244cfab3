/**
 * Drives Ruby Sidekiq 6.4 (Debian's ruby-sidekiq) for the interop tests:
 * one-shot client/API commands, and a long-running worker process.
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL("../interop/ruby/", import.meta.url));

let available: boolean | undefined;
/** Whether `ruby` with the sidekiq gem is here. Under CI=true its absence is an error. */
export function rubyAvailable(): boolean {
  if (available !== undefined) return available;
  available = spawnSync("ruby", ["-e", 'require "sidekiq"'], { stdio: "ignore" }).status === 0;
  if (!available) {
    if (process.env.CI === "true") throw new Error("CI must have Ruby Sidekiq: apt-get install ruby-sidekiq");
    console.error("SKIP: no ruby with the sidekiq gem — Ruby interop tests skipped");
  }
  return available;
}

/** Runs one peer_client.rb command and parses its JSON output. */
export function rubyClient<T = unknown>(url: string, command: string, arg?: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      "ruby",
      [`${dir}peer_client.rb`, command, JSON.stringify(arg ?? null)],
      { env: { ...process.env, REDIS_URL: url }, timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`ruby ${command} failed: ${stderr || error.message}`));
        resolve(JSON.parse(stdout.trim().split("\n").pop()!));
      },
    );
  });
}

/** A Ruby Sidekiq worker process (peer_worker.rb). */
export interface RubyWorker {
  stop(): Promise<void>;
  output(): string;
}

/** Starts peer_worker.rb and waits until its launcher runs. */
export async function startRubyWorker(url: string, env: Record<string, string> = {}): Promise<RubyWorker> {
  const proc = spawn("ruby", [`${dir}peer_worker.rb`], {
    env: { ...process.env, REDIS_URL: url, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
  const deadline = Date.now() + 20_000;
  while (!out.includes("ready")) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`ruby worker did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    output: () => out,
    async stop() {
      if (proc.exitCode === null) process.kill(proc.pid!, "SIGTERM");
      const timer = setTimeout(() => proc.exitCode === null && process.kill(proc.pid!, "SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
