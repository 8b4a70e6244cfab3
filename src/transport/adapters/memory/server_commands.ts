/**
 * Connection and server commands: PING, ECHO, TIME, INFO, SCRIPT (LOAD,
 * EXISTS, FLUSH), and EVAL/EVALSHA, which the memory transport refuses: it
 * has no Lua, and runs each script's JavaScript twin through
 * `transport.script()` instead.
 *
 * @module
 */
import { ReplyError } from "./command_args.ts";
import type { CommandTable, Keyspace } from "./keyspace.ts";
import { sha1Hex } from "./sha1.ts";

function info(db: Keyspace): string {
  const lines = [
    "# Server",
    "redis_version:7.2.0",
    "redis_mode:standalone",
    "edgekiq_transport:memory",
    "",
    "# Clients",
    "connected_clients:1",
    "",
    "# Memory",
    "maxmemory_policy:noeviction",
    "maxmemory:0",
    "",
    "# Stats",
    `total_commands_processed:${db.commands}`,
    "",
    "# Keyspace",
    `db0:keys=${db.keys().length},expires=0,avg_ttl=0`,
  ];
  return lines.join("\r\n") + "\r\n";
}

const NO_LUA = "ERR the memory transport has no Lua: run scripts with transport.script(), which runs their twin";

/**
 * The connection and server commands.
 *
 * @example
 * ```ts
 * const [, ping] = serverCommands.PING;
 * ping(db, []); // "PONG"
 * ```
 */
export const serverCommands: CommandTable = {
  PING: [-1, (_db, a) => {
    if (a.length > 1) throw new ReplyError("ERR wrong number of arguments for 'ping' command");
    return a[0] ?? "PONG";
  }],
  ECHO: [2, (_db, a) => a[0]],
  TIME: [1, () => {
    const ms = Date.now();
    return [String(Math.floor(ms / 1000)), String((ms % 1000) * 1000)];
  }],
  INFO: [-1, (db) => info(db)],
  SCRIPT: [-2, (db, a) => {
    const sub = a[0].toUpperCase();
    if (sub === "FLUSH") return db.scripts.clear(), "OK";
    if (sub === "EXISTS" && a.length > 1) return a.slice(1).map((sha) => (db.scripts.has(sha.toLowerCase()) ? 1 : 0));
    if (sub === "LOAD" && a.length === 2) {
      const sha = sha1Hex(a[1]);
      db.scripts.add(sha);
      return sha;
    }
    throw new ReplyError(`ERR unknown subcommand or wrong number of arguments for '${a[0]}'. Try SCRIPT HELP.`);
  }],
  EVAL: [-3, () => {
    throw new ReplyError(NO_LUA);
  }],
  EVALSHA: [-3, () => {
    throw new ReplyError(NO_LUA);
  }],
};
