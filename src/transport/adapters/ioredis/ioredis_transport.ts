/**
 * The ioredis transport: TCP Redis on Node, Bun and Deno.
 *
 * Ordinary commands share one connection (ioredis pipelines concurrent
 * commands on it); a pipeline or MULTI block is sent as plain commands on
 * it, not through ioredis's `Pipeline` (`sendBatch` says why). Blocking pops take dedicated connections from a pool
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
import { ConfigError } from "../../../errors.ts";
import { type Adapter, adapterTransport } from "../../adapter.ts";
import { newCounters, type Transport } from "../../transport.ts";
import { blockingPool, rejectLostReplies, send, sendBatch, watchFailures } from "./connection.ts";

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
  if (main !== given) watchFailures(main);
  rejectLostReplies(main);
  const counters = newCounters();

  // No reconnects on a dedicated connection; CLIENT ID is sent before it is ready (hence the offline queue).
  const pool = blockingPool(
    () => main.duplicate({ retryStrategy: () => null, autoResendUnfulfilledCommands: false, enableOfflineQueue: true }),
    main,
    counters,
  );

  const adapter: Adapter = {
    kind: "ioredis",
    endpoint: endpointOf(main),
    // Everything but blocking pops goes over one connection, in call order.
    ordered: true,
    counters,
    send: (command) => send(main, command),
    batch: (commands, atomic) => sendBatch(main, commands, atomic),
    block: (command, signal) => pool.block(command, signal),
    blockThen: (command, then, signal) => pool.blockThen(command, then, signal),
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

/** The server a client connects to, as a URL with the password masked (ioredis parsed any URL into its options). */
function endpointOf(conn: Redis): string {
  const { host, port, path, db, username, password, tls } = conn.options;
  if (path) return `unix://${path}${db ? `?db=${db}` : ""}`;
  const user = username ? encodeURIComponent(username) : "";
  const auth = password ? `${user}:***@` : user ? `${user}@` : "";
  const name = host ?? "127.0.0.1";
  return `${tls ? "rediss" : "redis"}://${auth}${name.includes(":") ? `[${name}]` : name}:${port ?? 6379}/${db ?? 0}`;
}
