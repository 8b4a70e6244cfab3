/**
 * The abstract Redis transport: the only thing the core knows about Redis.
 * Adapters (`memory`, `ioredis`, `bun`, `upstash`) implement it; the three
 * network ones are thin layers over one request core (`adapter.ts`).
 *
 * ## Lost replies and retries
 *
 * Any request can lose its reply: the connection drops after Redis ran the
 * command but before the answer came back. Sending it again would run a write
 * twice (a push stored twice, a fetch taking a second batch), so the rule is:
 *
 * - A transport never resends a request on its own unless the request is
 *   idempotent: every command in it is in {@link IDEMPOTENT_COMMANDS} (all
 *   of a pipeline's, atomic or not), or it is a script declared with
 *   `idempotent: true`.
 * - An idempotent request is retried at most once, only after a "connection"
 *   error whose request may have reached Redis, and only once the client has
 *   reconnected (the resend waits in the client's queue). A request that
 *   certainly never reached Redis is not retried: the client already tried
 *   to reconnect before giving up on it.
 * - Anything else rejects with a `TransportError` of kind "connection" whose
 *   `maybeApplied` says whether Redis may have run it: true when it was sent
 *   and no reply came, false when it never left (refused connection, the
 *   client gave up before sending). The caller, who knows what the write
 *   means, decides how to find out or to make it safe to repeat.
 *
 * The underlying clients are configured to match: ioredis with
 * `autoResendUnfulfilledCommands: false` (and the commands it would then
 * leave pending forever rejected by the transport), Bun's `RedisClient`
 * rejects in-flight commands on a dropped connection by itself, and
 * `@upstash/redis` runs with its own retries off.
 *
 * @module
 */
import type { Script } from "./script.ts";
import type { Command, RedisArg, RedisReply } from "./redis_values.ts";

export type { Command, RedisArg, RedisReply } from "./redis_values.ts";

/**
 * Redis's blocking commands (XREAD and XREADGROUP block only with a BLOCK
 * option: {@link isBlockingCommand}). TCP adapters give each its own
 * connection (the server parks it); HTTP adapters refuse them.
 */
export const BLOCKING_COMMANDS: ReadonlySet<string> = new Set([
  "BRPOP",
  "BLPOP",
  "BLMOVE",
  "BRPOPLPUSH",
  "BZPOPMIN",
  "BZPOPMAX",
  "BLMPOP",
  "BZMPOP",
]);

/**
 * Whether a command blocks on the server: one of {@link BLOCKING_COMMANDS},
 * or XREAD / XREADGROUP with a BLOCK option. Such a command needs a
 * connection of its own (see {@link Transport.block}).
 *
 * @example
 * ```ts
 * isBlockingCommand(["XREAD", "BLOCK", 5000, "STREAMS", "events", "$"]); // true
 * isBlockingCommand(["XREAD", "STREAMS", "events", "0"]); // false
 * ```
 */
export function isBlockingCommand([name, ...args]: Command): boolean {
  const upper = name.toUpperCase();
  if (BLOCKING_COMMANDS.has(upper)) return true;
  if (upper !== "XREAD" && upper !== "XREADGROUP") return false;
  const streams = args.findIndex((a) => String(a).toUpperCase() === "STREAMS");
  return args.slice(0, streams < 0 ? args.length : streams).some((a) => String(a).toUpperCase() === "BLOCK");
}

/**
 * Commands a transport may send again after a lost reply: they only read, so
 * running one twice changes nothing. Two-word commands are listed as
 * `"SCRIPT EXISTS"`. See the module doc for the rule.
 */
export const IDEMPOTENT_COMMANDS: ReadonlySet<string> = new Set([
  "GET",
  "MGET",
  "STRLEN",
  "HGET",
  "HMGET",
  "HGETALL",
  "HLEN",
  "HEXISTS",
  "HKEYS",
  "HVALS",
  "LRANGE",
  "LLEN",
  "LINDEX",
  "LPOS",
  "ZRANGE",
  "ZRANGEBYSCORE",
  "ZREVRANGE",
  "ZREVRANGEBYSCORE",
  "ZCARD",
  "ZCOUNT",
  "ZSCORE",
  "ZMSCORE",
  "ZRANK",
  "ZREVRANK",
  "SCARD",
  "SMEMBERS",
  "SISMEMBER",
  "SMISMEMBER",
  "EXISTS",
  "TYPE",
  "TTL",
  "PTTL",
  "INFO",
  "PING",
  "ECHO",
  "TIME",
  "DBSIZE",
  "SCAN",
  "ZSCAN",
  "SSCAN",
  "HSCAN",
  "SCRIPT EXISTS",
  "CLIENT ID",
]);

