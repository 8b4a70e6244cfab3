/**
 * Every error edgekiq throws extends {@link EdgekiqError}, so one `instanceof`
 * check catches them all. Control-flow signals (`Discard`, `Interrupt`,
 * `RunLater`, in `control.ts`) are *not* failures and deliberately do not
 * extend it; Redis failures are `TransportError`s (`transport/transport_error.ts`).
 *
 * @module
 */

/**
 * Base class of every edgekiq failure. Sets `name` to the subclass name and
 * keeps the underlying error as `cause`.
 *
 * @example
 * ```ts
 * try { await client.push(MyJob, [1]); } catch (e) {
 *   if (e instanceof EdgekiqError) console.error(e.name, e.message);
 * }
 * ```
 */
export class EdgekiqError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * A job definition or option is invalid. Raised eagerly, at definition or
 * configuration time, never while jobs run.
 *
 * @example
 * ```ts
 * defineJob({ name: "X", retry: -1, perform() {} });
 * // ConfigError: Cannot define job as 'retry' must be >= 0: current value is -1
 * ```
 */
export class ConfigError extends EdgekiqError {}

/**
 * Job arguments failed the job's schema. `issues` lists every problem with
 * its path. Nothing was written to Redis.
 *
 * @example
 * ```ts
 * try { await SendEmail.performAsync(client, 42); } catch (e) {
 *   if (e instanceof JobArgsError) console.log(e.issues);
 * }
 * ```
 */
export class JobArgsError extends EdgekiqError {
  /** Each problem (the first 20): a dotted path (`args[0].email`) and a short, escaped message. */
  readonly issues: ReadonlyArray<{ path: string; message: string }>;
  constructor(
    message: string,
    issues: ReadonlyArray<{ path: string; message: string }>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.issues = issues;
  }
}

/**
 * A payload cannot be pushed: it is not JSON-safe, or too large. Nothing was
 * written to Redis.
 *
 * @example
 * ```ts
 * await client.push(MyJob, [new Date()]);
 * // PayloadError: Cannot push job as args[0] is a Date: ...
 * ```
 */
export class PayloadError extends EdgekiqError {}

/**
 * An iterable job cannot go on: its `each` yielded something other than
 * `[item, cursor]` pairs, a cursor is not JSON-native, an iteration helper
 * was given bad options, or the cursor saved in `it-<jid>` cannot be read.
 * It fails the job like any error (retries resume from the last saved cursor).
 *
 * @example
 * ```ts
 * // IterationError: Cannot save the cursor of Backfill as cursor.at is a Date: ...
 * ```
 */
export class IterationError extends EdgekiqError {}

/**
 * A job's encrypted arguments cannot be decrypted (no key of their version
 * here, a wrong key, altered or unreadable text), or an `encrypt` push
 * cannot be encrypted. The message names the key version and what to do,
 * never the arguments; the job goes to the dead set with it.
 *
 * @example
 * ```ts
 * // EncryptionError: Cannot decrypt the arguments of job Charge (jid ...) as no key of version 3 is configured here ...
 * ```
 */
export class EncryptionError extends EdgekiqError {}

/**
 * A batch or flow cannot do what was asked: add to a batch that has
 * succeeded or was cancelled, open a child once its parent's registration
 * is over, read a flow's children from a job that is not a flow's parent.
 * Nothing was written.
 *
 * @example
 * ```ts
 * // BatchError: Cannot add jobs to batch q0tJ3bS-w5bQZf as it has succeeded
 * ```
 */
export class BatchError extends EdgekiqError {}
