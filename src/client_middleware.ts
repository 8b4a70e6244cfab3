/**
 * Client middleware: Sidekiq's client-side chain, run around every push (and
 * around the poller's moves of scheduled jobs), which may rewrite a payload
 * or stop it.
 *
 * @module
 */
import type { AnyJob } from "./job.ts";
import { assertJsonSafe } from "./json_safe.ts";
import type { JobPayload } from "./payload.ts";
import type { Transport } from "./transport/transport.ts";

/** What a client middleware sees besides the payload. */
export interface ClientMiddlewareContext {
  /** The queue the job is going to. */
  readonly queue: string;
  /** The job definition, when pushed by definition rather than by name. */
  readonly job: AnyJob | undefined;
  /** The transport, for middleware that needs Redis (unique jobs, say). */
  readonly transport: Transport;
}

/**
 * Sidekiq-style client middleware. Call `next()` to continue (optionally
 * with a replacement payload); return without calling it to stop the push,
 * which then returns `null` instead of a jid.
 *
 * @example
 * ```ts
 * const addTenant: ClientMiddleware = (payload, _ctx, next) => {
 *   payload.tenant = currentTenant();
 *   return next();
 * };
 * ```
 */
export type ClientMiddleware = (
  payload: JobPayload,
  ctx: ClientMiddlewareContext,
  next: (payload?: JobPayload) => Promise<void>,
) => unknown;

/**
 * Runs `chain` over a payload. Resolves to the payload to write (the last
 * one passed to `next`), or `null` if a middleware returned without calling
 * `next`. Every field of the final payload is checked for JSON safety (a
 * middleware may have added a Date, say), so what is written reads back the same.
 *
 * @example
 * ```ts
 * const final = await runClientMiddleware([addTenant], payload, { queue: "default", job: undefined, transport });
 * ```
 */
export async function runClientMiddleware(
  chain: readonly ClientMiddleware[],
  payload: JobPayload,
  ctx: ClientMiddlewareContext,
): Promise<JobPayload | null> {
  let final: JobPayload | null = null;
  const step = async (index: number, current: JobPayload): Promise<void> => {
    if (index === chain.length) {
      final = current;
      return;
    }
    await chain[index](current, ctx, (next) => step(index + 1, next ?? current));
  };
  await step(0, payload);
  if (final) {
    // Middleware may add or rewrite any field: check them all, as a push checks its own.
    const out = final as JobPayload;
    // An undefined field is left out of the JSON, as a deletion would be.
    for (const field of Object.keys(out)) if (out[field] !== undefined) assertJsonSafe(out[field], field);
  }
  return final;
}
