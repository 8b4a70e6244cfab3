/**
 * What `waitFor` rejects with: the job ended without a value to give (it
 * died, was dropped or discarded), its value was not kept (too large, not
 * JSON), or the wait timed out.
 *
 * @module
 */
import { EdgekiqError } from "../../errors.ts";

/**
 * The job ended for good without completing: it is `dead` (in the dead
 * set), `failed` (failed for good, kept nowhere) or `discarded`.
 *
 * @example
 * ```ts
 * try { await waitFor(client, jid); } catch (e) {
 *   if (e instanceof JobFailedError) console.log(e.status, e.errorClass, e.errorMessage);
 * }
 * ```
 */
export class JobFailedError extends EdgekiqError {
  /** The job. */
  readonly jid: string;
  /** How it ended. */
  readonly status: "dead" | "failed" | "discarded";
  /** Its last error's class, when it failed. */
  readonly errorClass?: string;
  /** Its last error's message, when it failed. */
  readonly errorMessage?: string;

  constructor(jid: string, status: JobFailedError["status"], error?: { className?: string; message?: string }) {
    super(
      `Job ${jid} ${status === "discarded" ? "was discarded" : status === "dead" ? "died" : "failed for good"}${
        error?.className ? `: ${error.className}: ${error.message ?? ""}` : ""
      }`,
    );
    this.jid = jid;
    this.status = status;
    this.errorClass = error?.className;
    this.errorMessage = error?.message;
  }
}

/**
 * The job completed but its result was not kept: its JSON was larger than
 * `maxResultBytes`, or it was not JSON at all.
 *
 * @example
 * ```ts
 * // ResultError: Job 4f8b... completed, but its result was not kept: its JSON is 2100000 bytes, over maxResultBytes (65536)
 * ```
 */
export class ResultError extends EdgekiqError {
  /** The job. */
  readonly jid: string;

  constructor(jid: string, why: string) {
    super(`Job ${jid} completed, but its result was not kept: ${why}`);
    this.jid = jid;
  }
}

/**
 * No result came within the wait's `timeoutMs`: the job has not ended yet,
 * or it does not keep its result (`keepResult`), or its result expired.
 *
 * @example
 * ```ts
 * // WaitTimeoutError: No result for job 4f8b... within 30000 ms: it has not ended, or it was pushed without keepResult
 * ```
 */
export class WaitTimeoutError extends EdgekiqError {
  /** The job. */
  readonly jid: string;

  constructor(jid: string, timeoutMs: number) {
    super(
      `No result for job ${jid} within ${timeoutMs} ms: it has not ended, or it was pushed without keepResult (or its result expired)`,
    );
    this.jid = jid;
  }
}
