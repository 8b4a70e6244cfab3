/**
 * The pool of dedicated connections a TCP adapter keeps beside its main one:
 * a blocking command parks its connection on the server, and a MULTI block
 * must not interleave with other callers' commands, so each borrows one.
 *
 * Every connection learns its `CLIENT ID` once, when it is made. Aborting a
 * blocking command sends `CLIENT UNBLOCK <id>` over the main connection
 * instead of disconnecting: a connection closed under a blocked BLMOVE can
 * still be served by a push before the server notices, moving a job whose
 * reply nobody reads. UNBLOCK answers it with a timeout (nil), so when the
 * call settles the server has finished with it, and the connection goes back
 * to the pool.
 *
 * @module
 */
import { TransportError } from "./transport_error.ts";
import type { Command, RedisReply } from "./transport.ts";

/** One dedicated connection, as an adapter makes it. */
export interface DedicatedConnection {
  /** The server's `CLIENT ID` for this connection. */
  readonly id: number;
  /** Sends one command; rejects with a `TransportError`. */
  send(command: Command): Promise<RedisReply>;
  /** Whether it is still connected (the server may have closed it while idle). */
  isOpen(): boolean;
  /** Closes the connection; pending commands reject. */
  close(): void;
  /**
   * Runs `fn` with the connection's writes held, then sends what it wrote as
   * one (a socket's cork). Optional: a client that pipelines the commands
   * issued in one tick by itself needs none.
   */
  corked?<T>(fn: () => T): T;
}

/** What {@link ConnectionPool} needs from its adapter. */
export interface ConnectionPoolOptions<C extends DedicatedConnection> {
  /** Opens a connection and learns its `CLIENT ID`; rejects with a `TransportError`. */
  open(): Promise<C>;
  /** Sends `CLIENT UNBLOCK <id>` over the main connection. */
  unblock(id: number): Promise<unknown>;
}

/** How often an abort repeats `CLIENT UNBLOCK` while the command may still be on its way. */
const UNBLOCK_EVERY_MS = 20;

/**
 * Dedicated connections for blocking commands and MULTI blocks, reused
 * while healthy. A connection whose command failed with a connection error
 * is closed and replaced, never reused (its `CLIENT ID` is stale after a
 * reconnect).
 *
 * @example
 * ```ts
 * const pool = new ConnectionPool({ open: openDedicated, unblock: (id) => main.call("CLIENT", "UNBLOCK", id) });
 * const job = await pool.block(["BLMOVE", "queue:a", "inflight", "RIGHT", "LEFT", 5], controller.signal);
 * pool.close();
 * ```
 */
export class ConnectionPool<C extends DedicatedConnection = DedicatedConnection> {
  #options: ConnectionPoolOptions<C>;
  #idle: C[] = [];
  #all = new Set<C>();
  #closed = false;

  constructor(options: ConnectionPoolOptions<C>) {
    this.#options = options;
  }

  /**
   * Runs `fn` on a connection of its own, then returns the connection to the
   * pool (or closes it after a connection error).
   */
  async use<T>(fn: (conn: C) => Promise<T>): Promise<T> {
    const conn = await this.#acquire();
    let healthy = true;
    try {
      return await fn(conn);
    } catch (error) {
      healthy = !(error instanceof TransportError && error.kind === "connection");
      throw error;
    } finally {
      this.#release(conn, healthy);
    }
  }

