/**
 * A supervised fleet of chaos workers: N slots, each running one worker
 * process (test/chaos/worker.ts) on the chosen runtime, restarted when it
 * dies as systemd's `Restart=always` would. Every incarnation writes its own
 * ledger and log file in the scenario's directory.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildDir, bundleForNode, runtimeCommand } from "../bench/commands.ts";
import { sleep } from "../bench/support.ts";

/** A runtime the workers run on. */
export type Runtime = "node" | "bun" | "deno";

/** Worker settings (seconds where a time). */
export interface WorkerSettings {
  concurrency: number;
  prefetch: number;
  heartbeat: number;
  ttl: number;
  poll: number;
  timeout: number;
  block: number;
}

/** Options for {@link Fleet}. */
export interface FleetOptions {
  size: number;
  runtime: Runtime;
  url: string;
  dir: string;
  worker: WorkerSettings;
  /** Pause before a dead worker is started again, ms. */
  restartDelayMs?: number;
  /** More environment for every worker (CHAOS_TRANSPORT, CHAOS_MODE, ...: see worker.ts). */
  env?: Record<string, string>;
}

interface Slot {
  index: number;
  proc?: ChildProcess;
  incarnation: number;
  log?: string;
  /** Settles with the exit code (or signal) of the current incarnation. */
  exited?: Promise<number | string>;
}

const workerFile = fileURLToPath(new URL("./worker.ts", import.meta.url));

/** Fleets not stopped yet: an interrupted suite SIGKILLs their workers on its way out. */
const running = new Set<Fleet>();
process.once("exit", () => {
  for (const fleet of running) for (let i = 0; i < fleet.size; i++) fleet.signal(i, "SIGKILL");
});
let bundled: string | undefined;

/** Bundles the worker for Node once (see bundleForNode); Bun and Deno run the file itself. */
export async function prepareWorker(runtime: Runtime): Promise<void> {
  if (runtime !== "node" || bundled) return;
  await bundleForNode([workerFile], `${buildDir}chaos/`);
  bundled = `${buildDir}chaos/worker.mjs`;
}

/** The supervised workers of one scenario. */
export class Fleet {
  #o: FleetOptions;
  #slots: Slot[] = [];
  #supervise = true;
  /** Worker processes that ended other than by the suite's own kill or stop, as `slot: how`. */
  readonly deaths: string[] = [];
  /** Processes started, restarts included. */
  started = 0;

  constructor(options: FleetOptions) {
    this.#o = options;
    for (let i = 0; i < options.size; i++) this.#slots.push({ index: i, incarnation: 0 });
    running.add(this);
  }

  get size(): number {
    return this.#o.size;
  }

