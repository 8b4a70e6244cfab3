/**
 * The Upstash transport: Redis over HTTP with `@upstash/redis`, for
 * serverless and edge functions. Every command is an HTTP request Upstash
 * bills for, so pipelines go to `/pipeline`, transactions to `/multi-exec`,
 * and scripts pass every key in KEYS. There are no blocking commands: the
 * fetcher polls with a back-off instead (`blocking: false`).
 *
 * No blind resends: `@upstash/redis` retries a failed fetch five times by
 * default, and a request reset after Redis ran it (a push) would run again.
 * Its retries are off for every request this transport makes (a given client
 * is left as it is for its other users); the core retries only idempotent
 * requests (`transport.ts`). Every request has a timeout (`timeoutMs`), and
 * `withSignal` bounds requests by a caller's budget: both cancel the HTTP
 * request itself.
 *
 * One resend is out of this transport's reach: Deno's `fetch` sends a request
 * again by itself when the pooled connection it went out on is reset after
 * the server read it (denoland/deno#35610), so under Deno a push whose
 * connection was reset that way can land twice.
 *
 * @module
 */
import { Redis, type Requester } from "@upstash/redis";
import { ConfigError } from "../../../errors.ts";
import { toTransportError, TransportError } from "../../transport_error.ts";
import { type Adapter, adapterTransport, anySignal } from "../../adapter.ts";
import { pipelineReplies, toReply } from "../../reply.ts";
import { redact } from "../../redact_url.ts";
import { type Command, newCounters, type RedisReply, type Transport } from "../../transport.ts";

/** Options for {@link upstashTransport}. */
export interface UpstashTransportOptions {
  /** The REST URL (`UPSTASH_REDIS_REST_URL`). */
  url?: string;
  /** The REST token (`UPSTASH_REDIS_REST_TOKEN`). */
  token?: string;
  /** Use this client instead (it must keep `automaticDeserialization: false` semantics for raw replies). */
  client?: Redis;
  /**
   * How long one HTTP request may take, in milliseconds, before it is
   * cancelled and rejects with a "connection" error (`maybeApplied: true`).
   * Default 10,000.
   */
  timeoutMs?: number;
}

/** A timeout's abort reason, told apart from a caller's abort in messages. */
class RequestTimeout extends Error {
  constructor(ms: number) {
    super(`no reply within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

/**
 * Creates a transport over `@upstash/redis`.
 *
 * @example
 * ```ts
 * import { upstashTransport } from "edgekiq/upstash";
 * const transport = upstashTransport({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
 * ```
 */
export function upstashTransport(options: UpstashTransportOptions = {}): Transport {
  if (!options.client && (!options.url || !options.token)) {
    throw new ConfigError("Cannot create upstash transport as 'url' and 'token' are required (or pass 'client')");
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!(timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) {
    throw new ConfigError(
      `Cannot create upstash transport as 'timeoutMs' must be > 0 ms: current value is ${timeoutMs}`,
    );
  }
  const redis = options.client ?? new Redis({
    url: options.url!,
    token: options.token!,
    automaticDeserialization: false,
    enableTelemetry: false,
    retry: { retries: 0 }, // `retry: false` would still try twice (@upstash/redis 1.39 counts attempts from 0)
  });
  // The raw REST requester: replies exactly as Redis gives them (base64 on
  // the wire, decoded by the client), without per-command deserialisers. A
  // view of it with retries off, so a given client keeps its own setting.
  const client = (redis as unknown as { client: Requester }).client;
  const requester: Requester = Object.create(client, { retry: { value: { attempts: 0, backoff: () => 0 } } });
  const counters = newCounters();

  /** One HTTP request, cancelled after `timeoutMs` or when `signal` fires. */
  const request = async <T>(what: string, body: unknown, path: string[] | undefined, signal?: AbortSignal) => {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new RequestTimeout(timeoutMs)), timeoutMs);
    const combined = signal ? anySignal(signal, timeout.signal) : timeout.signal;
    try {
      // A signal given as a function makes an aborted fetch throw; a plain
      // one would be answered with `{ result: "Aborted" }` as if Redis said so.
      return await requester.request<T>(
        { body, path, signal: () => combined } as unknown as Parameters<Requester["request"]>[0],
      );
    } catch (error) {
      throw mapError(what, error, combined);
    } finally {
      clearTimeout(timer);
    }
  };

  const adapter: Adapter = {
    kind: "upstash",
    // The REST URL names the database; the token is never shown.
    endpoint: redact(options.url ?? (client as { baseUrl?: string }).baseUrl ?? "upstash"),
    counters,
    async send([name, ...args]: Command, signal?: AbortSignal): Promise<RedisReply> {
      const response = await request<RedisReply>(name.toUpperCase(), [name, ...args.map(String)], undefined, signal);
      if (response.error) throw toTransportError(new Error(response.error), { maybeApplied: false });
      return toReply(response.result);
    },
    async batch(commands, atomic, signal) {
      const responses = await request<RedisReply>(
        `${atomic ? "MULTI block" : "pipeline"} of ${commands.length}`,
        commands.map(([name, ...args]) => [name, ...args.map(String)]),
        [atomic ? "multi-exec" : "pipeline"],
        signal,
      ) as unknown as { result?: RedisReply; error?: string }[] | { error?: string };
      if (!Array.isArray(responses)) throw toTransportError(new Error(responses.error ?? "no replies"));
      return pipelineReplies(responses.map((r) => (r.error ? { error: new Error(r.error) } : { value: r.result })));
    },
    close() {
      return Promise.resolve(); // HTTP: no connection to close
    },
  };
  return adapterTransport(adapter);
}

/**
 * Maps a requester failure. An `UpstashError` carries the server's error
 * text (Redis's own words, plus ", command was: [...]", which is cut: it may
 * hold a whole payload). Anything else is the HTTP layer failing — fetch
 * refused, reset, cancelled, a proxy's non-JSON page — whose messages differ
 * per runtime ("fetch failed", "Unable to connect", ...), so it is a
 * "connection" error whatever it says; only a refused connection is known
 * not to have reached Redis.
 */
function mapError(what: string, error: unknown, signal: AbortSignal): TransportError {
  if (error instanceof Error && error.name === "UpstashError") {
    const i = error.message.indexOf(", command was:");
    return toTransportError(i > 0 ? new Error(error.message.slice(0, i), { cause: error }) : error);
  }
  if (signal.aborted) {
    const reason = signal.reason instanceof RequestTimeout
      ? signal.reason.message
      : `the request was aborted: ${signal.reason instanceof Error ? signal.reason.message : String(signal.reason)}`;
    return new TransportError(
      "connection",
      `Cannot get a reply to ${what} from Upstash (${reason}): it may have been applied`,
      {
        cause: error,
        maybeApplied: true,
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  const refused = /ECONNREFUSED|ConnectionRefused|Connection refused|ENOTFOUND|EAI_AGAIN|getaddrinfo/i
    .test(`${message} ${cause?.code ?? ""} ${cause?.message ?? ""} ${(error as { code?: string }).code ?? ""}`);
  return new TransportError("connection", `Cannot reach Upstash: ${message}`, { cause: error, maybeApplied: !refused });
}
