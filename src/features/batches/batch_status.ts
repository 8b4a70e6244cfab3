/**
 * A batch's status, as Sidekiq Pro's `Sidekiq::Batch::Status` tells it:
 * total, pending and failed jobs (with what failed), child batches, when
 * it was created, completed and succeeded, and each callback's state.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import type { Keys } from "../../keys.ts";
import type { Command, RedisReply } from "../../transport/redis_values.ts";
import { pairs, scanReply, str } from "../../transport/reply_readers.ts";
import { parentBid } from "./bid.ts";
import { BATCH_EVENTS, type BatchEvent } from "./callbacks.ts";
import { UNIT } from "./counting.ts";

/** Most failures a status lists (the count is always exact). */
export const STATUS_FAILURES_LISTED = 100;

/**
 * Where a callback stands: `none` (the batch has none), `waiting` (its event
 * has not happened), `cancelled` (it happened after the batch was cancelled:
 * not pushed), `queued` (pushed, not yet run), `succeeded`, `failed` (will
 * retry) or `dead` (the job ran and died); for a flow's parent, `failed`
 * also when a child's failure failed it before it ran.
 */
export type CallbackState = "none" | "waiting" | "cancelled" | "queued" | "succeeded" | "failed" | "dead";

/** One callback's state. */
export interface CallbackStatus {
  readonly state: CallbackState;
  /** The callback job's jid (once known). */
  readonly jid: string | undefined;
  /** When its event happened. */
  readonly firedAt: Date | undefined;
  /** When its job last finished a run. */
  readonly ranAt: Date | undefined;
}

/** One failed job of a batch. */
export interface BatchFailure {
  readonly jid: string;
  /** Its job class (undefined for a flow's parent failed by its child). */
  readonly job: string | undefined;
  readonly errorClass: string;
  readonly errorMessage: string;
  /** Whether it died (it will not run again unless retried from the dead set). */
  readonly dead: boolean;
}

/** A batch's status at one moment. */
export interface BatchStatus {
  readonly bid: string;
  /** The parent batch's id, for a child batch. */
  readonly parentBid: string | undefined;
  readonly description: string | undefined;
  /** Whether it is a flow (a parent job waits for its jobs). */
  readonly flow: boolean;
  readonly createdAt: Date;
  /** When its data expires (its expiry counts from its last registration). */
  readonly expiresAt: Date | undefined;
  /** Jobs registered (callbacks of child batches, which run in it, included). */
  readonly total: number;
  /** Jobs not yet successful (failed ones included, as Sidekiq Pro counts). */
  readonly pending: number;
  /** Jobs that failed and have not since succeeded. */
  readonly failures: number;
  /** Failed jobs, up to {@link STATUS_FAILURES_LISTED}. */
  readonly failed: readonly BatchFailure[];
  /** Child batches opened in it, and how many have not succeeded. */
  readonly children: number;
  readonly childrenPending: number;
  /** Registrations still open (`add()` running, or cut off by a crash): it cannot complete while any is. */
  readonly openRegistrations: number;
  /** Whether every job ran (complete fired), when. */
  readonly completedAt: Date | undefined;
  /** Whether every job succeeded (success fired), when. */
  readonly succeededAt: Date | undefined;
  /** When its first job died. */
  readonly diedAt: Date | undefined;
  readonly cancelledAt: Date | undefined;
  readonly callbacks: Readonly<Record<BatchEvent, CallbackStatus>>;
}

/**
 * The commands that read a batch's status (its hash, a page of failures,
 * its time to live): {@link parseStatus} reads their replies.
 *
 * @example
 * ```ts
 * const replies = await transport.pipeline(statusCommands(keys(), bid));
 * const status = parseStatus(bid, replies);
 * ```
 */
export function statusCommands(keys: Keys, bid: string): Command[] {
  return [
    ["HGETALL", keys.batch(bid)],
    ["HSCAN", keys.batchFailed(bid), 0, "COUNT", STATUS_FAILURES_LISTED],
    ["PTTL", keys.batch(bid)],
  ];
}

