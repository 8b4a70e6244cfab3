/**
 * Deno: `Deno.addSignalListener`, `Deno.hostname`, `Deno.memoryUsage`.
 *
 * @module
 */
import type { CpuProfiler, Runtime, SignalName } from "./runtime.ts";
import { inspectorProfiler } from "./inspector_profiler.ts";

/** Builds the runtime for Deno. */
export function denoRuntime(): Runtime {
  // deno-lint-ignore no-explicit-any
  const D = (globalThis as any).Deno;
  const encoder = new TextEncoder();
  const safe = <T>(fn: () => T, fallback: T): T => {
    try {
      return fn();
    } catch {
      return fallback; // no --allow-env / --allow-sys: degrade, do not crash
    }
  };
  let profiler: CpuProfiler | undefined;
  return {
    key: "deno",
    pid: D.pid,
    env: (name) => safe(() => D.env.get(name), undefined),
    hostname: () => safe(() => D.hostname(), "localhost"),
    rss: () => safe(() => D.memoryUsage().rss, undefined),
    onSignal(name: SignalName, handler: () => void) {
      try {
        D.addSignalListener(name, handler);
      } catch {
        return () => {}; // unsupported signal on this OS (e.g. Windows)
      }
      return () => D.removeSignalListener(name, handler);
    },
    // Deno 2 exposes Node's process global with getBuiltinModule.
    asyncLocalStorage: () => {
      // deno-lint-ignore no-explicit-any
      const hooks = safe(() => (globalThis as any).process?.getBuiltinModule?.("node:async_hooks"), undefined);
      return hooks?.AsyncLocalStorage ? new hooks.AsyncLocalStorage() : undefined;
    },
    exit: (code) => D.exit(code),
    // deno-lint-ignore no-explicit-any
    profiler: () => profiler ??= inspectorProfiler((globalThis as any).process?.getBuiltinModule),
    writeErr: (line) => D.stderr.writeSync(encoder.encode(line + "\n")),
  };
}
