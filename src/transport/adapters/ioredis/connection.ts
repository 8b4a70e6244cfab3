/**
 * What every ioredis-based transport (single node and cluster) does to one
 * ioredis connection: lost replies rejected as "maybe applied" instead of
 * hanging or being resent, connection failures remembered so an error can
 * say why, and ioredis errors mapped to `TransportError`s.
 *
 * @module
 */
import type { Redis } from "ioredis";
import { ConfigError } from "../../../errors.ts";
import { toTransportError, TransportError } from "../../transport_error.ts";
import { toReply } from "../../reply.ts";
import { ConnectionPool, type DedicatedConnection } from "../../pool.ts";
import { type Command, countTrip, type RedisReply, type TransportCounters } from "../../transport.ts";

/**
 * The last connection failure each client reported ("connect ECONNREFUSED
 * 127.0.0.1:6480", "getaddrinfo ENOTFOUND redis.internal"). ioredis fails a
 * command it gave up on with "Reached the max retries per request limit",
 * which does not say why; this does.
 */
const lastFailure = new WeakMap<Redis, Error>();

/** Listens for a client's connection failures (and, as a listener, keeps ioredis from printing each one). */
export function watchFailures(conn: Redis): void {
  conn.on("error", (error: unknown) => {
    if (error instanceof Error) lastFailure.set(conn, error);
  });
  conn.on("ready", () => lastFailure.delete(conn));
}

export async function send(conn: Redis, [name, ...args]: Command): Promise<RedisReply> {
  try {
    return toReply(await conn.call(name, ...args));
  } catch (error) {
    throw mapError(error, conn);
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
export function rejectLostReplies(conn: Redis): void {
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
 * (MaxRetriesPerRequestError), a closed client, a refused connection. A
 * "gave up" error names the server and the failure behind it (`cause`), so
 * an operator reads ECONNREFUSED or ENOTFOUND rather than a retry count.
 */
export function mapError(error: unknown, conn: Redis): TransportError {
  if (error instanceof TransportError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.name === "MaxRetriesPerRequestError") {
    const failure = lastFailure.get(conn);
    const { host, port, path } = conn.options;
    const where = path ? path : `${host ?? "127.0.0.1"}:${port ?? 6379}`;
    return new TransportError(
      "connection",
      failure
        ? `Cannot reach Redis at ${where}: ${failure.message} (gave up after ${
          conn.options.maxRetriesPerRequest ?? 1
        } reconnect attempt(s))`
        : `Cannot reach Redis at ${where}: ${message}`,
      { cause: failure ?? error, maybeApplied: false },
    );
  }
  const unsent = /Connection is closed|Stream isn't writeable|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(message);
  return toTransportError(error, unsent ? { maybeApplied: false } : {});
}

/**
 * The pool of dedicated connections blocking calls run on, for one Redis
 * node: each opened by `open()` (no reconnects: a dropped one is replaced,
 * since its CLIENT ID would change), each unblocked from `control` (a
 * connection that is not blocked) with CLIENT UNBLOCK.
 *
 * @example
 * ```ts
 * const pool = blockingPool(() => main.duplicate({ retryStrategy: () => null }), main, counters);
 * await pool.block(["BRPOP", "queue:default", "2"], signal);
 * ```
 */
export function blockingPool(open: () => Redis, control: Redis, counters: TransportCounters): ConnectionPool {
  return new ConnectionPool({
    async open(): Promise<DedicatedConnection> {
      const conn = open();
      watchFailures(conn);
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
        throw mapError(error, conn);
      }
    },
    unblock(id) {
      countTrip(counters, 1);
      return control.call("CLIENT", "UNBLOCK", id);
    },
  });
}
