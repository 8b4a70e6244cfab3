/**
 * The ioredis transport: TCP Redis on Node, Bun and Deno.
 *
 * Ordinary commands share one connection (ioredis pipelines concurrent
 * commands on it). Blocking pops each get a dedicated connection from a small
 * pool, so a worker waiting on BLMOVE never stalls its own heartbeat or acks.
 *
 * @module
 */
import { Redis, type RedisOptions } from "ioredis";
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

/** Options for {@link ioredisTransport}. */
export interface IoredisTransportOptions {
  /** `redis://` or `rediss://` URL; default `redis://127.0.0.1:6379`. */
  url?: string;
  /**
   * Use this client instead of connecting. A RESP2 client (`protocol: 2`) is
   * used as is; a RESP3 one (ioredis 6's default) is duplicated as RESP2.
   * `close()` leaves it open unless `owned` is true; the connections the
   * transport duplicated from it are always closed.
   */
  client?: Redis;
  /** Close a given `client` on `close()`. */
  owned?: boolean;
  /**
   * ioredis auto-pipelining: batches commands issued in the same tick into
   * one write. Off by default: with a single in-flight caller it only adds a
   * tick of latency; it helps when many jobs ack concurrently.
   */
  autoPipelining?: boolean;
  /** Extra ioredis options for connections this transport creates. */
  redisOptions?: RedisOptions;
}

const noop = () => {};

/**
 * Creates a transport over ioredis.
 *
 * @example
 * ```ts
 * import { ioredisTransport } from "edgekiq/ioredis";
 * const transport = ioredisTransport({ url: "redis://127.0.0.1:6379" });
 * await transport.call("PING"); // "PONG"
 * await transport.close();
 * ```
 */
export function ioredisTransport(options: IoredisTransportOptions = {}): Transport {
  // RESP2: the reply shapes Sidekiq, Lua and Upstash all use (RESP3 nests
  // WITHSCORES pairs and returns doubles as numbers). One reconnect attempt
  // per command: while Redis is down, commands fail fast with a "connection"
  // error the engine backs off on, instead of queueing forever.
  const base: RedisOptions = {
    maxRetriesPerRequest: 1,
    protocol: 2,
    enableAutoPipelining: options.autoPipelining ?? false,
    ...options.redisOptions,
  };
  if (base.protocol !== 2) {
    throw new ConfigError("Cannot use ioredis transport with RESP3: leave 'protocol' at 2");
  }
  const given = options.client;
  // ioredis 6 speaks RESP3 by default; a RESP3 client is duplicated (same
  // host, auth, TLS) as RESP2 rather than trusting its reply mapping.
  const resp2 = !given || given.options.protocol === 2;
  const main = given
    ? (resp2 ? given : given.duplicate({ protocol: 2, maxRetriesPerRequest: base.maxRetriesPerRequest }))
    : new Redis(options.url ?? "redis://127.0.0.1:6379", base);
  const ownsMain = !given || !resp2 || options.owned === true;
  // Connection failures surface through the commands that hit them; without a
  // listener ioredis would also print every reconnect failure to stderr.
  if (main !== given) main.on("error", noop);
  const idle: Redis[] = [];
  const all = new Set<Redis>();
  const counters = newCounters();
  let closed = false;

  const send = async (command: string, ...args: RedisArg[]): Promise<RedisReply> => {
    countTrip(counters, 1);
    try {
      return normalize(await main.call(command, ...args));
    } catch (error) {
      throw mapError(error);
    }
  };

  const blocking = async (command: string, args: RedisArg[]): Promise<RedisReply> => {
    if (closed) throw new TransportError("connection", `Cannot run ${command} as the transport is closed`);
    countTrip(counters, 1);
    // Blocking commands get their own connection: the server parks it.
    let conn = idle.pop();
    if (!conn) {
      conn = main.duplicate();
      conn.on("error", noop);
      all.add(conn);
    }
    try {
      return normalize(await conn.call(command, ...args));
    } catch (error) {
      throw mapError(error);
    } finally {
      if (closed) conn.disconnect();
      else idle.push(conn);
    }
  };

  return {
    kind: "ioredis",
    blocking: true,
    // Everything but blocking pops goes over one connection, in call order.
    ordered: true,
    counters,
    call(command, ...args) {
      return BLOCKING_COMMANDS.has(command.toUpperCase()) ? blocking(command, args) : send(command, ...args);
    },
    async pipeline(commands: readonly Command[], pipelineOptions = {}) {
      if (commands.length === 0) return [];
      countTrip(counters, commands.length);
      const batch = pipelineOptions.atomic ? main.multi() : main.pipeline();
      for (const [name, ...args] of commands) batch.call(name, ...args);
      let results: [Error | null, unknown][] | null;
      try {
        // A command Redis refuses to queue makes EXEC reject with EXECABORT.
        results = await batch.exec();
      } catch (error) {
        throw mapError(error);
      }
      if (!results) throw toTransportError(new Error("EXECABORT Transaction discarded"));
      const failure = results.find(([error]) => error);
      if (failure) throw mapError(failure[0]);
      return results.map(([, value]) => normalize(value));
    },
    script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      return runScript(send, script, keys, args);
    },
    async close() {
      closed = true;
      // disconnect() rejects pending blocking calls at once ("Connection is closed").
      for (const conn of all) conn.disconnect();
      all.clear();
      idle.length = 0;
      if (options.owned && given && given !== main) given.disconnect();
      if (!ownsMain) return;
      if (main.status !== "ready") {
        main.disconnect(); // QUIT would wait in the offline queue for a server that is not there
        return;
      }
      // QUIT lets in-flight replies arrive; bound it so close() never hangs.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        main.quit().catch(noop),
        new Promise((resolve) => (timer = setTimeout(resolve, 1000))),
      ]);
      clearTimeout(timer);
      main.disconnect();
    },
  };
}

/** ioredis reports "gave up reconnecting" as MaxRetriesPerRequestError: a connection failure. */
function mapError(error: unknown): TransportError {
  if (error instanceof Error && error.name === "MaxRetriesPerRequestError") {
    return new TransportError("connection", `Cannot reach Redis: ${error.message}`, { cause: error });
  }
  return toTransportError(error);
}

function normalize(value: unknown): RedisReply {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number") return value;
  if (Array.isArray(value)) return value.map(normalize);
  // Buffers never appear (call() returns strings); Lua errors nested in a
  // script's array reply arrive as Error objects: keep their text.
  if (value instanceof Error) return value.message;
  return String(value);
}
