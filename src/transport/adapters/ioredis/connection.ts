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

/**
 * Sends a pipeline, or a MULTI block when `atomic`, as plain commands written
 * to the socket in one go (corked while they are queued), and returns their
 * replies; throws the first failure (as `pipelineReplies` does for the
 * other adapters).
 *
 * Not ioredis's `pipeline()`/`multi()`: each of those defines a `length`
 * getter with a fresh closure on the instance, which gives every pipeline a
 * hidden class of its own in V8's old space, and that class keeps the
 * pipeline, its commands and their arguments alive through every
 * young-generation GC. Each batch was promoted and freed only by a full GC:
 * on an idle worker, scavenges of 2-7 ms every 70 ms, which was the p99 of
 * its push-to-start latency (docs/performance.md, cliff 6).
 *
 * Commands issued in one synchronous stretch go out in order on the one
 * connection (or wait in its offline queue in order), so nothing else can
 * land inside the MULTI block.
 */
export async function sendBatch(conn: Redis, commands: readonly Command[], atomic: boolean): Promise<RedisReply[]> {
  const sent: Promise<unknown>[] = [];
  corked(conn, () => {
    if (atomic) sent.push(conn.call("MULTI"));
    for (const [name, ...args] of commands) sent.push(conn.call(name, ...args));
    if (atomic) sent.push(conn.call("EXEC"));
  });
  const settled = await Promise.allSettled(sent);
  if (!atomic) {
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) throw mapError((failed as PromiseRejectedResult).reason, conn);
    return settled.map((s) => toReply((s as PromiseFulfilledResult<unknown>).value));
  }
  const exec = settled[settled.length - 1];
  if (exec.status === "rejected") {
    // Redis refused the block (EXECABORT): carry the refusals that caused it (the shape toTransportError reads).
    // A lost connection rejects every command alike: its first error says it.
    const refusals = settled.slice(1, -1).flatMap((s) => (s.status === "rejected" ? [s.reason] : []));
    const first = settled.find((s) => s.status === "rejected") as PromiseRejectedResult;
    const reason = refusals.length > 0 && !(exec.reason instanceof TransportError)
      ? Object.assign(exec.reason as Error, { previousErrors: refusals })
      : first.reason;
    throw mapError(reason, conn);
  }
  const replies = exec.value;
  if (!Array.isArray(replies)) {
    throw toTransportError(new Error("EXECABORT Transaction discarded"), { maybeApplied: false });
  }
  const failure = replies.find((r) => r instanceof Error);
  if (failure) throw mapError(failure, conn);
  return replies.map(toReply);
}

/**
 * Runs `fn`, holding the socket's writes until it returns, so the commands it
 * issues go out in one write. Corked only while connected: before that the
 * commands wait in ioredis's offline queue, not in the socket.
 */
function corked<T>(conn: Redis, fn: () => T): T {
  const socket = conn.status === "ready" ? (conn.stream as Partial<Corkable> | undefined) : undefined;
  const cork = typeof socket?.cork === "function" && typeof socket.uncork === "function";
  if (cork) socket!.cork!();
  try {
    return fn();
  } finally {
    if (cork) socket!.uncork!();
  }
}

/** A socket's write buffering: `cork()` holds writes, `uncork()` sends them as one. */
interface Corkable {
  cork(): void;
  uncork(): void;
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
          corked: (fn) => corked(conn, fn),
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
