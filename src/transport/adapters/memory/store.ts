/**
 * The memory store: one keyspace and the command table, run synchronously.
 * Replies are RESP2-shaped (strings, integers, null, arrays); failures throw
 * `ReplyError` with Redis's wording.
 *
 * @module
 */
import type { RedisArg, RedisReply } from "../../transport.ts";
import { ReplyError } from "./command_args.ts";
import { bitfieldCommands } from "./bitfield_commands.ts";
import { hashCommands } from "./hash_commands.ts";
import { keyCommands } from "./key_commands.ts";
import { type CommandTable, Keyspace } from "./keyspace.ts";
import { listCommands } from "./list_commands.ts";
import { serverCommands } from "./server_commands.ts";
import { setCommands } from "./set_commands.ts";
import { streamCommands } from "./stream_commands.ts";
import { stringCommands } from "./string_commands.ts";
import { zsetCommands } from "./zset_commands.ts";

const table: CommandTable = {
  ...serverCommands,
  ...keyCommands,
  ...stringCommands,
  ...listCommands,
  ...setCommands,
  ...zsetCommands,
  ...hashCommands,
  ...bitfieldCommands,
  ...streamCommands,
};

/**
 * A memory database and its command interpreter.
 *
 * @example
 * ```ts
 * const store = new Store();
 * store.exec("LPUSH", ["q", "job"]); // 1
 * ```
 */
export class Store {
  /** The data; the transport reads `pushed` from it to wake blocked pops. */
  readonly db: Keyspace = new Keyspace();

  /** Runs one command (any case) and returns its reply; throws `ReplyError`. */
  exec(name: string, args: readonly RedisArg[]): RedisReply {
    const problem = this.check(name, args);
    if (problem) throw new ReplyError(problem);
    this.db.commands++;
    return table[name.toUpperCase()][1](this.db, args.map(String));
  }

  /**
   * The error Redis gives before running a command (unknown name, wrong
   * arity), or undefined. MULTI refuses to queue these, so they abort EXEC.
   */
  check(name: string, args: readonly RedisArg[]): string | undefined {
    const spec = table[name.toUpperCase()];
    if (!spec) {
      const shown = args.slice(0, 20).map((x) => `'${String(x).slice(0, 128)}' `).join("");
      return `ERR unknown command '${name}', with args beginning with: ${shown}`;
    }
    const arity = spec[0], count = args.length + 1;
    if (arity > 0 ? count !== arity : count < -arity) {
      return `ERR wrong number of arguments for '${name.toLowerCase()}' command`;
    }
    return undefined;
  }

  /** Whether `key` holds a non-empty list (no WRONGTYPE: serving blocked pops skips other types). */
  hasItems(key: string): boolean {
    const e = this.db.get(key);
    return e?.type === "list" && e.value.length > 0;
  }
}
