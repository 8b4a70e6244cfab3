/**
 * Write guards: how a client middleware makes a check part of the push
 * itself. A job written plainly goes out in the batch's MULTI (`SADD queues`
 * + `LPUSH`, or `ZADD schedule`). A guarded job is written by its guard's
 * script instead, one script call per batch, which decides in the same
 * atomic step whether and how to write it: there is no window between a
 * check and the write it guards. Unique jobs take their lock this way.
 *
 * A guard script follows one calling convention, so the client can batch
 * any guard's jobs without knowing what the guard does:
 *
 * - KEYS: `queues`, `schedule`, then per job: its queue list, then its `k`
 *   guard keys.
 * - ARGV: `k`, `a`, then per job: its queue name, jid, payload, run time
 *   (epoch seconds as the `schedule` score, or `""` for now), then its `a`
 *   guard args.
 * - Reply: per job, two values: a status code ({@link GUARD_STATUS}) and the
 *   jid of the other job the guard met (`""` if none), flat, in job order.
 *
 * A pushed job must be written as the plain push writes it (`SADD queues`
 * + `LPUSH`, or `ZADD schedule` scored by the run time).
 *
 * @module
 */
import { ConfigError } from "./errors.ts";
import type { Script } from "./transport/script.ts";
import type { RedisArg, RedisReply } from "./transport/transport.ts";

/** What a guard did with a job. */
export type GuardedStatus = "pushed" | "duplicate" | "replaced" | "rescheduled";

/** A guard script's verdict on one job. */
export interface GuardedWrite {
  /**
   * `pushed`: written; `duplicate`: not written (another job holds the
   * guard); `replaced`: written in place of `existing`, which is gone;
   * `rescheduled`: not written, `existing` moved to this push's run time.
   */
  readonly status: GuardedStatus;
  /** The other job the guard met, if any. */
  readonly existing: string | undefined;
}

/**
 * A guard a client middleware attaches to one job's write with
 * `ctx.guard(...)`. Jobs guarded by the same script with the same numbers
 * of keys and args share one script call per batch.
 *
 * @example
 * ```ts
 * const middleware: ClientMiddleware = (payload, ctx, next) => {
 *   ctx.guard?.({ script: MY_GUARD, keys: [lockKey], args: [ttlMs] });
 *   return next();
 * };
 * ```
 */
export interface WriteGuard {
  /** The script that writes guarded jobs (see the calling convention above). */
  readonly script: Script<GuardedWrite[]>;
  /** This job's guard keys. */
  readonly keys: readonly string[];
  /** This job's guard args. */
  readonly args: readonly RedisArg[];
}

/** Status codes in a guard script's reply, by status. */
export const GUARD_STATUS: Readonly<Record<GuardedStatus, number>> = {
  pushed: 1,
  duplicate: 2,
  replaced: 3,
  rescheduled: 4,
};

const BY_CODE: readonly GuardedStatus[] = ["pushed", "pushed", "duplicate", "replaced", "rescheduled"];

/**
 * Decodes a guard script's reply (pairs of status code and jid).
 *
 * @example
 * ```ts
 * decodeGuarded([1, "", 2, "4f8b..."]); // [{ status: "pushed" }, { status: "duplicate", existing: "4f8b..." }]
 * ```
 */
export function decodeGuarded(reply: RedisReply): GuardedWrite[] {
  const flat = Array.isArray(reply) ? reply : [];
  const out: GuardedWrite[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const code = Number(flat[i]);
    const status = BY_CODE[code];
    if (status === undefined || code === 0) throw new TypeError(`unknown guard status code ${String(flat[i])}`);
    const other = flat[i + 1];
    out.push({ status, existing: typeof other === "string" && other !== "" ? other : undefined });
  }
  return out;
}

/**
 * One write guard per job: two middleware guarding one write would each
 * assume theirs is the write. Returns `next`, or throws if another is set.
 *
 * @example
 * ```ts
 * let guard: WriteGuard | undefined;
 * guard = oneGuard(guard, lockGuard);
 * ```
 */
export function oneGuard(current: WriteGuard | undefined, next: WriteGuard): WriteGuard {
  if (current && current !== next) {
    throw new ConfigError("Cannot guard a job's write twice: two client middleware each attached a write guard");
  }
  return next;
}
