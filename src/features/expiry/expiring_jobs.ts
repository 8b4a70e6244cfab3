/**
 * Expiring jobs as a feature (Sidekiq Pro's `expires_in`): the client writes
 * an absolute expiry into the payload (`expires_at`, epoch seconds: the run
 * time plus `expiresIn`, or `expiresAt`); a worker or drain that fetches the
 * job after that drops it before its arguments are checked or `perform`
 * runs, as `discarded` with the code `"expired"`: counted per class, logged
 * once per class per interval, and counted apart (`x`) by the execution
 * metrics.
 *
 * @module
 */
import type { ClientMiddleware, PushContextOptions } from "../../client_middleware.ts";
import { Discard } from "../../control.ts";
import type { AnyJob } from "../../job.ts";
import { toEpochMs } from "../../payload.ts";
import { ConfigError } from "../../errors.ts";
import type { Feature } from "../feature.ts";
import { ExpiryLog } from "./expiry_log.ts";
import { EXPIRES_AT_FIELD, EXPIRY_OPTION_RULES, type ExpiryJobOptions, type ExpiryPushOptions } from "./options.ts";

/** Options for {@link expiringJobs}. */
export interface ExpiringJobsOptions {
  /** Seconds between two log lines about one class's expired jobs (default 60). */
  logInterval?: number;
}

/** The expiring-jobs feature, with what it counted. */
export interface ExpiringJobs extends Feature {
  readonly name: "expiry";
  /** Jobs this process dropped as expired, by class. */
  counts(): Record<string, number>;
}

/**
 * Expiring jobs: a job (or push) with `expiresIn` seconds (or a push with
 * `expiresAt`) that has not *started* by then is dropped when fetched. A
 * scheduled job's expiry counts from its run time (scheduled two hours
 * ahead with `expiresIn: 3600`, it expires in three hours), as in Sidekiq
 * Pro. Pass it to the client that pushes and the worker that runs.
 *
 * @example
 * ```ts
 * const expiry = expiringJobs();
 * const Digest = defineJob({ name: "Digest", expiresIn: 24 * 3600, perform(_ctx, userId: number) {} });
 * await createClient({ transport, features: [expiry] }).push(Digest, [7]);
 * createWorker({ transport, jobs: [Digest], features: [expiry] });
 * ```
 */
export function expiringJobs(options: ExpiringJobsOptions = {}): ExpiringJobs {
  const interval = options.logInterval ?? 60;
  if (typeof interval !== "number" || !Number.isFinite(interval) || interval <= 0) {
    throw new ConfigError(
      `Cannot create expiringJobs as 'logInterval' must be > 0 seconds: current value is ${String(interval)}`,
    );
  }
  const log = new ExpiryLog(interval * 1000);

  const client: ClientMiddleware = Object.assign(
    (payload: Parameters<ClientMiddleware>[0], ctx: Parameters<ClientMiddleware>[1], next: () => Promise<void>) => {
      // A move of a job that carries its expiry (a promotion, an API retry) keeps it; a
      // periodic tick (a move of a new job) gets its job's, from now.
      if (!ctx.options && payload[EXPIRES_AT_FIELD] !== undefined) return next();
      const own = ctx.options as ExpiryPushOptions | undefined;
      const expiresIn = own?.expiresIn ?? (ctx.job?.options as ExpiryJobOptions | undefined)?.expiresIn;
      // Checked already (checkExpiresAt returns epoch ms; a Date is read the same way).
      const at = own?.expiresAt instanceof Date ? own.expiresAt.getTime() : own?.expiresAt;
      const expiresMs = at ?? (expiresIn === undefined ? undefined : (ctx.at ?? Date.now()) + expiresIn * 1000);
      if (expiresMs !== undefined) payload[EXPIRES_AT_FIELD] = expiresMs / 1000;
      return next();
    },
    { appliesTo: isExpiringPush },
  );

  return Object.freeze(
    {
      name: "expiry",
      options: EXPIRY_OPTION_RULES,
      client,
      // A job's expiry travels in its payload: nothing is shared across a sharded namespace.
      perShard: true,
      receive(payload, _job, ctx) {
        const at = payload[EXPIRES_AT_FIELD];
        if (typeof at !== "number" || !Number.isFinite(at)) return;
        const now = Date.now();
        const expiredMs = toEpochMs(at);
        if (expiredMs > now) return;
        log.expired(payload.class, ctx.logger, now);
        throw new Discard(`expired at ${new Date(expiredMs).toISOString()} before it started`, { code: "expired" });
      },
      stop: (ctx) => Promise.resolve(log.flush(ctx.logger)),
      counts: () => log.counts(),
    } satisfies ExpiringJobs,
  );
}

/** Whether a push may expire: its own `expiresIn`/`expiresAt`, else its job's `expiresIn`. */
function isExpiringPush(job: AnyJob | undefined, options: Readonly<PushContextOptions> | undefined): boolean {
  return options?.expiresIn !== undefined || options?.expiresAt !== undefined || job?.options.expiresIn !== undefined;
}
