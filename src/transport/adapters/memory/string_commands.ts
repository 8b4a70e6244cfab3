/**
 * String commands: GET, SET (NX, XX, EX, PX, EXAT, PXAT, KEEPTTL, GET), MGET,
 * MSET, INCR, INCRBY, DECR, DECRBY.
 *
 * @module
 */
import { int, ReplyError, SYNTAX, WRONGTYPE } from "./command_args.ts";
import type { CommandTable, Keyspace } from "./keyspace.ts";

function incr(db: Keyspace, key: string, by: number): number {
  const e = db.get(key);
  if (e && e.type !== "string") throw new ReplyError(WRONGTYPE);
  const next = (e ? int(e.value) : 0) + by;
  if (!Number.isSafeInteger(next)) throw new ReplyError("ERR increment or decrement would overflow");
  // INCR keeps the key's TTL, as Redis does.
  if (e) e.value = String(next);
  else db.setString(key, String(next));
  return next;
}

function set(db: Keyspace, a: string[]): string | null {
  let nx = false, xx = false, get = false, keepTtl = false, expiresAt: number | undefined;
  for (let i = 2; i < a.length; i++) {
    const o = a[i].toUpperCase();
    if (o === "NX" && !xx) nx = true;
    else if (o === "XX" && !nx) xx = true;
    else if (o === "GET") get = true;
    else if (o === "KEEPTTL" && expiresAt === undefined) keepTtl = true;
    else if ((o === "EX" || o === "PX" || o === "EXAT" || o === "PXAT") && !keepTtl && expiresAt === undefined) {
      if (i + 1 >= a.length) throw new ReplyError(SYNTAX);
      const n = int(a[++i]);
      if (n <= 0) throw new ReplyError("ERR invalid expire time in 'set' command");
      expiresAt = o === "EX" ? Date.now() + n * 1000 : o === "PX" ? Date.now() + n : o === "EXAT" ? n * 1000 : n;
    } else throw new ReplyError(SYNTAX);
  }
  const e = db.get(a[0]);
  if (get && e && e.type !== "string") throw new ReplyError(WRONGTYPE);
  const old = e?.type === "string" ? e.value : null;
  if ((nx && e) || (xx && !e)) return get ? old : null;
  db.setString(a[0], a[1], keepTtl ? e?.expiresAt : expiresAt);
  return get ? old : "OK";
}

/**
 * The string commands.
 *
 * @example
 * ```ts
 * const [arity, run] = stringCommands.GET;
 * run(db, ["key"]);
 * ```
 */
export const stringCommands: CommandTable = {
  GET: [2, (db, a) => db.typed(a[0], "string") ?? null],
  SET: [-3, set],
  // MGET answers nil for a key of another type rather than failing.
  MGET: [-2, (db, a) =>
    a.map((k) => {
      const e = db.get(k);
      return e?.type === "string" ? e.value : null;
    })],
  MSET: [-3, (db, a) => {
    if (a.length % 2 !== 0) throw new ReplyError("ERR wrong number of arguments for 'mset' command");
    for (let i = 0; i < a.length; i += 2) db.setString(a[i], a[i + 1]);
    return "OK";
  }],
  INCR: [2, (db, a) => incr(db, a[0], 1)],
  DECR: [2, (db, a) => incr(db, a[0], -1)],
  INCRBY: [3, (db, a) => incr(db, a[0], int(a[1]))],
  DECRBY: [3, (db, a) => incr(db, a[0], -int(a[1]))],
};
