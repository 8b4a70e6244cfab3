/**
 * Client middleware: Sidekiq's client-side chain, run around every push (and
 * around the poller's moves of scheduled jobs), which may rewrite a payload
 * or stop it, and, in a push, attach a write guard that makes its check
 * part of the write itself (see `write_guard.ts`).
 *
 * @module
 */
import { PayloadError } from "./errors.ts";
import type { AnyJob, PushOptions } from "./job.ts";
import { assertJsonSafe } from "./json_safe.ts";
import type { Keys } from "./keys.ts";
import { type JobPayload } from "./payload.ts";
import { describeValue } from "./describe_value.ts";
import { isQueueName, QUEUE_NAME_RULE } from "./queue_name.ts";
import type { Transport } from "./transport/transport.ts";
import { addGuard, type WriteGuard } from "./write_guard.ts";
import { sanitize } from "./sanitize.ts";

/** The options of a push, as middleware sees them (`at`/`in` are resolved into `ctx.at`). */
export type PushContextOptions = Omit<PushOptions, "at" | "in"> & Readonly<Record<string, unknown>>;

/** What a client middleware sees besides the payload. */
export interface ClientMiddlewareContext {
  /** The queue the job is going to. */
  readonly queue: string;
  /** The job definition, when pushed by definition rather than by name. */
  readonly job: AnyJob | undefined;
  /** The transport, for middleware that needs Redis. */
  readonly transport: Transport;
  /** The client's key names (its namespace). */
  readonly keys: Keys;
  /**
   * The push's own options (not its job's), or undefined when an existing
   * job is moved rather than pushed (the poller's promotions, API retries,
   * periodic ticks).
   */
  readonly options: Readonly<PushContextOptions> | undefined;
  /** When the job is to run, epoch milliseconds; undefined for now. */
  readonly at: number | undefined;
  /**
   * In a push: writes this job through `guard` instead of the plain push, so
   * the guard's check and the write are one atomic step. Undefined when an
   * existing job is moved (its write is the mover's own script).
   */
  readonly guard: ((guard: WriteGuard) => void) | undefined;
}

/**
 * Sidekiq-style client middleware. Call `next()` to continue (optionally
 * with a replacement payload); return without calling it to stop the push,
 * which then returns `null` instead of a jid.
 *
 * An optional property tunes it: `appliesTo(job, options)` says whether it
 * has anything to do for a push (checked once per push; when no middleware
 * applies, a bulk push keeps its fast path). The options a middleware
 * implements belong to its feature (`ClientFeature.options`).
 *
 * @example
 * ```ts
 * const addTenant: ClientMiddleware = (payload, _ctx, next) => {
 *   payload.tenant = currentTenant();
 *   return next();
 * };
 * ```
 */
export type ClientMiddleware =
  & ((
    payload: JobPayload,
    ctx: ClientMiddlewareContext,
    next: (payload?: JobPayload) => Promise<void>,
  ) => unknown)
  & {
    /** Whether this middleware has anything to do for a push of `job` with `options`; default yes. */
    appliesTo?: (job: AnyJob | undefined, options: Readonly<PushContextOptions> | undefined) => boolean;
    /**
     * What this middleware does to every job of a push, done once for the
     * push: fields to add to each payload and a guard to write each through.
     * When every middleware that applies to a push has it, none runs per
     * job and the push keeps the fast path of a push without middleware
     * (shared fields serialised once). It must do just what the middleware
     * does per job; a throw refuses the push, as the middleware's would.
     */
    perPush?: (ctx: PerPushContext) => PerPushWork;
  };

/** What {@link ClientMiddleware.perPush} is told of a push. */
export type PerPushContext = Omit<ClientMiddlewareContext, "at" | "guard"> & {
  /** The class name every job of the push carries. */
  readonly className: string;
  /** The push's own options. */
  readonly options: Readonly<PushContextOptions>;
};

/** What a middleware does to every job of a push (see {@link ClientMiddleware.perPush}). */
export interface PerPushWork {
  /** Payload fields to set on each job (as the middleware would: not those the push sets itself, such as `queue`). */
  readonly fields?: Readonly<Record<string, unknown>>;
  /** A guard each job is written through. */
  readonly guard?: WriteGuard;
}

/**
 * The work of every middleware in `chain` done once for a push, or
 * undefined if one of them has to run per job.
 *
 * @example
 * ```ts
 * const shared = perPushWork(chain, { queue, job, transport, keys, options, className }, fields);
 * if (shared) writeEachWith(shared.fields, shared.guards);
 * ```
 */
export function perPushWork(
  chain: readonly ClientMiddleware[],
  ctx: PerPushContext,
  fields: Readonly<Record<string, unknown>>,
): { fields: Record<string, unknown>; guards: WriteGuard[] } | undefined {
  if (!chain.every((m) => m.perPush)) return undefined;
  const out = { fields: { ...fields }, guards: [] as WriteGuard[] };
  for (const middleware of chain) {
    const work = middleware.perPush!(ctx);
    for (const [field, value] of Object.entries(work.fields ?? {})) {
      if (CORE_FIELDS.has(field)) {
        throw new PayloadError(
          `Cannot push job ${sanitize(ctx.className, 100)} as a middleware's per-push fields must not set '${
            sanitize(field, 40)
          }': the push sets it`,
        );
      }
      assertJsonSafe(value, field);
      out.fields[field] = value;
    }
    if (work.guard) addGuard(out.guards, work.guard);
  }
  return out;
}

/** Fields the push itself sets. */
const CORE_FIELDS = new Set(["class", "queue", "retry", "args", "jid", "created_at", "enqueued_at"]);

/**
 * The middleware of `chain` that apply to a push of `job` with `options`.
 *
 * @example
 * ```ts
 * const active = applicableMiddleware(chain, HardJob, {}); // [] keeps a bulk push on its fast path
 * ```
 */
export function applicableMiddleware(
  chain: readonly ClientMiddleware[],
  job: AnyJob | undefined,
  options: Readonly<PushContextOptions> | undefined,
): readonly ClientMiddleware[] {
  let out: ClientMiddleware[] | undefined;
  for (let i = 0; i < chain.length; i++) {
    const applies = chain[i].appliesTo?.(job, options) ?? true;
    if (!applies) out ??= chain.slice(0, i);
    else out?.push(chain[i]);
  }
  return out ?? chain;
}

/**
 * Runs `chain` over a payload. Resolves to the payload to write (the last
 * one passed to `next`), or `null` if a middleware returned without calling
 * `next`. Every field of the final payload is checked for JSON safety (a
 * middleware may have added a Date, say), so what is written reads back the same.
 *
 * @example
 * ```ts
 * const final = await runClientMiddleware([addTenant], payload, ctx);
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

/**
 * Checks what middleware left of a payload: it may reroute a job or give it
 * a new jid, but to a queue a worker can listen to and a usable jid.
 *
 * @example
 * ```ts
 * checkRewritten(final, "HardJob"); // PayloadError if a middleware set queue to "a b"
 * ```
 */
export function checkRewritten(payload: JobPayload, label: string): void {
  if (!isQueueName(payload.queue)) {
    throw new PayloadError(
      `Cannot push job ${label} as client middleware set 'queue' to ${
        describeValue(payload.queue)
      }: it must be ${QUEUE_NAME_RULE}`,
    );
  }
  if (typeof payload.jid !== "string" || payload.jid === "") {
    throw new PayloadError(
      `Cannot push job ${label} as client middleware set 'jid' to ${
        describeValue(payload.jid)
      }: it must be a non-empty string`,
    );
  }
}
