/**
 * The abstract Redis transport: the only thing the core knows about Redis.
 * Adapters (`memory`, `ioredis`, `bun`, `upstash`) implement it in a few
 * hundred lines each.
 *
 * @module
 */
import type { Script } from "./script.ts";

/** An argument to a Redis command. Numbers are sent as their decimal text. */
export type RedisArg = string | number;

/**
 * A normalised Redis reply: bulk and simple strings stay strings (never
 * JSON-decoded), integers are numbers, nil is `null`, arrays nest.
 */
export type RedisReply = string | number | null | RedisReply[];

/**
 * Redis's blocking commands. TCP adapters give each its own connection (the
 * server parks it); HTTP adapters refuse them.
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

/** One command for a pipeline: its name, then its arguments. */
export type Command = readonly [name: string, ...args: RedisArg[]];

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
  /** Running totals of commands and round trips. */
  readonly counters: TransportCounters;
  /** Sends one command. Rejects with a `TransportError`. */
  call(command: string, ...args: RedisArg[]): Promise<RedisReply>;
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
