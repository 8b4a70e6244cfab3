/**
 * Server middleware, Sidekiq's shape: `(job, payload, queue, next)`, plus a
 * fifth argument of engine tools. Call `next()` to run the rest of the chain
 * and the job; return without calling it to skip the job (it is acknowledged
 * and counts as processed).
 *
 * @module
 */
import type { AnyJob } from "./job.ts";
import type { JobPayload } from "./payload.ts";

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
}

/**
 * Runs `chain` around `run`. With no middleware it calls `run` directly and
 * returns what it returns, adding no promise of its own.
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
  const step = async (index: number): Promise<void> => {
    if (index === chain.length) {
      await run();
      return;
    }
    await chain[index](target.job, target.payload, target.queue, () => step(index + 1), target.tools);
  };
  return step(0);
}
