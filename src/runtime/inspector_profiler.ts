/**
 * A CPU profiler over `node:inspector`'s Profiler domain, which Node, Deno
 * and Bun all implement: the profile is V8's (or JavaScriptCore's, on Bun)
 * `.cpuprofile` JSON, which Chrome DevTools and speedscope open. The module
 * is reached through `getBuiltinModule`, never a static import, so this
 * file loads on the edge too (where there is no profiler).
 *
 * @module
 */
import type { CpuProfiler } from "./runtime.ts";

/** The slice of `node:inspector`'s Session used here. */
interface InspectorSession {
  connect(): void;
  disconnect(): void;
  post(method: string, params: object, callback: (error: Error | null, result?: unknown) => void): void;
}

/**
 * The inspector profiler, if this runtime has `node:inspector`.
 *
 * @example
 * ```ts
 * const profiler = inspectorProfiler((globalThis as any).process?.getBuiltinModule);
 * await profiler?.start();
 * ```
 */
export function inspectorProfiler(getBuiltin: ((name: string) => unknown) | undefined): CpuProfiler | undefined {
  const inspector = getBuiltin?.("node:inspector") as { Session?: new () => InspectorSession } | undefined;
  if (!inspector?.Session) return undefined;
  const Session = inspector.Session;
  let session: InspectorSession | undefined;
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session!.post(method, {}, (error, result) => (error ? reject(error) : resolve(result)))
    );
  return {
    async start() {
      if (session) throw new Error("a CPU profile is already being recorded in this process");
      session = new Session();
      session.connect();
      await post("Profiler.enable");
      await post("Profiler.start");
    },
    async stop() {
      if (!session) throw new Error("no CPU profile is being recorded");
      try {
        const { profile } = (await post("Profiler.stop")) as { profile: unknown };
        return JSON.stringify(profile);
      } finally {
        session.disconnect();
        session = undefined;
      }
    },
  };
}
