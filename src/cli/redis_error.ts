/**
 * Says what went wrong when the CLI's first command to Redis fails: a
 * password Redis refused is an authentication failure, not "cannot reach";
 * a server that cannot be reached names the failure behind it (ECONNREFUSED,
 * ENOTFOUND, a timeout) rather than a client's retry counter.
 *
 * @module
 */
import { EdgekiqError } from "../errors.ts";
import { sanitize } from "../sanitize.ts";

/**
 * Redis could not be used: refused credentials, or no server reached.
 * `cause` keeps the client's error for `-v`.
 *
 * @example
 * ```ts
 * throw explainRedisError(error, { url: "redis://:***@h:6379", source: "--redis-url" });
 * ```
 */
export class RedisUnavailableError extends EdgekiqError {
  /** `auth`: Redis answered and refused the credentials; `connection`: no answer. */
  readonly reason: "auth" | "connection";
  constructor(reason: "auth" | "connection", message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** Where the URL came from and how it is shown (redacted), for the message. */
export interface RedisErrorContext {
  /** The URL, already redacted. */
  url: string;
  /** `--redis-url`, `REDIS_URL`, `config.redisUrl`, `default`. */
  source: string;
  /** What a plain TCP connection to the host found ("connect ECONNREFUSED ..."), when the client did not say. */
  probe?: string;
}

/**
 * The errors in `error`'s `cause` chain, outermost first (at most 8, so a
 * cycle cannot loop).
 *
 * @example
 * ```ts
 * causes(new Error("a", { cause: new Error("b") })).map((e) => e.message); // ["a", "b"]
 * ```
 */
export function causes(error: unknown): Error[] {
  const out: Error[] = [];
  for (let e = error; e instanceof Error && out.length < 8 && !out.includes(e); e = e.cause) out.push(e);
  return out;
}

/** A system error's code anywhere in the chain (`ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT`...), with its message. */
function systemFailure(error: unknown): Error | undefined {
  return causes(error).reverse().find((e) => /^E(?!RR_)[A-Z_]+$/.test(String((e as { code?: unknown }).code ?? "")));
}

const AUTH =
  /\bWRONGPASS\b|\bNOAUTH\b|\bNOPERM\b|invalid password|called without any password configured|\bUnauthorized\b|invalid or missing auth token/i;

/**
 * Turns the failure of the first command into one line that says what
 * happened. Every part taken from the error is escaped.
 *
 * @example
 * ```ts
 * explainRedisError(new Error("WRONGPASS invalid username-password pair"), { url: "redis://:***@h:6379", source: "REDIS_URL" }).message;
 * // "Redis at redis://:***@h:6379 (from REDIS_URL) refused the credentials: WRONGPASS ...; check the user name and password in the URL ..."
 * ```
 */
export function explainRedisError(error: unknown, context: RedisErrorContext): RedisUnavailableError {
  const { url, source } = context;
  const messages = causes(error).map((e) => e.message);
  const auth = messages.find((m) => AUTH.test(m));
  const at = `Redis at ${url} (from ${source})`;
  if (auth) {
    // Redis's first clause says it ("NOAUTH HELLO must be called with the client already authenticated").
    const said = sanitize(auth.split(/[.,](?:\s|$)/)[0], 200);
    const message = /without any password configured/i.test(auth)
      ? `${at} has no password set, yet the URL gives one (${said}): leave the password out of the URL`
      : /\bNOAUTH\b/.test(auth)
      ? `authentication failed: ${at} requires a password and the URL gives none (${said}): ` +
        "put it in the URL as redis://:password@host:port (or redis://user:password@host:port)"
      : /^https?:/.test(url)
      ? `authentication failed: ${at} refused the token (${said}): check UPSTASH_REDIS_REST_TOKEN or EDGEKIQ_REDIS_TOKEN`
      : `authentication failed: ${at} refused the credentials (${said}): ` +
        "check the user name and password in the URL (redis://user:password@host:port)";
    return new RedisUnavailableError("auth", message, { cause: error });
  }
  const system = systemFailure(error);
  const detail = system?.message ?? context.probe ?? (error instanceof Error ? error.message : String(error));
  return new RedisUnavailableError("connection", `cannot reach ${at}: ${sanitize(detail, 300)}`, { cause: error });
}

/**
 * Whether a probe of the host could add anything: the client's error names
 * no system failure (Bun's client says only "Max reconnection attempts
 * reached") and it is not an authentication failure.
 *
 * @example
 * ```ts
 * needsProbe(new Error("Max reconnection attempts reached")); // true
 * ```
 */
export function needsProbe(error: unknown): boolean {
  return !systemFailure(error) && !causes(error).some((e) => AUTH.test(e.message));
}
