/**
 * Write guards: how a feature makes a check part of the push itself. A job
 * written plainly goes out in the batch's MULTI (`SADD queues` + `LPUSH`,
 * or `ZADD schedule`). A guarded job is written by one script that runs
 * every guard the job carries (unique jobs' lock, a batch's registration,
 * ...) around the write, in one atomic step: there is no window between a
 * check and the write it guards, and several features guard one push
 * without knowing of each other (`guarded_push.ts` composes them).
 *
 * A guard is a {@link GuardFragment}: Lua (and its JavaScript twin) in
 * three parts, run per job in this order:
 *
 * 1. `check(j)`, every guard in turn, **reading only**: it answers
 *    `pushed` (go on), `duplicate` (write nothing), `already` (this exact
 *    push ran before, its reply lost: write nothing, report it pushed),
 *    or `replaced` / `rescheduled` (this guard writes the job itself, in
 *    its `write`). The first answer other than `pushed` decides; later
 *    guards are not asked.
 * 2. the write: the plain push, or the deciding guard's `write(j, plan)`.
 *    It comes before any guard's own writes, so a write Redis refuses (a
 *    queue key of the wrong type, OOM) leaves nothing behind: Lua does
 *    not roll back.
 * 3. `apply(j, status)`: every guard's own writes, once the job is written
 *    (`pushed`, `replaced`); after `rescheduled` only the deciding guard's.
 *
 * `j` is a table (an object in the twin) with `qkey`, `queue`, `jid`,
 * `payload`, `score` (epoch seconds as the `schedule` score, or `""` for
 * now), `queues` and `schedule` (those two keys), and `keys` / `args`: the
 * guard's own keys and args for this job. Lua's `push(j, raw, score)` writes
 * a payload as the plain push does.
 *
 * @module
 */
import { ConfigError } from "./errors.ts";
import type { ScriptRedis } from "./transport/script.ts";
import type { RedisArg, RedisReply } from "./transport/redis_values.ts";

/** What a guarded push did with a job. */
export type GuardedStatus = "pushed" | "duplicate" | "replaced" | "rescheduled";

/** A guarded push's verdict on one job. */
export interface GuardedWrite {
  /**
   * `pushed`: written; `duplicate`: not written (a guard refused it);
   * `replaced`: written in place of `existing`, which is gone;
   * `rescheduled`: not written, `existing` moved to this push's run time.
   */
  readonly status: GuardedStatus;
  /** The other job a guard met, if any. */
  readonly existing: string | undefined;
}

/** Status codes a guard's `check` answers, and a guarded push replies with. */
export const GUARD_STATUS: Readonly<Record<GuardedStatus | "already", number>> = {
  pushed: 1,
  duplicate: 2,
  replaced: 3,
  rescheduled: 4,
  already: 5,
};

/** One job as a guard's twin sees it. */
export interface GuardedJob {
  readonly qkey: string;
  readonly queue: string;
  readonly jid: string;
  readonly payload: string;
  /** Epoch seconds, or `""` for now. */
  readonly score: string;
  /** `queues`. */
  readonly queues: string;
  /** `schedule`. */
  readonly schedule: string;
  /** This guard's keys for this job. */
  readonly keys: readonly string[];
  /** This guard's args for this job. */
  readonly args: readonly string[];
}

/** What a guard's `check` answers: a status code, the other job met, and a plan for its `write`. */
export type GuardCheck = readonly [code: number, other?: string, plan?: unknown];

/** The JavaScript twin of a guard fragment, for the memory transport. */
export interface GuardTwin {
  check(redis: ScriptRedis, j: GuardedJob): GuardCheck;
  write?(redis: ScriptRedis, j: GuardedJob, plan: unknown, push: (raw: string, score: string) => void): void;
  apply?(redis: ScriptRedis, j: GuardedJob, status: number): void;
}

/**
 * A feature's part of the push script. `lua` defines three local functions
 * named after the guard: `<name>_check(j)` returning `code, other, plan`;
 * `<name>_write(j, plan)` (needed only if `check` may answer `replaced` or
 * `rescheduled`); `<name>_apply(j, status)` (optional).
 *
 * @example
 * ```ts
 * const tally: GuardFragment = {
 *   name: "tally", keys: 1, args: 0,
 *   lua: `local function tally_check(j) return 1 end
 * local function tally_apply(j, status) redis.call("INCR", j.keys[1]) end`,
 *   twin: { check: () => [1], apply: (redis, j) => void redis.call("INCR", j.keys[0]) },
 * };
 * ```
 */
export interface GuardFragment {
  /** Names the guard's Lua functions: lower-case letters, digits and `_`. */
  readonly name: string;
  /** Keys per job. */
  readonly keys: number;
  /** Args per job. */
  readonly args: number;
  readonly lua: string;
  readonly twin: GuardTwin;
}

/**
 * A guard a client middleware attaches to one job's write with
 * `ctx.guard(...)`: its fragment and this job's keys and args.
 *
 * @example
 * ```ts
 * const middleware: ClientMiddleware = (payload, ctx, next) => {
 *   ctx.guard?.({ fragment: tally, keys: [ctx.keys.queue("tally")], args: [] });
 *   return next();
 * };
 * ```
 */
export interface WriteGuard {
  readonly fragment: GuardFragment;
  readonly keys: readonly string[];
  readonly args: readonly RedisArg[];
}

const BY_CODE: readonly (GuardedStatus | undefined)[] = [
  undefined,
  "pushed",
  "duplicate",
  "replaced",
  "rescheduled",
  "pushed",
];

/**
 * Decodes a guarded push's reply (pairs of status code and jid).
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
    const status = BY_CODE[Number(flat[i])];
    if (status === undefined) throw new TypeError(`unknown guard status code ${String(flat[i])}`);
    const other = flat[i + 1];
    out.push({ status, existing: typeof other === "string" && other !== "" ? other : undefined });
  }
  return out;
}

/**
 * Adds `next` to the guards of one job's write, refusing a second guard of
 * the same fragment (two middleware each locking the same write would each
 * assume theirs decides) and a fragment whose counts do not match its keys
 * and args.
 *
 * @example
 * ```ts
 * const guards: WriteGuard[] = [];
 * addGuard(guards, lockGuard);
 * ```
 */
export function addGuard(guards: WriteGuard[], next: WriteGuard): void {
  const { fragment } = next;
  if (!/^[a-z][a-z0-9_]*$/.test(fragment.name)) {
    throw new ConfigError(
      `Cannot guard a job's write as the guard's name must be lower-case letters, digits and '_': current value is ${
        JSON.stringify(fragment.name)
      }`,
    );
  }
  if (next.keys.length !== fragment.keys || next.args.length !== fragment.args) {
    throw new ConfigError(
      `Cannot guard a job's write as guard '${fragment.name}' takes ${fragment.keys} keys and ${fragment.args} args: ${next.keys.length} keys and ${next.args.length} args were given`,
    );
  }
  if (guards.some((g) => g.fragment.name === fragment.name)) {
    throw new ConfigError(`Cannot guard a job's write twice with guard '${fragment.name}'`);
  }
  guards.push(next);
}
