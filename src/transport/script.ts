/**
 * Lua scripts as typed constants. Each holds its Lua source, the names of its
 * KEYS and ARGV (the header every script documents), a JavaScript twin that
 * the memory transport runs instead of Lua, and a decoder for its reply.
 *
 * Every key a script touches must be passed in KEYS: Redis Cluster routes by
 * them and Upstash locks by them.
 *
 * @module
 */
import { TransportError } from "./transport_error.ts";
import type { RedisArg, RedisReply } from "./redis_values.ts";

/** The synchronous `redis.call` a script twin uses, like Lua's. */
export interface ScriptRedis {
  /** Runs one command against the in-memory data; throws on error. */
  call(command: string, ...args: RedisArg[]): RedisReply;
}

/** A script's JavaScript twin: same KEYS/ARGV (as strings), same reply. */
export type ScriptTwin = (redis: ScriptRedis, keys: string[], argv: string[]) => RedisReply;

/** A Lua script with its documentation, twin and reply decoder. */
export interface Script<R = RedisReply> {
  /** A short name for logs and errors. */
  readonly name: string;
  /** What each KEYS slot holds, in order; `...` marks a repeating tail. */
  readonly keys: readonly string[];
  /** What each ARGV slot holds, in order. */
  readonly argv: readonly string[];
  /** The Lua source. */
  readonly lua: string;
  /** The JavaScript twin for the memory transport. */
  readonly twin: ScriptTwin;
  /** Turns the raw reply into the script's typed result. */
  readonly decode: (reply: RedisReply) => R;
  /**
   * Whether running the script twice does no more than running it once, so a
   * transport may send it again after a lost reply (see `transport.ts`).
   * False unless declared.
   */
  readonly idempotent: boolean;
}

/**
 * Declares a script. The Lua source is prefixed with a header naming KEYS
 * and ARGV, so `SCRIPT` listings and slow logs are readable. Declare
 * `idempotent: true` only for a script whose second run changes nothing
 * (it reads, or writes what is already written): transports may then send it
 * again after a lost reply; any other script is never resent.
 *
 * @example
 * ```ts
 * const incrTwice = defineScript({
 *   name: "incrTwice", keys: ["counter"], argv: [],
 *   lua: `return redis.call("INCRBY", KEYS[1], 2)`,
 *   twin: (redis, keys) => redis.call("INCRBY", keys[0], 2),
 *   decode: (reply) => reply as number,
 * });
 * ```
 */
export function defineScript<R = RedisReply>(definition: {
  name: string;
  keys: readonly string[];
  argv: readonly string[];
  lua: string;
  twin: ScriptTwin;
  decode?: (reply: RedisReply) => R;
  idempotent?: boolean;
}): Script<R> {
  const header = `-- edgekiq:${definition.name}\n-- KEYS: ${definition.keys.join(", ")}\n-- ARGV: ${
    definition.argv.join(", ")
  }\n`;
  return {
    name: definition.name,
    keys: definition.keys,
    argv: definition.argv,
    lua: header + definition.lua.trim() + "\n",
    twin: definition.twin,
    decode: definition.decode ?? ((reply) => reply as R),
    idempotent: definition.idempotent ?? false,
  };
}

const shas = new WeakMap<Script<unknown>, Promise<string>>();

/**
 * The SHA-1 of a script's Lua source, as EVALSHA wants it. Computed once per
 * script with Web Crypto.
 *
 * @example
 * ```ts
 * const sha = await scriptSha(myScript);
 * ```
 */
export function scriptSha(script: Script<unknown>): Promise<string> {
  let sha = shas.get(script);
  if (!sha) {
    sha = crypto.subtle.digest("SHA-1", new TextEncoder().encode(script.lua)).then((buf) =>
      Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("")
    );
    shas.set(script, sha);
  }
  return sha;
}

/**
 * The script runner every network adapter shares: EVALSHA first; on NOSCRIPT
 * (a restarted or flushed server) EVAL once, which also caches the script
 * again. `send` must throw errors already mapped by `toTransportError`.
 *
 * @example
 * ```ts
 * const reply = await runScript((cmd, ...args) => transport.call(cmd, ...args), script, ["k"], []);
 * ```
 */
export async function runScript<R>(
  send: (command: string, ...args: RedisArg[]) => Promise<RedisReply>,
  script: Script<R>,
  keys: readonly string[],
  args: readonly RedisArg[],
): Promise<R> {
  const sha = await scriptSha(script);
  try {
    return script.decode(await send("EVALSHA", sha, keys.length, ...keys, ...args));
  } catch (error) {
    if (!(error instanceof TransportError) || error.kind !== "noscript") throw error;
    return script.decode(await send("EVAL", script.lua, keys.length, ...keys, ...args));
  }
}
