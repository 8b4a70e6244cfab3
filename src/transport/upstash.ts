/**
 * The Upstash transport: Redis over HTTP with `@upstash/redis`, for
 * serverless and edge functions. Every command is an HTTP request Upstash
 * bills for, so pipelines go to `/pipeline`, transactions to `/multi-exec`,
 * and scripts pass every key in KEYS. There are no blocking commands: the
 * fetcher polls with a back-off instead (`blocking: false`).
 *
 * @module
 */
import { Redis, type Requester } from "@upstash/redis";
import { ConfigError, toTransportError, TransportError } from "../errors.ts";
import { runScript, type Script } from "./script.ts";
import {
  BLOCKING_COMMANDS,
  type Command,
  countTrip,
  newCounters,
  type RedisArg,
  type RedisReply,
  type Transport,
} from "./transport.ts";

/** Options for {@link upstashTransport}. */
export interface UpstashTransportOptions {
  /** The REST URL (`UPSTASH_REDIS_REST_URL`). */
  url?: string;
  /** The REST token (`UPSTASH_REDIS_REST_TOKEN`). */
  token?: string;
  /** Use this client instead (it must keep `automaticDeserialization: false` semantics for raw replies). */
  client?: Redis;
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
  const redis = options.client ??
    new Redis({ url: options.url!, token: options.token!, automaticDeserialization: false, enableTelemetry: false });
  // The raw REST requester: replies exactly as Redis gives them (base64 on
  // the wire, decoded by the client), without per-command deserialisers.
  const requester = (redis as unknown as { client: Requester }).client;
  const counters = newCounters();

  const send = async (command: string, ...args: RedisArg[]): Promise<RedisReply> => {
    if (BLOCKING_COMMANDS.has(command.toUpperCase())) {
      throw new TransportError(
        "command",
        `Cannot run ${command} over HTTP: the Upstash transport does not block (blocking is false)`,
      );
    }
    countTrip(counters, 1);
    let response;
    try {
      response = await requester.request<RedisReply>({ body: [command, ...args.map(String)] });
    } catch (error) {
      throw mapError(error);
    }
    if (response.error) throw toTransportError(new Error(response.error));
    return normalize(response.result);
  };

  return {
    kind: "upstash",
    blocking: false,
    counters,
    call: send,
    async pipeline(commands: readonly Command[], pipelineOptions = {}) {
      if (commands.length === 0) return [];
      countTrip(counters, commands.length);
      let responses;
      try {
        responses = await requester.request<RedisReply>({
          path: [pipelineOptions.atomic ? "multi-exec" : "pipeline"],
          body: commands.map(([name, ...args]) => [name, ...args.map(String)]),
        }) as unknown as { result?: RedisReply; error?: string }[];
      } catch (error) {
        throw mapError(error);
      }
      const failure = responses.find((r) => r.error);
      if (failure) throw toTransportError(new Error(failure.error));
      return responses.map((r) => normalize(r.result));
    },
    script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      return runScript(send, script, keys, args);
    },
    close() {
      return Promise.resolve(); // HTTP: no connection to close
    },
  };
}

/**
 * Maps a requester failure. An `UpstashError` carries the server's error
 * text (Redis's own words, plus ", command was: [...]", which is cut: it may
 * hold a whole payload). Anything else is the HTTP layer failing — fetch
 * refused, reset or timed out, a proxy's non-JSON page — whose messages
 * differ per runtime ("fetch failed", "Unable to connect", ...), so it is a
 * "connection" error whatever it says.
 */
function mapError(error: unknown): TransportError {
  if (error instanceof Error && error.name === "UpstashError") {
    const i = error.message.indexOf(", command was:");
    return toTransportError(i > 0 ? new Error(error.message.slice(0, i), { cause: error }) : error);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TransportError("connection", `Cannot reach Upstash: ${message}`, { cause: error });
}

function normalize(value: unknown): RedisReply {
  if (value === undefined || value === null) return null;
  if (typeof value === "string" || typeof value === "number") return value;
  if (Array.isArray(value)) return value.map(normalize);
  return String(value);
}
