/**
 * The running job, from anywhere inside its `perform`: a helper three calls
 * deep can log with the job's jid without `ctx` being threaded through. It
 * uses AsyncLocalStorage where the runtime has it (Node, Bun, Deno); on the
 * edge `currentJob()` is undefined and `ctx` is the way.
 *
 * @module
 */
import type { JobContext } from "./job.ts";
import { currentRuntime } from "./runtime/detect.ts";
import type { AsyncStore } from "./runtime/runtime.ts";

let storage: AsyncStore | undefined | null = null;

function store(): AsyncStore | undefined {
  if (storage === null) storage = currentRuntime().asyncLocalStorage?.();
  return storage;
}

/**
 * The context of the job whose `perform` is running, or undefined outside
 * one (or on runtimes without AsyncLocalStorage).
 *
 * @example
 * ```ts
 * function audit(message: string) {
 *   const job = currentJob();
 *   job?.logger.info(message); // carries class, jid and queue
 * }
 * ```
 */
export function currentJob(): JobContext | undefined {
  return store()?.getStore() as JobContext | undefined;
}

/**
 * Runs `fn` with `ctx` as the current job.
 *
 * @example
 * ```ts
 * await runInJob(ctx, () => job.perform(ctx, ...args));
 * ```
 */
export function runInJob<R>(ctx: JobContext, fn: () => R): R {
  const s = store();
  return s ? s.run(ctx, fn) : fn();
}
