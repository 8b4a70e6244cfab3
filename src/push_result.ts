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
 *   this push's time (`uniqueConflict: "reschedule"`);
 * - `buffered`: Redis could not be reached; the client's reliable-push
 *   buffer holds the job and writes it, in order, when Redis is back
 *   (`reliablePush`; its guards, a unique lock say, decide then).
 */
export type PushStatus = "pushed" | "stopped" | "duplicate" | "replaced" | "rescheduled" | "buffered";

/** A job the reliable-push buffer took instead of writing it now. */
export const BUFFERED: { readonly status: "buffered"; readonly existing: undefined } = Object.freeze({
  status: "buffered",
  existing: undefined,
});

/** What a push did with a job it wrote or buffered: a guard's verdict, or {@link BUFFERED}. */
export type PushVerdict = GuardedWrite | typeof BUFFERED;

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
export function guardedResult(jid: string, write: PushVerdict): PushResult {
  const { status, existing } = write;
  const carrier = status === "pushed" || status === "replaced" || status === "buffered"
    ? jid
    : status === "rescheduled"
    ? existing ?? null
    : null;
  return existing === undefined ? { jid: carrier, status } : { jid: carrier, status, existing };
}

const STOPPED: PushResult = Object.freeze({ jid: null, status: "stopped" });

/** What a push wrote: each job's jid (`null` where a middleware stopped it), and the guards' verdicts by jid. */
export interface Written {
  jids: (string | null)[];
  verdicts: Map<string, PushVerdict>;
}

/**
 * The jid `push` returns for a job written as `jid`: the job that carries
 * its work, if any.
 *
 * @example
 * ```ts
 * carrierJid(jid, new Map()); // jid
 * ```
 */
export function carrierJid(jid: string | null, verdicts: Map<string, PushVerdict>): string | null {
  const verdict = jid === null ? undefined : verdicts.get(jid);
  return verdict ? guardedResult(jid!, verdict).jid : jid;
}

/**
 * The {@link PushResult} of a job written as `jid`.
 *
 * @example
 * ```ts
 * pushResultOf(null, new Map()); // { jid: null, status: "stopped" }
 * ```
 */
export function pushResultOf(jid: string | null, verdicts: Map<string, PushVerdict>): PushResult {
  if (jid === null) return STOPPED;
  const verdict = verdicts.get(jid);
  return verdict ? guardedResult(jid, verdict) : { jid, status: "pushed" };
}
