/**
 * The error a bulk push rejects with when Redis refused or lost one of its
 * batches, saying exactly which jobs are in Redis and which are not.
 *
 * @module
 */
import { EdgekiqError } from "./errors.ts";

/** Which jobs of a failed bulk push landed, failed, or were never sent. */
export interface PushOutcome {
  /** Jids of batches Redis confirmed: these jobs are queued or scheduled. */
  readonly landed: readonly string[];
  /** Jids of the batches that failed, or whose reply was lost. */
  readonly failed: readonly string[];
  /**
   * Whether some of `failed` may have been written after all: a reply was
   * lost (connection dropped, timeout), so Redis may have applied the batch.
   * False when Redis refused the batch, which then wrote none of its jobs.
   */
  readonly maybeApplied: boolean;
  /** Jids of batches never sent, because an earlier one failed: not in Redis. */
  readonly notSent: readonly string[];
}

/**
 * A bulk push failed part-way. Each batch is one MULTI, so each is written
 * whole or not at all; this error lists the jids of each kind (jobs a client
 * middleware stopped are in none of the lists). `cause` is the Redis error.
 * To finish the push, push the `notSent` jobs again, and the `failed` ones
 * too unless `maybeApplied` (then check first, by jid, to avoid duplicates).
 *
 * @example
 * ```ts
 * try {
 *   await client.pushBulk(ImportRow, rows);
 * } catch (e) {
 *   if (e instanceof PushError) console.log(e.landed.length, e.failed, e.maybeApplied, e.notSent.length);
 * }
 * ```
 */
export class PushError extends EdgekiqError implements PushOutcome {
  readonly landed: readonly string[];
  readonly failed: readonly string[];
  readonly maybeApplied: boolean;
  readonly notSent: readonly string[];

  constructor(message: string, outcome: PushOutcome, options?: { cause?: unknown }) {
    super(message, options);
    this.landed = outcome.landed;
    this.failed = outcome.failed;
    this.maybeApplied = outcome.maybeApplied;
    this.notSent = outcome.notSent;
  }
}

/**
 * Redis could not be reached and the client's reliable-push buffer
 * (`reliablePush`) has no room for this push's jobs: none of them was
 * buffered. `landed` lists those written before Redis went away; the rest
 * are in `failed` or `notSent`, as for a {@link PushError}. `cause` is the
 * Redis error.
 *
 * @example
 * ```ts
 * try { await client.push(SendEmail, [id]); } catch (e) {
 *   if (e instanceof PushBufferFullError) return new Response("try again later", { status: 503 });
 * }
 * ```
 */
export class PushBufferFullError extends PushError {
  /** How many jobs the buffer holds at most (`reliablePush.maxJobs`). */
  readonly limit: number;

  constructor(message: string, outcome: PushOutcome, options: { cause?: unknown; limit: number }) {
    super(message, outcome, { cause: options.cause });
    this.limit = options.limit;
  }
}