/**
 * A status from the replies of {@link statusCommands}; undefined if the
 * batch does not exist (expired, or never made).
 *
 * @example
 * ```ts
 * parseStatus(bid, await transport.pipeline(statusCommands(keys(), bid)));
 * ```
 */
export function parseStatus(bid: string, replies: readonly RedisReply[]): BatchStatus | undefined {
  const meta = fields(replies[0]);
  if (meta.created === undefined) return undefined;
  const scanned = fields(scanReply(replies[1] ?? [])[1]);
  const ttl = Number(replies[2]);
  const num = (field: string) => Number(meta[field] ?? 0);
  const at = (value: string | undefined) => {
    const ms = Number(value?.split(":")[0]);
    return value && ms > 0 ? new Date(ms) : undefined;
  };
  const callbacks = {} as Record<BatchEvent, CallbackStatus>;
  for (const event of BATCH_EVENTS) callbacks[event] = callbackStatus(meta, event);
  return {
    bid,
    parentBid: parentBid(bid),
    description: meta.desc,
    flow: meta.flow !== undefined,
    createdAt: new Date(num("created")),
    expiresAt: ttl > 0 ? new Date(Date.now() + ttl) : undefined,
    total: num("total"),
    pending: (num("count") % UNIT) - num("kpend") - num("holds"),
    failures: num("failures"),
    failed: Object.entries(scanned).slice(0, STATUS_FAILURES_LISTED).map(([jid, raw]) => failure(jid, raw)),
    children: num("kids"),
    childrenPending: num("kpend"),
    openRegistrations: num("holds"),
    completedAt: at(meta["fired:complete"]),
    succeededAt: meta["fired:success"]?.endsWith(":failed") ? undefined : at(meta["fired:success"]),
    diedAt: at(meta["fired:death"]),
    cancelledAt: at(meta.cancelled),
    callbacks,
  };
}

function callbackStatus(meta: Record<string, string>, event: BatchEvent): CallbackStatus {
  const fired = meta[`fired:${event}`];
  const ran = meta[`done:${event}`];
  const jid = meta[`cbj:${event}`];
  const firedAt = fired ? new Date(Number(fired.split(":")[0])) : undefined;
  const ranAt = ran ? new Date(Number(ran.split(":")[0])) : undefined;
  const note = fired?.slice(fired.indexOf(":") + 1);
  let state: CallbackState;
  if (meta[`cb:${event}`] === undefined) state = "none";
  else if (fired === undefined || fired === "") state = "waiting";
  else if (note === "cancelled") state = "cancelled";
  else if (note === "failed") state = "failed";
  else if (ran === undefined) state = "queued";
  else {
    const kind = ran.slice(ran.indexOf(":") + 1);
    state = kind === "ok" ? "succeeded" : kind === "dead" ? "dead" : "failed";
  }
  return { state, jid, firedAt, ranAt };
}

function failure(jid: string, raw: string): BatchFailure {
  let info: { job?: unknown; class?: unknown; message?: unknown; dead?: unknown } = {};
  try {
    info = JSON.parse(raw) ?? {};
  } catch { /* kept as text below */ }
  return {
    jid,
    job: typeof info.job === "string" ? info.job : undefined,
    errorClass: typeof info.class === "string" ? info.class : "Error",
    errorMessage: typeof info.message === "string" ? info.message : raw,
    dead: info.dead === true,
  };
}

/** A hash reply (HGETALL, a HSCAN page) as a record of strings. */
function fields(reply: RedisReply | undefined): Record<string, string> {
  return Object.fromEntries(pairs(reply).map(([field, value]) => [field, str(value) ?? ""]));
}

/**
 * Reads one batch's status (one round trip).
 *
 * @example
 * ```ts
 * const status = await readStatus(client, bid);
 * console.log(status?.pending, status?.failures);
 * ```
 */
export async function readStatus(client: Client<object>, bid: string): Promise<BatchStatus | undefined> {
  return parseStatus(bid, await client.transport.pipeline(statusCommands(client.keys, bid)));
}