  /** Starts every slot and waits until each worker says it is running. */
  async start(timeoutMs = 30_000): Promise<void> {
    for (const slot of this.#slots) this.#spawn(slot);
    await Promise.all(this.#slots.map((s) => this.waitReady(s.index, timeoutMs)));
  }

  /** Waits until slot `i`'s current incarnation printed `ready`. */
  async waitReady(i: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const slot = this.#slots[i];
      if (slot.log && existsSync(slot.log) && /^ready /m.test(readFileSync(slot.log, "utf8"))) return;
      if (Date.now() > deadline) {
        throw new Error(`worker ${i} not ready within ${timeoutMs / 1000} s; log ${slot.log}:\n${this.tail(i)}`);
      }
      await sleep(50);
    }
  }

  /** The log and ledger files of slot `i`'s current incarnation. */
  current(i: number): { log: string; ledger: string } {
    const slot = this.#slots[i];
    const name = `w${slot.index}.${slot.incarnation}`;
    return { log: `${this.#o.dir}/${name}.log`, ledger: `${this.#o.dir}/${name}.ledger` };
  }

  /** The pid of slot `i`'s current process. */
  pid(i: number): number | undefined {
    return this.#slots[i].proc?.pid;
  }

  /** Sends a signal to slot `i`'s current process. */
  signal(i: number, signal: NodeJS.Signals): void {
    const pid = this.pid(i);
    if (pid !== undefined) {
      try {
        process.kill(pid, signal);
      } catch { /* already gone */ }
    }
  }

  /**
   * Sends `signal` to slot `i` and waits for that process to exit; resolves
   * with the seconds it took, or null if it was still running at `timeoutMs`.
   */
  async signalAndWait(i: number, signal: NodeJS.Signals, timeoutMs: number): Promise<number | null> {
    const slot = this.#slots[i];
    const exited = slot.exited;
    if (!exited) return 0;
    const t0 = performance.now();
    this.signal(i, signal);
    const done = await Promise.race([exited.then(() => true), sleep(timeoutMs).then(() => false)]);
    return done ? (performance.now() - t0) / 1000 : null;
  }

  /** Stops supervising, sends TERM to every worker, and SIGKILLs what has not exited after `timeoutMs`. */
  async stop(timeoutMs: number): Promise<string[]> {
    this.#supervise = false;
    running.delete(this);
    const stragglers: string[] = [];
    await Promise.all(this.#slots.map(async (slot) => {
      if (!slot.proc || slot.proc.exitCode !== null || slot.proc.signalCode !== null) return;
      slot.proc.kill("SIGCONT");
      const took = await this.signalAndWait(slot.index, "SIGTERM", timeoutMs);
      if (took === null) {
        stragglers.push(`worker ${slot.index} ignored TERM for ${timeoutMs / 1000} s; killed`);
        this.signal(slot.index, "SIGKILL");
        await slot.exited;
      } else {
        const code = await slot.exited;
        if (code !== 0) stragglers.push(`worker ${slot.index} exited ${code} after TERM`);
      }
    }));
    return stragglers;
  }

  /** Every ledger file written so far. */
  ledgers(): string[] {
    return readdirSync(this.#o.dir).filter((f) => f.endsWith(".ledger")).map((f) => `${this.#o.dir}/${f}`);
  }

  /** The last lines of slot `i`'s current log. */
  tail(i: number, lines = 20): string {
    const log = this.#slots[i].log;
    if (!log || !existsSync(log)) return "(no log)";
    return readFileSync(log, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  }

  #spawn(slot: Slot): void {
    const o = this.#o;
    slot.incarnation++;
    this.started++;
    const name = `w${slot.index}.${slot.incarnation}`;
    slot.log = `${o.dir}/${name}.log`;
    const out = openSync(slot.log, "a");
    const { command, args } = runtimeCommand(o.runtime, workerFile, bundled);
    const env: Record<string, string | undefined> = {
      ...process.env,
      NO_COLOR: "1",
      CHAOS_URL: o.url,
      CHAOS_LEDGER: `${o.dir}/${name}.ledger`,
      CHAOS_CONCURRENCY: String(o.worker.concurrency),
      CHAOS_PREFETCH: String(o.worker.prefetch),
      CHAOS_HB: String(o.worker.heartbeat),
      CHAOS_TTL: String(o.worker.ttl),
      CHAOS_POLL: String(o.worker.poll),
      CHAOS_TIMEOUT: String(o.worker.timeout),
      CHAOS_BLOCK: String(o.worker.block),
      ...o.env,
    };
    delete env.REDIS_URL;
    const proc = spawn(command, args, { env, stdio: ["ignore", out, out] });
    closeSync(out);
    slot.proc = proc;
    slot.exited = new Promise((resolve) => {
      proc.on("error", (error) => resolve(String(error)));
      proc.on("exit", (code, signal) => resolve(code ?? signal ?? -1));
    });
    void slot.exited.then(async (how) => {
      if (slot.proc !== proc || !this.#supervise) return;
      if (how !== "SIGKILL" && how !== 0) this.deaths.push(`${name}: ${how}`);
      await sleep(o.restartDelayMs ?? 200);
      if (this.#supervise && slot.proc === proc) this.#spawn(slot);
    });
  }
}
