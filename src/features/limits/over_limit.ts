/**
 * The signal a limiter throws when a call is over its limit: a `RunLater`,
 * so a job that meets it inside `perform` goes back to the `schedule` set
 * to run when the limiter expects room (not a failure, not a retry, no
 * processor held while it waits). Code outside a job catches it.
 *
 * @module
 */
import { RunLater } from "../../control.ts";

/**
 * A limiter said no. `at` (from `RunLater`) is when to try again: the
 * limiter's hint plus jitter, so the jobs it turned away do not all come
 * back at the same instant.
 *
 * @example
 * ```ts
 * try { await stripe.within(site, call); } catch (e) {
 *   if (e instanceof OverLimit) console.log(`${e.limiter} is full; again in ${e.waitMs} ms`);
 * }
 * ```
 */
export class OverLimit extends RunLater {
  /** The limiter's name. */
  readonly limiter: string;
  /** What the limiter hinted, ms, before jitter. */
  readonly waitMs: number;
  constructor(limiter: string, waitMs: number) {
    super({ inMs: jittered(waitMs), reason: `over the limit of '${limiter}'` });
    this.name = "OverLimit";
    this.limiter = limiter;
    this.waitMs = waitMs;
  }
}

/**
 * A wait with up to a fifth more (at least 20 ms more) at random.
 *
 * @example
 * ```ts
 * jittered(1000); // between 1000 and 1200
 * ```
 */
export function jittered(waitMs: number): number {
  return Math.round(waitMs + Math.random() * Math.max(20, waitMs * 0.2));
}
