/**
 * Every error edgekiq throws extends {@link EdgekiqError}, so one `instanceof`
 * check catches them all. Control-flow signals ({@link Discard}) are *not*
 * failures and deliberately do not extend it.
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

/** The kinds of Redis failure the engine reacts to differently. */
export type TransportErrorKind =
  | "connection"
  | "noscript"
  | "readonly"
  | "oom"
  | "wrongtype"
  | "command";

/**
 * A Redis command failed. `kind` says why, so callers can decide: a
 * `connection` or `readonly` (failover) error is worth retrying later, a
 * `wrongtype` one is a bug or a key clash.
 *
 * @example
 * ```ts
 * try { await transport.call("LPUSH", "a-string-key", "x"); } catch (e) {
 *   if (e instanceof TransportError && e.kind === "wrongtype") { ... }
 * }
 * ```
 */
export class TransportError extends EdgekiqError {
  /** Why the command failed. */
  readonly kind: TransportErrorKind;
  constructor(kind: TransportErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

/**
 * Classifies any error thrown by a Redis client into a {@link TransportError},
 * by Redis's own error prefixes. Already-classified errors pass through.
 *
 * @example
 * ```ts
 * const err = toTransportError(new Error("NOSCRIPT No matching script"));
 * err.kind; // "noscript"
 * ```
 */
export function toTransportError(error: unknown): TransportError {
  if (error instanceof TransportError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TransportError(classify(message), message, { cause: error });
}

function classify(message: string): TransportErrorKind {
  // Redis error replies start with an upper-case code; clients sometimes wrap
  // them ("ERR Error running script ... NOSCRIPT"), so look for the code anywhere.
  if (/\bNOSCRIPT\b/.test(message)) return "noscript";
  if (/\bWRONGTYPE\b/.test(message)) return "wrongtype";
  if (/\bREADONLY\b|\bMASTERDOWN\b|\bLOADING\b/.test(message)) return "readonly";
  if (/^OOM\b|\bOOM command not allowed\b/.test(message)) return "oom";
  if (
    /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|Connection is closed|connection closed|Connection closed|socket|fetch failed|Stream isn't writeable|closed/i
      .test(message)
  ) return "connection";
  return "command";
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
 * Control flow, not failure: throw `new Discard("reason")` from `perform` to
 * end the job without a retry and without the dead set.
 *
 * @example
 * ```ts
 * defineJob({ name: "Sync", perform(ctx, id: number) {
 *   if (id < 0) throw new Discard("negative id");
 * } });
 * ```
 */
export class Discard extends Error {
  constructor(reason = "discarded") {
    super(reason);
    this.name = "Discard";
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
