/**
 * Node and Bun: both expose `process`; Bun implements Node's API.
 *
 * @module
 */
import type { CpuProfiler, Runtime, SignalName } from "./runtime.ts";
import { inspectorProfiler } from "./inspector_profiler.ts";

/** Builds the runtime for Node or Bun. */
export function nodeRuntime(key: "node" | "bun"): Runtime {
  // deno-lint-ignore no-explicit-any
  const proc = (globalThis as any).process;
  // getBuiltinModule (Node >= 20.16, Bun) avoids a static `node:os` import,
  // which would break bundling this file for the edge.
  const os = proc.getBuiltinModule?.("node:os");
  let profiler: CpuProfiler | undefined;
  return {
    key,
    pid: proc.pid,
    env: (name) => proc.env[name],
    hostname: () => os?.hostname?.() ?? proc.env.HOSTNAME ?? "localhost",
    rss: () => proc.memoryUsage?.rss?.() ?? proc.memoryUsage?.().rss,
    onSignal(name: SignalName, handler: () => void) {
      proc.on(name, handler);
      return () => proc.off(name, handler);
    },
    asyncLocalStorage: () => {
      const hooks = proc.getBuiltinModule?.("node:async_hooks");
      return hooks?.AsyncLocalStorage ? new hooks.AsyncLocalStorage() : undefined;
    },
    exit: (code) => proc.exit(code),
    writeErr: (line) => proc.stderr.write(line + "\n"),
    profiler: () => profiler ??= inspectorProfiler(proc.getBuiltinModule),
  };
}
