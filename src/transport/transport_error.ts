/**
 * Redis failures: {@link TransportError} and how any Redis client's error is
 * classified into one, by Redis's own error prefixes, so the engine reacts
 * to the kind of failure rather than to a client library's wording.
 *
 * @module
 */
import { EdgekiqError } from "../errors.ts";

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
