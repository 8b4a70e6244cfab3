/**
 * The Bun transport: Bun's built-in `RedisClient`, no npm package needed.
 *
 * Bun speaks RESP3, so replies are normalised to the RESP2 shapes every
 * other transport returns (maps become flat arrays, scores become strings,
 * WITHSCORES pairs are flattened). Concurrent commands are auto-pipelined on
 * one connection; blocking pops and MULTI blocks each take a dedicated
 * connection, so nothing else interleaves with them.
 *
 * Known differences that cannot be normalised away: a score is formatted by
 * JavaScript (`"0.1"`) where Redis < 7.2 prints 17 digits
 * (`"0.10000000000000001"`), and HGETALL lists integer-like fields first
 * (Bun builds a JavaScript object). Both parse to the same values.
 *
 * @module
 */
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

/** The part of Bun's `RedisClient` this transport uses. */
export interface BunRedisClient {
  /** Sends a raw command (auto-pipelined with concurrent sends). */
  send(command: string, args: string[]): Promise<unknown>;
  /** (Re)connects; revives a client that gave up reconnecting. */
  connect(): Promise<void>;
  /** Opens another connection with the same configuration. */
  duplicate(): Promise<BunRedisClient>;
  /** Closes the connection; pending commands reject. */
  close(): void;
}

/** Options for {@link bunTransport}. */
export interface BunTransportOptions {
  /** `redis://` URL; default `redis://127.0.0.1:6379`. */
  url?: string;
  /**
   * Use this `RedisClient` for ordinary commands. `close()` leaves it open
   * unless `owned` is true; the connections duplicated from it are closed.
   */
  client?: BunRedisClient;
  /** Close a given `client` on `close()`. */
  owned?: boolean;
  /** Options for connections this transport creates (Bun's `RedisOptions`). */
  redisOptions?: Record<string, unknown>;
}

/** Commands whose every number is a score: RESP3 doubles that RESP2 sends as strings. */
const SCORES = new Set([
  "ZSCORE",
  "ZMSCORE",
  "ZINCRBY",
  "ZRANGE",
  "ZRANGEBYSCORE",
  "ZREVRANGE",
  "ZREVRANGEBYSCORE",
  "ZPOPMIN",
  "ZPOPMAX",
  "BZPOPMIN",
  "BZPOPMAX",
  "ZMPOP",
  "BZMPOP",
  "ZRANDMEMBER",
  "ZUNION",
  "ZINTER",
  "ZDIFF",
]);
/** Commands whose RESP3 [field, value] pairs RESP2 sends flat. */
const FLAT_PAIRS = new Set([
  "ZRANGE",
  "ZRANGEBYSCORE",
  "ZREVRANGE",
  "ZREVRANGEBYSCORE",
  "ZPOPMIN",
  "ZPOPMAX",
  "ZRANDMEMBER",
  "ZUNION",
  "ZINTER",
  "ZDIFF",
  "HRANDFIELD",
]);

/**
 * Creates a transport over Bun's `RedisClient`. Only usable under Bun.
 *
 * @example
 * ```ts
 * import { bunTransport } from "edgekiq/bun";
 * const transport = bunTransport({ url: "redis://127.0.0.1:6379" });
 * await transport.call("PING"); // "PONG"
 * await transport.close();
 * ```
 */
