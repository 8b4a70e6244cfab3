/**
 * Hash commands. HGETALL replies flat (`[field, value, ...]`), as RESP2 does.
 *
 * @module
 */
import { int, ReplyError } from "./command_args.ts";
import type { CommandTable, Keyspace } from "./keyspace.ts";
import { scanReply } from "./scan.ts";

function hset(db: Keyspace, a: string[], name: string): number {
  if (a.length % 2 === 0) throw new ReplyError(`ERR wrong number of arguments for '${name}' command`);
  const h = db.create(a[0], "hash");
  const before = h.size;
  for (let i = 1; i < a.length; i += 2) h.set(a[i], a[i + 1]);
  return h.size - before;
}

/**
 * The hash commands.
 *
 * @example
 * ```ts
 * const [, hset] = hashCommands.HSET;
 * hset(db, ["h", "f", "v"]); // 1
 * ```
 */
export const hashCommands: CommandTable = {
  HSET: [-4, (db, a) => hset(db, a, "hset")],
  HMSET: [-4, (db, a) => (hset(db, a, "hmset"), "OK")],
  HSETNX: [4, (db, a) => {
    const h = db.create(a[0], "hash");
    if (h.has(a[1])) return 0;
    h.set(a[1], a[2]);
    return 1;
  }],
  HGET: [3, (db, a) => db.typed(a[0], "hash")?.get(a[1]) ?? null],
  HMGET: [-3, (db, a) => {
    const h = db.typed(a[0], "hash");
    return a.slice(1).map((f) => h?.get(f) ?? null);
  }],
  HGETALL: [2, (db, a) => {
    const out: string[] = [];
    for (const [f, v] of db.typed(a[0], "hash") ?? []) out.push(f, v);
    return out;
  }],
  HKEYS: [2, (db, a) => [...(db.typed(a[0], "hash")?.keys() ?? [])]],
  HVALS: [2, (db, a) => [...(db.typed(a[0], "hash")?.values() ?? [])]],
  HLEN: [2, (db, a) => db.typed(a[0], "hash")?.size ?? 0],
  HEXISTS: [3, (db, a) => (db.typed(a[0], "hash")?.has(a[1]) ? 1 : 0)],
  HDEL: [-3, (db, a) => {
    const h = db.typed(a[0], "hash");
    if (!h) return 0;
    let n = 0;
    for (let i = 1; i < a.length; i++) if (h.delete(a[i])) n++;
    db.tidy(a[0]);
    return n;
  }],
  HINCRBY: [4, (db, a) => {
    const by = int(a[2]);
    const h = db.create(a[0], "hash");
    const old = h.get(a[1]);
    // A new hash cannot fail here: only an existing field can be a non-integer.
    const current = old === undefined ? 0 : int(old, "ERR hash value is not an integer");
    const next = current + by;
    if (!Number.isSafeInteger(next)) throw new ReplyError("ERR increment or decrement would overflow");
    h.set(a[1], String(next));
    return next;
  }],
  HSCAN: [-3, (db, a) => {
    const h = db.typed(a[0], "hash");
    return scanReply(h?.keys() ?? [], a, 1, (f) => h!.get(f)!);
  }],
};
