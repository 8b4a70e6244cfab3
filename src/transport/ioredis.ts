/**
 * The ioredis transport: TCP Redis on Node, Bun and Deno.
 *
 * Ordinary commands share one connection (ioredis pipelines concurrent
 * commands on it). Blocking pops take dedicated connections from a pool
 * (`pool.ts`), so a worker waiting on BLMOVE never stalls its own heartbeat
 * or acks.
 *
 * No blind resends: ioredis would send every unanswered command again after
 * a reconnect (`autoResendUnfulfilledCommands`), running a lost push or fetch
 * twice. That is turned off, and since ioredis then silently drops those
 * commands (their promises never settle), the transport rejects them itself
 * when the connection closes, as "connection" errors with `maybeApplied`.
 *
 * @module
 */
import { Redis, type RedisOptions } from "ioredis";
import { ConfigError, toTransportError, TransportError } from "../errors.ts";
import { type Adapter, adapterTransport } from "./adapter.ts";
import { ConnectionPool, type DedicatedConnection } from "./pool.ts";
import { pipelineReplies, toReply } from "./reply.ts";
import { type Command, countTrip, newCounters, type RedisReply, type Transport } from "./transport.ts";

/** Options for {@link ioredisTransport}. */
export interface IoredisTransportOptions {
  /** `redis://` or `rediss://` URL; default `redis://127.0.0.1:6379`. */
  url?: string;
  /**
   * Use this client instead of connecting. A RESP2 client (`protocol: 2`)
   * created with `autoResendUnfulfilledCommands: false` is used as is; any
   * other (ioredis 6 speaks RESP3 and resends by default) is duplicated with
   * those settings. `close()` leaves it open unless `owned` is true; the
   * connections the transport duplicated from it are always closed.
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
    autoResendUnfulfilledCommands: false,
    ...options.redisOptions,
  };
  if (base.protocol !== 2) {
    throw new ConfigError("Cannot use ioredis transport with RESP3: leave 'protocol' at 2");
  }
  if (base.autoResendUnfulfilledCommands !== false) {
    throw new ConfigError(
      "Cannot use ioredis transport with 'autoResendUnfulfilledCommands': it would run a command whose reply was lost twice",
    );
  }
  const given = options.client;
  const usable = given && given.options.protocol === 2 && given.options.autoResendUnfulfilledCommands === false;
  const main = given
    ? (usable ? given : given.duplicate({
      protocol: 2,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: base.maxRetriesPerRequest,
    }))
    : new Redis(options.url ?? "redis://127.0.0.1:6379", base);
  const ownsMain = !given || !usable || options.owned === true;
  // Connection failures surface through the commands that hit them; without a
  // listener ioredis would also print every reconnect failure to stderr.
  if (main !== given) main.on("error", noop);
  rejectLostReplies(main);
  const counters = newCounters();

  const pool = new ConnectionPool({
    async open(): Promise<DedicatedConnection> {
      // No reconnects: a dropped dedicated connection is replaced, since its
      // CLIENT ID would change.
      const conn = main.duplicate({
        retryStrategy: () => null,
        autoResendUnfulfilledCommands: false,
        enableOfflineQueue: true, // CLIENT ID is sent before the connection is ready
      });
      conn.on("error", noop);
      rejectLostReplies(conn);
      try {
        const id = Number(await conn.call("CLIENT", "ID"));
        return {
          id,
          send: (command) => send(conn, command),
          isOpen: () => conn.status === "ready",
          close: () => conn.disconnect(),
        };
      } catch (error) {
        conn.disconnect();
        throw mapError(error);
      }
    },
    unblock(id) {
      countTrip(counters, 1);
      return main.call("CLIENT", "UNBLOCK", id);
    },
  });

  const adapter: Adapter = {
    kind: "ioredis",
    // Everything but blocking pops goes over one connection, in call order.
    ordered: true,
    counters,
    send: (command) => send(main, command),
    async batch(commands, atomic) {
      const batch = atomic ? main.multi() : main.pipeline();
      for (const [name, ...args] of commands) batch.call(name, ...args);
      let results: [Error | null, unknown][] | null;
      try {
        // A command Redis refuses to queue makes EXEC reject with EXECABORT
        // (its reasons in `previousErrors`, which toTransportError reads).
        results = await batch.exec();
      } catch (error) {
        throw mapError(error);
      }
      if (!results) throw toTransportError(new Error("EXECABORT Transaction discarded"), { maybeApplied: false });
      return pipelineReplies(results.map(([error, value]) => (error ? { error: mapError(error) } : { value })));
    },
    block: (command, signal) => pool.block(command, signal),
    async close() {
      pool.close(); // disconnect() rejects pending blocking calls at once
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
  return adapterTransport(adapter);
}

async function send(conn: Redis, [name, ...args]: Command): Promise<RedisReply> {
  try {
    return toReply(await conn.call(name, ...args));
  } catch (error) {
    throw mapError(error);
  }
}

/** The part of ioredis's internals the lost-reply rule needs. */
interface CommandQueue {
  toArray(): { command: { name: string; reject(error: Error): void } }[];
}

/**
 * With `autoResendUnfulfilledCommands: false`, ioredis forgets the commands
 * that were written to a connection which then closed: their promises never
 * settle. When the connection closes (ioredis emits "close" before it moves
 * them aside), reject each with a "connection" error that says it may have
 * been applied. Commands still in the offline queue were never sent: ioredis
 * sends them after the reconnect (a first send, not a resend) or fails them.
 */
function rejectLostReplies(conn: Redis): void {
  const queue = () => (conn as unknown as { commandQueue?: Partial<CommandQueue> }).commandQueue;
  if (typeof queue()?.toArray !== "function") {
    throw new ConfigError("Cannot use this ioredis version: its command queue is not where edgekiq looks for it");
  }
  conn.on("close", () => {
    for (const { command } of (queue() as CommandQueue).toArray()) {
      command.reject(
        new TransportError(
          "connection",
          `Cannot know whether Redis ran ${command.name.toUpperCase()} as the connection closed before its reply came`,
          { maybeApplied: true },
        ),
      );
    }
  });
}

/**
 * Maps an ioredis failure. Commands written to a connection that closed are
 * rejected by {@link rejectLostReplies} first, so the client's own connection
 * errors concern commands that were never sent: "gave up reconnecting"
 * (MaxRetriesPerRequestError), a closed client, a refused connection.
 */
function mapError(error: unknown): TransportError {
  if (error instanceof TransportError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.name === "MaxRetriesPerRequestError") {
    return new TransportError("connection", `Cannot reach Redis: ${message}`, { cause: error, maybeApplied: false });
  }
  const unsent = /Connection is closed|Stream isn't writeable|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(message);
  return toTransportError(error, unsent ? { maybeApplied: false } : {});
}