export function bunTransport(options: BunTransportOptions = {}): Transport {
  // Read from the global, not `import "bun"`, so Node and Deno can type-check
  // and bundle this module (they just cannot call it).
  // deno-lint-ignore no-explicit-any
  const RedisClient = (globalThis as any).Bun?.RedisClient as
    | (new (url: string, options?: Record<string, unknown>) => BunRedisClient)
    | undefined;
  if (!RedisClient && !options.client) {
    throw new ConfigError("Cannot create bun transport as Bun's RedisClient is not available: run under Bun");
  }
  const url = options.url ?? "redis://127.0.0.1:6379";
  // Bun gives up after `maxRetries` failed reconnects and then fails fast
  // until connect() is called: a few retries, then "connection" errors.
  const clientOptions = { maxRetries: 3, ...options.redisOptions };
  const main = options.client ?? new RedisClient!(url, clientOptions);
  const ownsMain = !options.client || options.owned === true;
  const idle: BunRedisClient[] = [];
  const all = new Set<BunRedisClient>();
  const broken = new WeakSet<BunRedisClient>();
  const counters = newCounters();
  let closed = false;

  const exec = async (conn: BunRedisClient, command: string, args: readonly RedisArg[]): Promise<RedisReply> => {
    try {
      if (broken.has(conn)) {
        await conn.connect();
        broken.delete(conn);
      }
      return normalize(command.toUpperCase(), args, await conn.send(command, args.map(String)));
    } catch (error) {
      throw mapError(conn, error);
    }
  };

  const mapError = (conn: BunRedisClient, error: unknown): TransportError => {
    const mapped = (error as { code?: string })?.code === "ERR_REDIS_CONNECTION_CLOSED"
      ? new TransportError("connection", (error as Error).message, { cause: error })
      : toTransportError(error);
    // A client that gave up stays dead until connect(): revive it next time.
    if (mapped.kind === "connection" && !closed) broken.add(conn);
    return mapped;
  };

  const withDedicated = async <T>(fn: (conn: BunRedisClient) => Promise<T>): Promise<T> => {
    if (closed) throw new TransportError("connection", "Cannot send as the transport is closed");
    let conn = idle.pop();
    if (!conn) {
      conn = RedisClient && !options.client ? new RedisClient(url, clientOptions) : await main.duplicate();
      all.add(conn);
    }
    try {
      return await fn(conn);
    } finally {
      if (closed) conn.close();
      else idle.push(conn);
    }
  };

  const send = (command: string, ...args: RedisArg[]): Promise<RedisReply> => {
    countTrip(counters, 1);
    return BLOCKING_COMMANDS.has(command.toUpperCase())
      ? withDedicated((conn) => exec(conn, command, args))
      : exec(main, command, args);
  };

  const transaction = (commands: readonly Command[]) =>
    withDedicated(async (conn) => {
      // MULTI, the commands and EXEC go out in one auto-pipelined write; the
      // dedicated connection keeps other callers' commands out of the block.
      const replies = await Promise.allSettled([
        exec(conn, "MULTI", []),
        ...commands.map(([name, ...args]) => exec(conn, name, args)),
        exec(conn, "EXEC", []),
      ]);
      const exec_ = replies[replies.length - 1];
      if (exec_.status === "rejected") {
        // EXECABORT (a command was refused while queueing): nothing applied.
        const refused = replies.slice(1, -1).find((r) => r.status === "rejected") as PromiseRejectedResult | undefined;
        const reason = refused ? ` (${(refused.reason as Error).message.trim()})` : "";
        const error = exec_.reason as TransportError;
        throw error.kind === "connection" ? error : new TransportError(error.kind, error.message + reason, {
          cause: error,
        });
      }
      const results = exec_.value as RedisReply[];
      // Runtime errors inside EXEC arrive as Error objects (see normalize).
      const failure = results.find((r) => (r as unknown) instanceof Error);
      if (failure) throw toTransportError(failure);
      return commands.map(([name, ...args], i) => renormalize(name.toUpperCase(), args, results[i]));
    });

  return {
    kind: "bun",
    blocking: true,
    counters,
    call: send,
    async pipeline(commands: readonly Command[], pipelineOptions = {}) {
      if (commands.length === 0) return [];
      countTrip(counters, commands.length);
      if (pipelineOptions.atomic) return transaction(commands);
      // Sent together, Bun auto-pipelines them into one write.
      const settled = await Promise.allSettled(commands.map(([name, ...args]) => exec(main, name, args)));
      const failure = settled.find((s) => s.status === "rejected");
      if (failure) throw (failure as PromiseRejectedResult).reason;
      return settled.map((s) => (s as PromiseFulfilledResult<RedisReply>).value);
    },
    script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      return runScript(send, script, keys, args);
    },
    close() {
      closed = true;
      // close() rejects pending blocking calls at once ("Connection closed").
      for (const conn of all) conn.close();
      all.clear();
      idle.length = 0;
      if (ownsMain) main.close();
      return Promise.resolve();
    },
  };
}

/** Redis's text for a double: `inf`, `-inf`, or the shortest round-trip form. */
function score(value: unknown): RedisReply {
  if (value === Infinity) return "inf";
  if (value === -Infinity) return "-inf";
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.map(score);
  return plain(value);
}

function normalize(command: string, args: readonly RedisArg[], value: unknown): RedisReply {
  // EXEC's array carries each queued command's reply: normalised per command later.
  if (command === "EXEC" && Array.isArray(value)) return value.map((v) => (v instanceof Error ? v : plain(v))) as never;
  return renormalize(command, args, plain(value));
}

function renormalize(command: string, args: readonly RedisArg[], value: RedisReply): RedisReply {
  const incr = command === "ZADD" && args.some((a) => String(a).toUpperCase() === "INCR");
  if (SCORES.has(command) || incr) value = score(value);
  if (FLAT_PAIRS.has(command) && Array.isArray(value) && value.some(Array.isArray)) {
    return value.flatMap((pair) => (Array.isArray(pair) ? pair : [pair]));
  }
  return value;
}

const utf8 = new TextDecoder();

function plain(value: unknown): RedisReply {
  if (value === null || value === undefined || value === false) return null;
  if (value === true) return 1;
  if (typeof value === "string" || typeof value === "number") return value;
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Uint8Array) return utf8.decode(value);
  if (value instanceof Error) return value.message;
  if (value instanceof Set) return [...value].map(plain);
  if (typeof value === "object") {
    // RESP3 maps (HGETALL, CONFIG GET) arrive as objects: RESP2 sends them flat.
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => [k, plain(v)]);
  }
  return String(value);
}
