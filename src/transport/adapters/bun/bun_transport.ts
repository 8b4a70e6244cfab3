/**
 * The Bun transport: Bun's built-in `RedisClient`, no npm package needed.
 *
 * Bun speaks RESP3, so replies are normalised to the RESP2 shapes every
 * other transport returns (`resp3Reply`: maps become flat arrays, scores
 * become strings, WITHSCORES pairs are flattened). Concurrent commands are
 * auto-pipelined on one connection; blocking pops and MULTI blocks each take
 * a dedicated connection from a pool (`pool.ts`), so nothing else
 * interleaves with them.
 *
 * Lost replies: when a connection drops, Bun rejects the commands it had
 * sent ("Connection closed") and never resends them; commands not yet sent
 * wait for the reconnect. So Bun already follows the no-blind-resend rule
 * (`transport.ts`); the transport only tells the two apart (`maybeApplied`).
 *
 * Known differences that cannot be normalised away: a score is formatted by
 * JavaScript (`"0.1"`) where Redis < 7.2 prints 17 digits
 * (`"0.10000000000000001"`), and HGETALL lists integer-like fields first
 * (Bun builds a JavaScript object). Both parse to the same values.
 *
 * @module
 */
import { ConfigError } from "../../../errors.ts";
import { toTransportError, TransportError } from "../../transport_error.ts";
import { type Adapter, adapterTransport } from "../../adapter.ts";
import { ConnectionPool, type DedicatedConnection } from "../../pool.ts";
import { pipelineReplies, resp3Reply } from "../../reply.ts";
import { redact } from "../../redact_url.ts";
import { type Command, countTrip, newCounters, type RedisReply, type Transport } from "../../transport.ts";

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
  /** Whether the client is connected (Bun's `RedisClient` has it). */
  readonly connected?: boolean;
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
  const broken = new WeakSet<BunRedisClient>();
  const counters = newCounters();
  let closed = false;

  /** Sends one command and returns Bun's raw reply; rejects with a `TransportError`. */
  const raw = async (conn: BunRedisClient, [name, ...args]: Command): Promise<unknown> => {
    try {
      if (broken.has(conn)) {
        await conn.connect();
        broken.delete(conn);
      }
      return await conn.send(name, args.map(String));
    } catch (error) {
      const mapped = mapError(name, error);
      // A client that gave up stays dead until connect(): revive it next time.
      if (mapped.kind === "connection" && !closed) broken.add(conn);
      throw mapped;
    }
  };
  const send = async (conn: BunRedisClient, command: Command): Promise<RedisReply> =>
    resp3Reply(command, await raw(conn, command));

  const pool = new ConnectionPool<DedicatedConnection & { client: BunRedisClient }>({
    async open() {
      // No reconnects for ours: a dropped dedicated connection is replaced,
      // since its CLIENT ID would change.
      const conn = RedisClient && !options.client
        ? new RedisClient(url, { ...clientOptions, autoReconnect: false })
        : await main.duplicate();
      try {
        const id = Number(await raw(conn, ["CLIENT", "ID"]));
        return {
          id,
          client: conn,
          send: (command) => send(conn, command),
          isOpen: () => conn.connected !== false,
          close: () => conn.close(),
        };
      } catch (error) {
        conn.close();
        throw error;
      }
    },
    unblock(id) {
      countTrip(counters, 1);
      return raw(main, ["CLIENT", "UNBLOCK", id]);
    },
  });

  // MULTI, the commands and EXEC go out in one auto-pipelined write on a
  // dedicated connection, which keeps other callers' commands out of the block.
  const transaction = (commands: readonly Command[]): Promise<RedisReply[]> =>
    pool.use(async ({ client }) => {
      const replies = await Promise.allSettled([
        raw(client, ["MULTI"]),
        ...commands.map((command) => raw(client, command)),
        raw(client, ["EXEC"]),
      ]);
      const exec = replies[replies.length - 1];
      if (exec.status === "rejected") {
        const error = exec.reason as TransportError;
        if (error.kind === "connection") throw error;
        // EXECABORT: nothing applied. The refusals say why (OOM, unknown command).
        const previousErrors = replies.slice(1, -1).flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
        throw toTransportError(Object.assign(new Error(error.message), { previousErrors }), { maybeApplied: false });
      }
      // Runtime errors inside EXEC arrive as Error objects in its array.
      const results = exec.value as unknown[];
      return pipelineReplies(
        results.map((value) => (value instanceof Error ? { error: value } : { value })),
        (value, i) => resp3Reply(commands[i], value),
      );
    });

  const adapter: Adapter = {
    kind: "bun",
    endpoint: redact(url),
    counters,
    send: (command) => send(main, command),
    async batch(commands, atomic) {
      if (atomic) return await transaction(commands);
      // Sent together, Bun auto-pipelines them into one write.
      const settled = await Promise.allSettled(commands.map((command) => raw(main, command)));
      return pipelineReplies(
        settled.map((s) => (s.status === "rejected" ? { error: s.reason } : { value: s.value })),
        (value, i) => resp3Reply(commands[i], value),
      );
    },
    block: (command, signal) => pool.block(command, signal),
    // Issued in one tick, Bun auto-pipelines the two into one write.
    blockThen: (command, then, signal) => pool.blockThen(command, then, signal),
    close() {
      closed = true;
      pool.close(); // close() rejects pending blocking calls at once ("Connection closed")
      if (ownsMain) main.close();
      return Promise.resolve();
    },
  };
  return adapterTransport(adapter);
}

/**
 * Maps a Bun failure. Bun rejects the commands it had sent with "Connection
 * closed" when a connection drops: those may have run. Its other connection
 * errors ("Connection has failed", "Max reconnection attempts reached", an
 * offline queue that is off) concern commands that were never sent.
 */
function mapError(command: string, error: unknown): TransportError {
  const { code, message = String(error) } = (error ?? {}) as { code?: string; message?: string };
  if (typeof code === "string" && code.startsWith("ERR_REDIS_CONNECTION")) {
    if (message === "Connection closed") {
      return new TransportError(
        "connection",
        `Cannot know whether Redis ran ${command.toUpperCase()} as the connection closed before its reply came`,
        { cause: error, maybeApplied: true },
      );
    }
    return new TransportError("connection", `Cannot reach Redis: ${message}`, { cause: error, maybeApplied: false });
  }
  return toTransportError(error, /refused/i.test(message) ? { maybeApplied: false } : {});
}
