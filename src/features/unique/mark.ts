/**
 * The mark a unique job carries in its payload: which lock it holds, until
 * when, and for how long at most. The payload is self-describing, so the
 * worker, the poller, the admin API and the orphan sweep all find a job's
 * lock from the job alone, whichever process pushed it.
 *
 * @module
 */
import type { UniqueUntil } from "./options.ts";

/** The payload field: `"edgekiq_unique": {"key": ..., "until": ..., "for": ...}`. */
export const UNIQUE_FIELD = "edgekiq_unique";

/** What the field holds. */
export interface UniqueMark {
  /** The lock's full key (namespace included). */
  readonly key: string;
  /** When the worker releases it. */
  readonly until: UniqueUntil;
  /** The lock's upper bound, seconds. */
  readonly for: number;
}

/** A job's lock: its key and the jid it holds while this job owns it. */
export interface JobLock {
  readonly key: string;
  readonly jid: string;
  readonly mark: UniqueMark;
}

/** Only keys in a unique-lock namespace are ever released, whatever a payload names. */
const LOCK_KEY = /(^|:)edgekiq:unique:[^\s]/;

/**
 * The mark of a parsed payload, or undefined if it carries none (or a
 * malformed one, which is then ignored: it was not written by edgekiq).
 *
 * @example
 * ```ts
 * readMark(payload)?.until; // "success"
 * ```
 */
export function readMark(payload: Record<string, unknown> | null | undefined): UniqueMark | undefined {
  const mark = payload?.[UNIQUE_FIELD] as Record<string, unknown> | undefined;
  if (typeof mark !== "object" || mark === null) return undefined;
  const { key, until, for: seconds } = mark;
  if (typeof key !== "string" || !LOCK_KEY.test(key)) return undefined;
  if (until !== "start" && until !== "success") return undefined;
  if (typeof seconds !== "number" || !(seconds > 0)) return undefined;
  return { key, until, for: seconds };
}

/**
 * The lock a raw job holds, if it is a unique job; `prefix` (a lock-key
 * prefix such as `keys.uniqueLockPrefix`) restricts it to one namespace.
 * Cheap for the rest: a raw without the field is not parsed.
 *
 * @example
 * ```ts
 * lockOf(raw, client.keys.uniqueLockPrefix); // { key: "edgekiq:unique:HardJob:3f1c...", jid, mark }
 * ```
 */
export function lockOf(raw: string, prefix?: string): JobLock | undefined {
  if (!raw.includes(`"${UNIQUE_FIELD}"`)) return undefined;
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const mark = readMark(payload);
  const jid = payload?.jid;
  if (!mark || typeof jid !== "string" || jid === "") return undefined;
  if (prefix !== undefined && !mark.key.startsWith(prefix)) return undefined;
  return { key: mark.key, jid, mark };
}
