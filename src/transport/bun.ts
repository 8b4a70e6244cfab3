/**
 * The Bun transport: Bun's built-in `RedisClient`, no npm package needed.
 *
 * Bun speaks RESP3, so replies are normalised to the RESP2 shapes every
 * other transport returns (maps become flat arrays, doubles become Redis's
 * score strings, WITHSCORES pairs are flattened). Concurrent commands are
 * auto-pipelined on one connection; blocking pops and MULTI blocks each take
 * a dedicated connection, so nothing else interleaves with them.
 *
 * @module
 */
import { ConfigError, toTransportError } from "../errors.ts";
import { runScript, type Script } from "./script.ts";
import { type Command, countTrip, newCounters, type RedisArg, type RedisReply, type Transport } from "./transport.ts";

/** The part of Bun's `RedisClient` this transport uses. */
export interface BunRedisClient {
  send(command: string, args: string[]): Promise<unknown>;
  close(): void;
}

/** Options for {@link bunTransport}. */
export interface BunTransportOptions {
  /** `redis://` URL; default `redis://127.0.0.1:6379`. */
  url?: string;
}

const BLOCKING = new Set(["BRPOP", "BLPOP", "BLMOVE", "BRPOPLPUSH", "BZPOPMIN", "BZPOPMAX", "BLMPOP", "BZMPOP"]);
const DOUBLE_REPLY = new Set(["ZSCORE", "ZINCRBY", "INCRBYFLOAT", "HINCRBYFLOAT", "ZADD"]);
const SCORE_PAIRS = new Set([
  "ZRANGE",
  "ZRANGEBYSCORE",
  "ZREVRANGE",
  "ZREVRANGEBYSCORE",
  "ZPOPMIN",
  "ZPOPMAX",
  "ZRANDMEMBER",
]);

/**
 * Creates a transport over Bun's `RedisClient`. Only loadable under Bun.
 *
 * @example
 * ```ts
 * import { bunTransport } from "edgekiq/bun";
 * const transport = bunTransport({ url: "redis://127.0.0.1:6379" });
 * ```
 */
export function bunTransport(options: BunTransportOptions = {}): Transport {
  // deno-lint-ignore no-explicit-any
  const RedisClient = (globalThis as any).Bun?.RedisClient as (new (url: string) => BunRedisClient) | undefined;
  if (!RedisClient) {
    throw new ConfigError("Cannot create bun transport as Bun's RedisClient is not available: run under Bun");
  }
  const url = options.url ?? "redis://127.0.0.1:6379";
  const main = new RedisClient(url);
  const idle: BunRedisClient[] = [];
  const all = new Set<BunRedisClient>();
  const counters = newCounters();
  let closed = false;

  const withDedicated = async <T>(fn: (conn: BunRedisClient) => Promise<T>): Promise<T> => {
    const conn = idle.pop() ?? new RedisClient(url);
    all.add(conn);
    try {
      return await fn(conn);
    } finally {
      if (closed) conn.close();
      else idle.push(conn);
    }
  };

  const exec = async (conn: BunRedisClient, command: string, args: readonly RedisArg[]): Promise<RedisReply> => {
    try {
      return normalize(command.toUpperCase(), args, await conn.send(command, args.map(String)));
    } catch (error) {
      throw toTransportError(error);
    }
  };

  const send = (command: string, ...args: RedisArg[]): Promise<RedisReply> => {
    countTrip(counters, 1);
    return BLOCKING.has(command.toUpperCase())
      ? withDedicated((conn) => exec(conn, command, args))
      : exec(main, command, args);
  };

  return {
    kind: "bun",
    blocking: true,
    counters,
    call: send,
    async pipeline(commands: readonly Command[], pipelineOptions = {}) {
      countTrip(counters, commands.length);
      if (!pipelineOptions.atomic) {
        // Sent together, Bun auto-pipelines them into one write.
        const settled = await Promise.allSettled(commands.map(([name, ...args]) => exec(main, name, args)));
        const failure = settled.find((s) => s.status === "rejected");
        if (failure) throw (failure as PromiseRejectedResult).reason;
        return settled.map((s) => (s as PromiseFulfilledResult<RedisReply>).value);
      }
      return withDedicated(async (conn) => {
        await conn.send("MULTI", []);
        const queued = await Promise.allSettled(commands.map(([name, ...args]) => conn.send(name, args.map(String))));
        const refused = queued.find((q) => q.status === "rejected");
        if (refused) {
          await conn.send("DISCARD", []).catch(() => {});
          throw toTransportError(
            new Error(
              `EXECABORT Transaction discarded because of previous errors: ${
                (refused as PromiseRejectedResult).reason
              }`,
            ),
          );
        }
        let results: unknown;
        try {
          results = await conn.send("EXEC", []);
        } catch (error) {
          throw toTransportError(error);
        }
        const replies = results as unknown[];
        const failure = replies.find((r) => r instanceof Error);
        if (failure) throw toTransportError(failure);
        return replies.map((reply, i) =>
          normalize(commands[i][0].toUpperCase(), commands[i].slice(1) as RedisArg[], reply)
        );
      });
    },
    script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      return runScript(send, script, keys, args);
    },
    close() {
      closed = true;
      for (const conn of all) conn.close();
      main.close();
      return Promise.resolve();
    },
  };
}

function score(value: unknown): string {
  if (value === Infinity) return "inf";
  if (value === -Infinity) return "-inf";
  return String(value);
}

function normalize(command: string, args: readonly RedisArg[], value: unknown): RedisReply {
  if (DOUBLE_REPLY.has(command) && typeof value === "number") {
    return command === "ZADD" && !args.some((a) => String(a).toUpperCase() === "INCR") ? value : score(value);
  }
  if (SCORE_PAIRS.has(command) && Array.isArray(value) && value.some(Array.isArray)) {
    return value.flatMap((pair) => (Array.isArray(pair) ? [String(pair[0]), score(pair[1])] : [plain(pair)]));
  }
  return plain(value);
}

function plain(value: unknown): RedisReply {
  if (value === null || value === undefined || value === false) return null;
  if (value === true) return 1;
  if (typeof value === "string" || typeof value === "number") return value;
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => [k, plain(v)]);
  }
  return String(value);
}
