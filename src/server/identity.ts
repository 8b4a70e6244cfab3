/**
 * A process's identity, as Sidekiq 7 forms it: `hostname:pid:<12 hex>`.
 * The random part keeps two processes with one pid (containers) apart.
 *
 * @module
 */
import type { Logger } from "../logger.ts";
import { newJids } from "../payload.ts";
import type { Runtime } from "../runtime/runtime.ts";

/**
 * A fresh identity for this worker.
 *
 * @example
 * ```ts
 * processIdentity(currentRuntime()); // "web-1:4242:0f3a9c1b2d4e"
 * ```
 */
export function processIdentity(runtime: Runtime): string {
  return `${runtime.hostname()}:${runtime.pid}:${newJids(1)[0].slice(0, 12)}`;
}

/**
 * The default handler for errors a worker survives: log them with context.
 *
 * @example
 * ```ts
 * const onError = options.onError ?? logErrors(logger);
 * ```
 */
export function logErrors(logger: Logger): (error: unknown, context: Record<string, unknown>) => void {
  return (error, context) => logger.error(String((error as Error)?.stack ?? error), context);
}