/**
 * Whether every command of a request is read-only, so a transport may send
 * it again after a lost reply.
 *
 * @example
 * ```ts
 * isIdempotent([["GET", "k"], ["LLEN", "q"]]); // true
 * isIdempotent([["GET", "k"], ["LPUSH", "q", "x"]]); // false
 * ```
 */
export function isIdempotent(commands: readonly Command[]): boolean {
  return commands.every(([name, first]) => {
    const upper = name.toUpperCase();
    return IDEMPOTENT_COMMANDS.has(upper) ||
      (first !== undefined && IDEMPOTENT_COMMANDS.has(`${upper} ${String(first).toUpperCase()}`));
  });
}

/**
 * What a transport has sent so far. A pipeline of k commands counts k
 * commands and one round trip; a script counts one of each. These are the
 * figures Upstash bills and the benchmarks report.
 */
export interface TransportCounters {
  /** Commands sent (what Upstash bills). */
  commands: number;
  /** Network round trips (what latency costs). */
  roundTrips: number;
}

/** Options for {@link Transport.pipeline}. */
export interface PipelineOptions {
  /** Wrap the commands in MULTI/EXEC so they apply all-or-nothing. */
  atomic?: boolean;
}

/** Options for {@link Transport.block}. */
export interface BlockOptions {
  /** Aborts the wait: the call then resolves with `null`. */
  signal: AbortSignal;
}

/** A script to run, with its keys and arguments ({@link Transport.blockThen}). */
export interface ScriptCall<R> {
  /** The script. */
  readonly script: Script<R>;
  /** Its KEYS. */
  readonly keys: readonly string[];
  /** Its ARGV. */
  readonly args: readonly RedisArg[];
}

/** What {@link Transport.blockThen} answers. */
export interface BlockThenReplies<R> {
  /** The blocking command's reply, as {@link Transport.block} gives it (`null`: it timed out or was aborted). */
  readonly reply: RedisReply;
  /**
   * The script's result. Rejects as the script would (a `TransportError` whose
   * `maybeApplied` is false when it never ran: nothing was sent, say).
   */
  readonly after: Promise<R>;
}

/**
 * One primary's answer to a command sent to every primary of a cluster
 * ({@link Transport.eachPrimary}).
 *
 * @example
 * ```ts
 * for (const { node, reply, error } of await transport.eachPrimary!(["INFO"])) console.log(node, error ?? reply);
 * ```
 */
export interface PrimaryReply {
  /** The primary's address, `host:port`. */
  readonly node: string;
  /** Its reply; absent when it failed. */
  readonly reply?: RedisReply;
  /** Why it failed. */
  readonly error?: unknown;
}

/**
 * A connection to Redis, as the core sees it.
 *
 * @example
 * ```ts
 * import { memoryTransport } from "edgekiq";
 * const redis = memoryTransport();
 * await redis.call("LPUSH", "queue:default", "{}");
 * const [len] = await redis.pipeline([["LLEN", "queue:default"]]);
 * ```
 */