  /**
   * Runs a blocking command on a connection of its own. Resolves with its
   * reply, or `null` when it timed out or `signal` aborted it; once settled,
   * the command is over on the server. See the module doc.
   */
  async block(command: Command, signal: AbortSignal): Promise<RedisReply> {
    return (await this.#block(command, undefined, signal))[0];
  }

  /**
   * Runs a blocking command as {@link block} does, with `then` written right
   * behind it on the same connection: the server runs `then` once the wait
   * ends, however it ends, and the connection goes back to the pool once
   * both are answered. Resolves with the blocking command's reply and how
   * `then` settled; rejects when the blocking command failed (`then` may
   * have run). Aborted before anything was sent: `null`, and `then`
   * rejected as unsent.
   */
  async blockThen(
    command: Command,
    then: Command,
    signal: AbortSignal,
  ): Promise<[RedisReply, PromiseSettledResult<RedisReply>]> {
    const [reply, after] = await this.#block(command, then, signal);
    return [reply, after!];
  }

  async #block(
    command: Command,
    then: Command | undefined,
    signal: AbortSignal,
  ): Promise<[RedisReply, PromiseSettledResult<RedisReply> | undefined]> {
    const unsent = (): [null, PromiseSettledResult<RedisReply> | undefined] => [null, then && unsentBehind(then[0])];
    if (signal.aborted) return unsent();
    const conn = await this.#acquire();
    if (signal.aborted) {
      this.#release(conn, true);
      return unsent();
    }
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    let done = false;
    let unblocking: Promise<void> | undefined;
    const deadline = Date.now() + blockSeconds(command) * 1000;
    const onAbort = () => {
      unblocking = this.#unblock(conn.id, () => done, settled, deadline);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    let healthy = true;
    const unhealthy = (error: unknown) => {
      if (error instanceof TransportError && error.kind === "connection") healthy = false;
    };
    // Both written in one go (or one auto-pipelined tick), the blocking command first: the server reads `then`
    // while the client is blocked and runs it once the wait is over.
    const send = (): [Promise<RedisReply>, Promise<PromiseSettledResult<RedisReply>> | undefined] => [
      conn.send(command),
      then && conn.send(then).then(
        (value) => ({ status: "fulfilled", value }),
        (reason) => (unhealthy(reason), { status: "rejected", reason }),
      ),
    ];
    const [first, after] = then && conn.corked ? conn.corked(send) : send();
    try {
      const reply = await first;
      return [reply, after && await after];
    } catch (error) {
      unhealthy(error);
      // The connection is not handed back while `then` may still be answered on it.
      await after;
      throw error;
    } finally {
      done = true;
      settle();
      signal.removeEventListener("abort", onAbort);
      // An UNBLOCK still on its way must not reach the connection's next
      // borrower: hand it back once the last one has been answered.
      if (unblocking) void unblocking.then(() => this.#release(conn, healthy));
      else this.#release(conn, healthy);
    }
  }

  /** Closes every connection: pending commands on them reject at once. */
  close(): void {
    this.#closed = true;
    for (const conn of this.#all) conn.close();
    this.#all.clear();
    this.#idle.length = 0;
  }

  async #acquire(): Promise<C> {
    if (this.#closed) {
      throw new TransportError("connection", "Cannot use a dedicated connection as the transport is closed", {
        maybeApplied: false,
      });
    }
    for (let idle = this.#idle.pop(); idle; idle = this.#idle.pop()) {
      if (idle.isOpen()) return idle;
      this.#release(idle, false); // closed while idle (CLIENT KILL, a server restart): replace it
    }
    const conn = await this.#options.open();
    if (this.#closed) {
      conn.close();
      throw new TransportError("connection", "Cannot use a dedicated connection as the transport is closed", {
        maybeApplied: false,
      });
    }
    this.#all.add(conn);
    return conn;
  }

  #release(conn: C, healthy: boolean): void {
    if (this.#closed || !healthy) {
      conn.close();
      this.#all.delete(conn);
    } else {
      this.#idle.push(conn);
    }
  }

  /**
   * Repeats CLIENT UNBLOCK until the command settles: the first may arrive
   * before the command itself (still on the wire), when it finds nothing to
   * unblock. One at a time, so an outage cannot pile them up; bounded by the
   * command's own timeout, after which the server ends it anyway.
   */
  async #unblock(id: number, done: () => boolean, settled: Promise<void>, deadline: number): Promise<void> {
    while (!done() && Date.now() <= deadline) {
      await this.#options.unblock(id).catch(() => {});
      if (done()) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, UNBLOCK_EVERY_MS)))]);
      clearTimeout(timer);
    }
  }
}

/**
 * How a command written behind a blocking one settles when the wait was
 * aborted before anything was sent: rejected, never run.
 *
 * @example
 * ```ts
 * if (signal.aborted) return [null, unsentBehind("EVALSHA")];
 * ```
 */
export function unsentBehind(name: string): PromiseRejectedResult {
  return {
    status: "rejected",
    reason: new TransportError("connection", `Cannot send ${name} as the wait before it was aborted first`, {
      maybeApplied: false,
    }),
  };
}

/**
 * A blocking command's own timeout in seconds (where Redis reads it: first
 * for BLMPOP/BZMPOP, after BLOCK in milliseconds for XREAD/XREADGROUP, last
 * otherwise), plus a second of grace; `Infinity` for 0 (block forever) or
 * anything unreadable.
 */
function blockSeconds([name, ...args]: Command): number {
  const upper = name.toUpperCase();
  const block = args.findIndex((a) => String(a).toUpperCase() === "BLOCK");
  const raw = upper === "BLMPOP" || upper === "BZMPOP"
    ? args[0]
    : (upper === "XREAD" || upper === "XREADGROUP") && block >= 0
    ? Number(args[block + 1]) / 1000
    : args[args.length - 1];
  const seconds = Number(raw);
  return Number.isFinite(seconds) && seconds > 0 ? seconds + 1 : Infinity;
}
