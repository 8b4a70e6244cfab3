/**
 * What became of one pushed job, for callers that need more than its jid
 * or `null`: {@link Client.pushDetailed} and {@link Client.pushBulkDetailed}.
 *
 * @module
 */
import type { GuardedWrite } from "./write_guard.ts";

/**
 * What a push did with one job:
 * - `pushed`: written (queued or scheduled);
 * - `stopped`: a client middleware stopped it; nothing written;
 * - `duplicate`: a unique job whose lock another copy (`existing`) holds;
 *   nothing written (`uniqueConflict: "skip"`, or a copy that can no longer be
 *   replaced or moved because it is running or retrying);
 * - `replaced`: written in place of the waiting copy `existing`, now gone
 *   (`uniqueConflict: "replace"`);
 * - `rescheduled`: nothing written; the waiting copy `existing` now runs at
 *   this push's time (`uniqueConflict: "reschedule"`).
 */
export type PushStatus = "pushed" | "stopped" | "duplicate" | "replaced" | "rescheduled";

/**
 * One job's outcome.
 *
 * @example
 * ```ts
 * const result = await client.pushDetailed(SyncUser, [42]);
 * if (result.status === "duplicate") console.log("already queued as", result.existing);
 * ```
 */
export interface PushResult {
  /**
   * The job that will do this push's work: the new jid (`pushed`,
   * `replaced`), the existing copy's (`rescheduled`), or `null` (`stopped`,
   * `duplicate`). It is what `push` returns.
   */
  readonly jid: string | null;
  /** What happened. */
  readonly status: PushStatus;
  /** The other copy of a unique job this push met. */
  readonly existing?: string;
}

/**
 * The result of a job a guard script wrote (or did not).
 *
 * @example
 * ```ts
 * guardedResult("4f8b...", { status: "duplicate", existing: "9c1d..." }); // { jid: null, status: "duplicate", existing: "9c1d..." }
 * ```
 */
export function guardedResult(jid: string, write: GuardedWrite): PushResult {
  const { status, existing } = write;
  const carrier = status === "pushed" || status === "replaced"
    ? jid
    : status === "rescheduled"
    ? existing ?? null
    : null;
  return existing === undefined ? { jid: carrier, status } : { jid: carrier, status, existing };
}
