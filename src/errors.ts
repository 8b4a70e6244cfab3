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

/** Options for {@link TransportError}. */
export interface TransportErrorOptions {
  /** The underlying error. */
  cause?: unknown;
  /**
   * Whether Redis may have applied the request. Defaults to true for a
   * "connection" error (the safe assumption) and false otherwise.
   */
  maybeApplied?: boolean;
}

/**
 * A Redis command failed. `kind` says why, so callers can decide: a
 * `connection` or `readonly` (failover) error is worth retrying later, a
 * `wrongtype` one is a bug or a key clash, `oom` means Redis is out of
 * memory and refuses writes.
 *
 * A "connection" error also says whether the request may have been applied
 * (`maybeApplied`): true when it was sent and its reply was lost, so a write
 * must not be sent again blindly; false when it certainly never reached Redis
 * (refused connection, nothing sent before the client gave up).
 *
 * @example
 * ```ts
 * try { await transport.call("LPUSH", "queue:default", payload); } catch (e) {
 *   if (e instanceof TransportError && e.kind === "connection" && e.maybeApplied) {
 *     // check before pushing again: the push may have landed
 *   }
 * }
 * ```
 */
export class TransportError extends EdgekiqError {
  /** Why the command failed. */
  readonly kind: TransportErrorKind;
  /**
   * Whether Redis may have applied the request (see the class doc). Only a
   * "connection" error can be unsure; for the other kinds Redis answered.
   */
  readonly maybeApplied: boolean;
  constructor(kind: TransportErrorKind, message: string, options: TransportErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.maybeApplied = options.maybeApplied ?? kind === "connection";
  }
}

/**
 * Classifies any error thrown by a Redis client into a {@link TransportError},
 * by Redis's own error prefixes. Already-classified errors pass through.
 *
 * A refused MULTI block (EXECABORT) carries the refusals that caused it as
 * `previousErrors` (ioredis's shape, which the other adapters copy): they
 * are folded into the message and the kind, so a transaction refused because
 * Redis is out of memory is an "oom" error, not a bare EXECABORT.
 *
 * @example
 * ```ts
 * const err = toTransportError(new Error("NOSCRIPT No matching script"));
 * err.kind; // "noscript"
 * ```
 */
export function toTransportError(error: unknown, options: { maybeApplied?: boolean } = {}): TransportError {
  if (error instanceof TransportError) return error;
  let message = messageOf(error);
  const previous = (error as { previousErrors?: unknown } | null)?.previousErrors;
  if (Array.isArray(previous) && previous.length > 0) {
    message = `${message.trim()} (${[...new Set(previous.map((e) => messageOf(e).trim()))].join("; ")})`;
  }
  const kind = classify(message);
  if (kind === "oom") {
    // Redis's own words ("OOM command not allowed when used memory >
    // 'maxmemory'") do not tell an operator what to do; say it plainly.
    message = `Cannot write as Redis is out of memory (used memory is over 'maxmemory' and the ` +
      `eviction policy frees nothing): ${message}`;
  }
  return new TransportError(kind, message, { cause: error, maybeApplied: options.maybeApplied });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function classify(message: string): TransportErrorKind {
  // Redis error replies start with an upper-case code; clients sometimes wrap
  // them ("ERR Error running script ... NOSCRIPT"), so look for the code anywhere.
  if (/\bNOSCRIPT\b/.test(message)) return "noscript";
  if (/\bWRONGTYPE\b/.test(message)) return "wrongtype";
  if (/\bREADONLY\b|\bMASTERDOWN\b|\bLOADING\b/.test(message)) return "readonly";
  if (/^OOM\b|\bOOM command not allowed\b/.test(message)) return "oom";
  if (
    /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|Connection is closed|connection clos(ed|e)|socket|fetch failed|Stream isn't writeable|closed/i
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
