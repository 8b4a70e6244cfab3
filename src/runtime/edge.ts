/**
 * Edge runtimes (workerd, Vercel Edge, browsers): no process, no signals.
 *
 * @module
 */
import type { Runtime, RuntimeKey } from "./runtime.ts";

/** Builds the runtime for an edge isolate. */
export function edgeRuntime(key: RuntimeKey): Runtime {
  return {
    key,
    pid: 0,
    // deno-lint-ignore no-explicit-any
    env: (name) => (globalThis as any)[name] as string | undefined,
    hostname: () => "localhost",
    rss: () => undefined,
    onSignal: () => () => {},
    // workerd has AsyncLocalStorage only under nodejs_compat; jobs there use ctx.
    asyncLocalStorage: () => undefined,
    exit: () => {},
    writeErr: (line) => console.error(line),
  };
}
