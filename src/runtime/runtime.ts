/**
 * What the core needs from the host runtime, as a handful of small functions.
 * The core never names `process`, `Deno` or `Bun`; it is handed a
 * {@link Runtime} (by default {@link currentRuntime}) the way hono is handed
 * an adapter.
 *
 * @module
 */

/** Which runtime is running, detected by feature checks. */
export type RuntimeKey = "node" | "bun" | "deno" | "workerd" | "edge";

/** The slice of AsyncLocalStorage edgekiq uses. */
export interface AsyncStore {
  run<R>(store: unknown, fn: () => R): R;
  getStore(): unknown;
}

/**
 * A CPU profiler of this process, one profile at a time (the runtime's own:
 * `node:inspector` on Node, Deno and Bun).
 */
export interface CpuProfiler {
  /** Starts recording; rejects if a profile is already being recorded. */
  start(): Promise<void>;
  /** Stops recording; resolves to the profile as `.cpuprofile` JSON. */
  stop(): Promise<string>;
}

/** The signals edgekiq listens for. */
export type SignalName = "SIGINT" | "SIGTERM" | "SIGTSTP" | "SIGTTIN" | "SIGUSR1" | "SIGUSR2";

/**
 * The host services the core uses.
 *
 * @example
 * ```ts
 * const rt = currentRuntime();
 * const off = rt.onSignal("SIGTERM", () => worker.stop());
 * ```
 */
export interface Runtime {
  /** Which runtime this is. */
  readonly key: RuntimeKey;
  /** The process id, or 0 where there is none (edge). */
  readonly pid: number;
  /** Reads an environment variable; undefined when unset or unavailable. */
  env(name: string): string | undefined;
  /** The machine's host name, or `"localhost"` where it cannot be known. */
  hostname(): string;
  /** Resident set size in bytes, where the runtime reports it. */
  rss(): number | undefined;
  /** Subscribes to a signal; returns the unsubscribe function. A no-op on edge. */
  onSignal(name: SignalName, handler: () => void): () => void;
  /** Ends the process (a no-op on edge). */
  exit(code: number): void;
  /**
   * A fresh AsyncLocalStorage where the runtime has one (Node, Bun, Deno),
   * so code deep inside `perform` can find its job; undefined elsewhere.
   */
  asyncLocalStorage?(): AsyncStore | undefined;
  /** Writes one line to standard error (console.error on edge). */
  writeErr(line: string): void;
  /** The runtime's CPU profiler, made on first use; undefined where there is none (edge). */
  profiler?(): CpuProfiler | undefined;
}
