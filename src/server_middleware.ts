/**
 * Server middleware, Sidekiq's shape: `(job, payload, queue, next)`, plus a
 * fifth argument of engine tools. Call `next()` to run the rest of the chain
 * and the job; return without calling it to skip the job (it is acknowledged
 * and counts as processed).
 *
 * @module
 */
import type { AnyJob } from "./job.ts";
import type { Keys } from "./keys.ts";
import type { Logger } from "./logger.ts";
import type { JobPayload } from "./payload.ts";
import type { Transport } from "./transport/transport.ts";

/**
 * One server middleware.
 *
 * @example
 * ```ts
 * const timing: ServerMiddleware = async (job, payload, queue, next) => {
 *   const t = performance.now();
 *   await next();
 *   metrics.observe(job.name, performance.now() - t);
 * };
 * ```
 */
export type ServerMiddleware = (
  job: AnyJob,
  payload: JobPayload,
  queue: string,
  next: () => Promise<void>,
  tools: ServerMiddlewareTools,
) => unknown;

/** What the engine offers middleware beyond the job itself. */
export interface ServerMiddlewareTools {
  /**
   * Deletes `key` if it still holds `value`, with the worker's next Redis
   * round trip (which also acknowledges jobs): releasing a lock this way
   * costs no command of its own, and a lock taken since by another job is
   * left alone.
   */
  releaseLater(key: string, value: string): void;
  /** The worker's transport, for a middleware that keeps its own state in Redis. */
  readonly transport: Transport;
  /** The worker's key names (its namespace). */
  readonly keys: Keys;
  /** The worker's logger. */
  readonly logger: Logger;
}

/**
 * Runs `chain` around `run`. With no middleware it calls `run` directly and
 * returns what it returns, adding no promise of its own; with middleware it
 * resolves to what `run` returned (a flow keeps a job's return value).
 *
 * @example
 * ```ts
 * await runServerMiddleware([timing], { job, payload, queue }, () => job.perform(ctx, ...args));
 * ```
 */
export function runServerMiddleware(
  chain: readonly ServerMiddleware[],
  target: { job: AnyJob; payload: JobPayload; queue: string; tools: ServerMiddlewareTools },
  run: () => unknown,
): unknown {
  if (chain.length === 0) return run();
  let result: unknown;
  const step = async (index: number): Promise<void> => {
    if (index === chain.length) {
      result = await run();
      return;
    }
    await chain[index](target.job, target.payload, target.queue, () => step(index + 1), target.tools);
  };
  return step(0).then(() => result);
}
