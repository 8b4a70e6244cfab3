/**
 * The values that cross the transport: command arguments, replies and
 * commands. Their own module because both the Transport contract and the
 * script runner use them (and the contract names scripts).
 *
 * @module
 */

/** An argument to a Redis command. Numbers are sent as their decimal text. */
export type RedisArg = string | number;

/**
 * A normalised Redis reply: bulk and simple strings stay strings (never
 * JSON-decoded), integers are numbers, nil is `null`, arrays nest.
 */
export type RedisReply = string | number | null | RedisReply[];

/** One command for a pipeline: its name, then its arguments. */
export type Command = readonly [name: string, ...args: RedisArg[]];