export interface Transport {
  /** A short name: `memory`, `ioredis`, `bun`, `upstash`. */
  readonly kind: string;
  /**
   * Whether blocking pops (BRPOP, BLMOVE) really block. True on TCP; false
   * over HTTP, where the fetcher polls with a back-off instead.
   */
  readonly blocking: boolean;
  /**
   * Whether calls made without waiting for one another reach Redis in the
   * order they were made (one connection, or applied at once). The client
   * then keeps two bulk-push batches on their way instead of one. Absent
   * means no such promise: HTTP requests and dedicated MULTI connections can
   * overtake each other.
   */
  readonly ordered?: boolean;
  /**
   * The key layout this Redis needs: `"cluster"` for a Redis Cluster, where
   * every key one script or MULTI touches must share a slot, so clients and
   * workers on it default to the hash-tagged layout (`keys.ts`). Absent means
   * Sidekiq's layout.
   */
  readonly keyspace?: "cluster";
  /** Running totals of commands and round trips. */
  readonly counters: TransportCounters;
  /**
   * Which Redis this is, for people to read (the dashboard's footer): a URL
   * with its credentials masked (`redis://:***@cache:6379/2`), never a
   * password or token. Optional: a transport that cannot say leaves it out.
   */
  readonly endpoint?: string;
  /**
   * Sends one command. Rejects with a `TransportError`. A blocking command
   * (see {@link isBlockingCommand}) runs as {@link Transport.block} would,
   * without a way to abort it.
   */
  call(command: string, ...args: RedisArg[]): Promise<RedisReply>;
  /**
   * Runs a blocking command (BLMOVE, BRPOP, BLMPOP, XREAD ... BLOCK...) on a
   * connection of its own, so the wait stalls nothing else. Resolves with
   * the reply, or `null` when it timed out or `signal` aborted it.
   *
   * When the promise settles the command is no longer pending on the server:
   * an aborted call can never move or pop anything afterwards. A reply that
   * arrived together with the abort (a push won the race) is returned, never
   * dropped, so the caller always learns what was taken. An abort before the
   * call starts resolves `null` without sending anything. TCP transports
   * abort with `CLIENT UNBLOCK` (the connection stays open and is reused);
   * HTTP transports (`blocking: false`) reject with a `TransportError`.
   */
  block(command: Command, options: BlockOptions): Promise<RedisReply>;
  /**
   * Runs a blocking command as {@link Transport.block} does, with a script
   * queued right behind it on the same connection: the server runs the
   * script the moment the wait ends (a push served it, it timed out, or an
   * abort unblocked it), with no round trip in between. A worker woken by
   * the first job of a burst takes the rest with it (one round trip where
   * two were). Resolves once both replies are in; a failure of the
   * blocking command rejects (the script may have run: treat both as maybe
   * applied). A NOSCRIPT is answered by an EVAL, which `after` then waits
   * for.
   *
   * Optional: TCP transports to one server have it, and a cluster's, which
   * runs both on the primary that serves the blocking command's key (the
   * script's keys must share its slot), unless its writes wait for replicas
   * (`durability: "replicated"`: nothing would wait after the script).
   * Elsewhere run {@link Transport.block}, then {@link Transport.script}.
   *
   * @example
   * ```ts
   * const { reply, after } = await transport.blockThen!(["BLMOVE", "queue:a", "landing", "RIGHT", "LEFT", 2],
   *   { script: ADOPT, keys: ["landing"], args: [] }, { signal });
   * const adopted = await after;
   * ```
   */
  blockThen?<R>(command: Command, then: ScriptCall<R>, options: BlockOptions): Promise<BlockThenReplies<R>>;
  /**
   * Sends many commands in one round trip; replies come back in order. If any
   * command fails the promise rejects with the first failure (the others
   * still ran, unless `atomic` and the failure aborted the transaction).
   */
  pipeline(commands: readonly Command[], options?: PipelineOptions): Promise<RedisReply[]>;
  /**
   * Runs a Lua script by EVALSHA; on NOSCRIPT it loads the script and retries
   * once. The memory transport runs the script's JavaScript twin instead.
   */
  script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R>;
  /**
   * A view of this transport (same connection, same counters) whose requests
   * give up when `signal` fires: a pending request then rejects with a
   * "connection" `TransportError` whose `maybeApplied` is true (it was sent),
   * and a request made after it fired rejects at once without being sent.
   * HTTP transports cancel the request itself; TCP transports stop waiting
   * for the reply; the memory transport, whose requests finish at once,
   * may return itself. `close()` on a view closes the shared connection.
   */
  withSignal?(signal: AbortSignal): Transport;
  /**
   * Sends a keyless command (`INFO`, say) to every primary of a Redis
   * Cluster, all at once, and answers each one's reply (or error) in
   * address order: what one node says is not the cluster's state (its
   * memory, its clients). Absent on a transport to one server.
   */
  eachPrimary?(command: Command): Promise<PrimaryReply[]>;
  /**
   * Closes every connection. Pending blocking calls settle at once: the TCP
   * adapters reject them, the memory transport answers them with `null`.
   */
  close(): Promise<void>;
}

/**
 * Creates a fresh counters object. Adapters share it so the counting rule
 * (pipeline of k = k commands, one trip) is the same everywhere.
 *
 * @example
 * ```ts
 * const counters = newCounters();
 * countTrip(counters, 3); // a pipeline of three
 * ```
 */
export function newCounters(): TransportCounters {
  return { commands: 0, roundTrips: 0 };
}

/**
 * Records one round trip carrying `commands` commands.
 *
 * @example
 * ```ts
 * countTrip(counters, 1);
 * ```
 */
export function countTrip(counters: TransportCounters, commands: number): void {
  counters.commands += commands;
  counters.roundTrips += 1;
}
