/**
 * Runtime detection by feature checks, never by imports, as hono's
 * `getRuntimeKey` does, so this module loads everywhere.
 *
 * @module
 */
import type { Runtime, RuntimeKey } from "./runtime.ts";
import { denoRuntime } from "./deno.ts";
import { nodeRuntime } from "./node.ts";
import { edgeRuntime } from "./edge.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;

/**
 * Which runtime this is.
 *
 * @example
 * ```ts
 * if (runtimeKey() === "workerd") console.log("on Cloudflare");
 * ```
 */
export function runtimeKey(): RuntimeKey {
  if (typeof g.Deno?.version?.deno === "string") return "deno";
  if (typeof g.Bun?.version === "string") return "bun";
  if (typeof g.navigator?.userAgent === "string" && g.navigator.userAgent === "Cloudflare-Workers") return "workerd";
  if (typeof g.process?.versions?.node === "string" && typeof g.process?.on === "function") return "node";
  return "edge";
}

let current: Runtime | undefined;

/**
 * The {@link Runtime} for the host this code runs on, built once.
 *
 * @example
 * ```ts
 * const rt = currentRuntime();
 * console.log(rt.key, rt.pid, rt.hostname());
 * ```
 */
export function currentRuntime(): Runtime {
  if (current) return current;
  const key = runtimeKey();
  current = key === "deno" ? denoRuntime() : key === "node" || key === "bun" ? nodeRuntime(key) : edgeRuntime(key);
  return current;
}
