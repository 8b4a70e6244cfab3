/**
 * Control-flow signals a job (or a server middleware) throws to end its run
 * in a way other than success or failure. They are not errors: none counts
 * as a failure or a retry, and none extends `EdgekiqError`.
 *
 * @module
 */

/**
 * Control flow, not failure: throw `new Discard("reason")` from `perform` to
 * end the job without a retry and without the dead set. A feature that
 * discards jobs for a reason of its own names it in `code` (`new
 * Discard("expired at ...", { code: "expired" })`), so observers of outcomes
 * can tell them apart.
 *
 * @example
 * ```ts
 * defineJob({ name: "Sync", perform(ctx, id: number) {
 *   if (id < 0) throw new Discard("negative id");
 * } });
 * ```
 */
export class Discard extends Error {
  /**
   * Why, for code that counts outcomes (`JobOutcome.code`): set by the
   * features that discard jobs themselves (`"expired"`, `"cancelled"`);
   * undefined for a plain `Discard`.
   */
  readonly code: string | undefined;
  constructor(reason = "discarded", options: { code?: string } = {}) {
    super(reason);
    this.name = "Discard";
    this.code = options?.code;
  }
}

/**
 * Control flow, not failure: throw `new Interrupt()` from `perform` to put the
 * job back on its queue unchanged, to run again later (an iterable job that
 * saved its cursor when `ctx.stopping` fired, say). It is neither a failure
 * nor a retry: no retry count, no error fields, no failed stat.
 *
 * @example
 * ```ts
 * defineJob({ name: "Backfill", async perform(ctx) {
 *   for (const id of ids) { if (ctx.stopping.aborted) throw new Interrupt(); await step(id); }
 * } });
 * ```
 */
export class Interrupt extends Error {
  constructor(reason = "interrupted") {
    super(reason);
    this.name = "Interrupt";
  }
}

/**
 * Control flow, not failure: throw `new RunLater({ inMs })` (or `{ at }`)
 * from `perform` or a server middleware to put the job back to run at that
 * time, unchanged: no retry count, no error fields, no failed stat, and no
 * processor held while it waits (it waits in the `schedule` set). Rate
 * limiters use it for a job over its limit.
 *
 * @example
 * ```ts
 * defineJob({ name: "CallApi", async perform(ctx) {
 *   const wait = await budget.take();
 *   if (wait > 0) throw new RunLater({ inMs: wait, reason: "over the API's rate limit" });
 * } });
 * ```
 */
export class RunLater extends Error {
  /** When to run again, epoch milliseconds. */
  readonly at: number;
  constructor(when: { at?: Date | number; inMs?: number; reason?: string }) {
    super(when?.reason ?? "run later");
    this.name = "RunLater";
    const at = when?.at instanceof Date ? when.at.getTime() : when?.at;
    const target = at ?? Date.now() + (when?.inMs ?? 0);
    // A time that cannot be read runs again now rather than never.
    this.at = Number.isFinite(target) ? target : Date.now();
  }
}
