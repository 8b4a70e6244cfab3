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
import { ConfigError, toTransportError } from "../errors.ts";
import { runScript, type Script } from "./script.ts";
import { type Command, countTrip, newCounters, type RedisArg, type RedisReply, type Transport } from "./transport.ts";

/** Options for {@link ioredisTransport}. */
export interface IoredisTransportOptions {
  /** `redis://` or `rediss://` URL; default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Use this client instead of connecting; it is not closed by `close()` unless `owned`. */
  client?: Redis;
  /** Close a given `client` on `close()`. */
  owned?: boolean;
  /** Extra ioredis options for connections this transport creates. */
  redisOptions?: RedisOptions;
}

const BLOCKING = new Set(["BRPOP", "BLPOP", "BLMOVE", "BRPOPLPUSH", "BZPOPMIN", "BZPOPMAX", "BLMPOP", "BZMPOP"]);

/**
 * Creates a transport over ioredis.
 *
 * @example
 * ```ts
 * import { ioredisTransport } from "edgekiq/ioredis";
 * const transport = ioredisTransport({ url: "redis://127.0.0.1:6379" });
 * ```
 */
export function ioredisTransport(options: IoredisTransportOptions = {}): Transport {
  // RESP2: the reply shapes Sidekiq, Lua and Upstash all use (RESP3 nests
  // WITHSCORES pairs and returns doubles as numbers).
  const base: RedisOptions = { maxRetriesPerRequest: null, protocol: 2, ...options.redisOptions };
  if (base.protocol !== 2 || (options.client && options.client.options.protocol === 3)) {
    throw new ConfigError("Cannot use ioredis transport as the connection speaks RESP3: set 'protocol: 2'");
  }
  const main = options.client ?? new Redis(options.url ?? "redis://127.0.0.1:6379", base);
  const ownsMain = !options.client || options.owned === true;
  const idle: Redis[] = [];
  const all = new Set<Redis>();
  const counters = newCounters();
  let closed = false;

  const send = async (command: string, ...args: RedisArg[]): Promise<RedisReply> => {
    countTrip(counters, 1);
    try {
      return normalize(await main.call(command, ...args));
    } catch (error) {
      throw toTransportError(error);
    }
  };

  const blocking = async (command: string, args: RedisArg[]): Promise<RedisReply> => {
    countTrip(counters, 1);
    // Blocking commands get their own connection: the server parks it.
    const conn = idle.pop() ?? main.duplicate();
    all.add(conn);
    try {
      return normalize(await conn.call(command, ...args));
    } catch (error) {
      throw toTransportError(error);
    } finally {
      if (closed) conn.disconnect();
      else idle.push(conn);
    }
  };

  return {
    kind: "ioredis",
    blocking: true,
    counters,
    call(command, ...args) {
      return BLOCKING.has(command.toUpperCase()) ? blocking(command, args) : send(command, ...args);
    },
    async pipeline(commands: readonly Command[], pipelineOptions = {}) {
      countTrip(counters, commands.length);
      const batch = pipelineOptions.atomic ? main.multi() : main.pipeline();
      for (const [name, ...args] of commands) batch.call(name, ...args);
      let results: [Error | null, unknown][] | null;
      try {
        results = await batch.exec();
      } catch (error) {
        throw toTransportError(error);
      }
      if (!results) throw toTransportError(new Error("EXECABORT Transaction discarded"));
      const failure = results.find(([error]) => error);
      if (failure) throw toTransportError(failure[0]);
      return results.map(([, value]) => normalize(value));
    },
    script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      return runScript(send, script, keys, args);
    },
    async close() {
      closed = true;
      for (const conn of all) conn.disconnect();
      if (ownsMain) await main.quit().catch(() => main.disconnect());
    },
  };
}

function normalize(value: unknown): RedisReply {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number") return value;
  if (Array.isArray(value)) return value.map(normalize);
  // Buffers never appear (we ask for strings); anything else is stringified.
  return String(value);
}
