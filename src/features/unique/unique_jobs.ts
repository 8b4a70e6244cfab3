/**
 * Unique jobs as a feature: the client half takes the lock in the same
 * atomic call as the push (through a write guard), the server half lets it
 * go at `until`, a death handler lets it go when a job dies, and entry ops
 * let it go when the admin API deletes or kills the job. The engine knows
 * nothing of uniqueness.
 *
 * @module
 */
import type { ClientMiddleware, PushContextOptions } from "../../client_middleware.ts";
import type { DeathHandler } from "../../dead_set_rules.ts";
import { Discard } from "../../control.ts";
import { PayloadError } from "../../errors.ts";
import type { AnyJob } from "../../job.ts";
import { type JobPayload } from "../../payload.ts";
import { describeValue } from "../../describe_value.ts";
import { sanitize } from "../../sanitize.ts";
import type { ServerMiddleware, ServerMiddlewareTools } from "../../server_middleware.ts";
import { uniqueDigest } from "./unique_digest.ts";
import { readMark, UNIQUE_FIELD, type UniqueMark } from "./mark.ts";
import {
  resolveUnique,
  UNIQUE_OPTION_RULES,
  type UniqueJobOptions,
  uniqueKeyPart,
  type UniquePushOptions,
} from "./options.ts";
import { UNIQUE_GUARD } from "./push_guard.ts";
import { UNIQUE_ENTRIES } from "./lock_release.ts";
import type { Feature } from "../feature.ts";

/**
 * The unique-jobs feature. Pass it to the client and the worker (and the
 * dashboard, so its deletes release locks): `features: [unique]`. Its
 * `client`, `server` and `onDeath` parts are also usable on their own as
 * middleware and a death handler.
 */
export interface UniqueJobs extends Feature {
  readonly name: "unique";
  readonly client: ClientMiddleware;
  readonly server: ServerMiddleware;
  readonly onDeath: DeathHandler;
}

/**
 * Unique jobs: at most one copy of a job queued or running per class,
 * queue and args, for jobs (or pushes) with a `unique` option.
 *
 * @example
 * ```ts
 * const unique = uniqueJobs();
 * const SyncUser = defineJob({ name: "SyncUser", unique: { for: 600, until: "success" }, perform(_ctx, id: number) {} });
 * const client = createClient({ transport, features: [unique] });
 * await client.push(SyncUser, [42]); // a jid
 * await client.push(SyncUser, [42]); // null: a duplicate (client.pushDetailed says so, and which copy holds the lock)
 * createWorker({ transport, jobs: [SyncUser], features: [unique] });
 * ```
 */
export function uniqueJobs(): UniqueJobs {
  // The tools of the job a payload belongs to, for the death handler: the
  // engine hands death handlers the payload object its middleware saw.
  const owners = new WeakMap<JobPayload, { tools: ServerMiddlewareTools; mark: UniqueMark }>();

  const client: ClientMiddleware = Object.assign(
    async (payload: JobPayload, ctx: Parameters<ClientMiddleware>[1], next: () => Promise<void>) => {
      // Moving a job that already holds its lock (promotion, API retry), or a
      // write this middleware cannot guard: nothing to take.
      if (!ctx.guard || readMark(payload)) return next();
      const fail = (what: string, value: unknown) =>
        new PayloadError(
          `Cannot push job ${sanitize(payload.class, 100)} as ${what}: current value is ${describeValue(value)}`,
        );
      const unique = resolveUnique(
        ctx.job?.options as UniqueJobOptions | undefined,
        ctx.options as UniquePushOptions | undefined,
        fail,
      );
      if (!unique) return next();
      const name = uniqueDigest(payload.class, payload.queue, uniqueKeyPart(unique, payload.args));
      const key = ctx.keys.uniqueLock(name);
      // A scheduled job's lock covers its delay too (Sidekiq Enterprise's rule).
      const delayMs = ctx.at === undefined ? 0 : Math.max(0, ctx.at - Date.now());
      const ttlMs = Math.max(1, Math.ceil(unique.for * 1000 + delayMs));
      payload[UNIQUE_FIELD] = { key, until: unique.until, for: unique.for };
      ctx.guard({
        fragment: UNIQUE_GUARD,
        keys: [key, ctx.keys.uniqueJob(name), ctx.keys.uniqueQueues],
        args: [ttlMs, unique.conflict],
      });
      return next();
    },
    { appliesTo: isUniquePush },
  );

  const server: ServerMiddleware = async (
    _job: AnyJob,
    payload: JobPayload,
    _queue: string,
    next: () => Promise<void>,
    tools: ServerMiddlewareTools,
  ) => {
    const mark = readMark(payload);
    if (!mark) return next();
    if (mark.until === "start") {
      tools.releaseLater(mark.key, payload.jid);
      return next();
    }
    owners.set(payload, { tools, mark });
    try {
      await next();
    } catch (error) {
      // Discard ends the job as done; any other failure keeps the lock for
      // the retry (the death handler lets it go if the job dies instead).
      if (error instanceof Discard) tools.releaseLater(mark.key, payload.jid);
      throw error;
    }
    tools.releaseLater(mark.key, payload.jid);
  };

  const onDeath: DeathHandler = (payload) => {
    const owner = owners.get(payload);
    if (owner) owner.tools.releaseLater(owner.mark.key, payload.jid);
  };

  return Object.freeze(
    {
      name: "unique",
      options: UNIQUE_OPTION_RULES,
      client,
      server,
      onDeath,
      entries: UNIQUE_ENTRIES,
    } as const,
  );
}

/** Whether a push may be unique: its own `unique`, else its job's. */
function isUniquePush(job: AnyJob | undefined, options: Readonly<PushContextOptions> | undefined): boolean {
  if (options?.unique !== undefined || options?.uniqueConflict !== undefined) return options.unique !== false;
  return job?.options.unique !== undefined;
}
