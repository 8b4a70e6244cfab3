/**
 * Keyspace commands: TYPE, EXISTS, DEL, UNLINK, RENAME, EXPIRE, PEXPIRE (NX,
 * XX, GT, LT), TTL, PTTL, PERSIST, KEYS, SCAN (MATCH, COUNT, TYPE), DBSIZE,
 * FLUSHDB, FLUSHALL.
 *
 * @module
 */
import { glob, int, ReplyError } from "./command_args.ts";
import type { CommandTable, Keyspace } from "./keyspace.ts";
import { scanOptions } from "./scan.ts";

function expire(db: Keyspace, a: string[], unitMs: number): number {
  const at = Date.now() + int(a[1]) * unitMs;
  let flag: string | undefined;
  for (const o of a.slice(2).map((x) => x.toUpperCase())) {
    if (!["NX", "XX", "GT", "LT"].includes(o)) throw new ReplyError(`ERR Unsupported option ${o}`);
    if (flag && flag !== o) {
      throw new ReplyError(
        (flag === "GT" || flag === "LT") && (o === "GT" || o === "LT")
          ? "ERR GT and LT options at the same time are not compatible"
          : "ERR NX and XX, GT or LT options at the same time are not compatible",
      );
    }
    flag = o;
  }
  const e = db.get(a[0]);
  if (!e) return 0;
  const current = e.expiresAt; // undefined is an infinite TTL
  if (flag === "NX" && current !== undefined) return 0;
  if (flag === "XX" && current === undefined) return 0;
  if (flag === "GT" && (current === undefined || at <= current)) return 0;
  if (flag === "LT" && current !== undefined && at >= current) return 0;
  // A deadline already past deletes the key now, as Redis does.
  if (at <= Date.now()) db.delete(a[0]);
  else e.expiresAt = at;
  return 1;
}

function ttl(db: Keyspace, key: string, ms: boolean): number {
  const e = db.get(key);
  if (!e) return -2;
  if (e.expiresAt === undefined) return -1;
  const left = Math.max(0, e.expiresAt - Date.now());
  return ms ? left : Math.floor((left + 500) / 1000);
}

function flush(db: Keyspace, a: string[]): string {
  if (a.length > 1 || (a.length === 1 && !["ASYNC", "SYNC"].includes(a[0].toUpperCase()))) {
    throw new ReplyError("ERR syntax error");
  }
  db.clear();
  return "OK";
}

/**
 * The keyspace commands.
 *
 * @example
 * ```ts
 * const [, exists] = keyCommands.EXISTS;
 * exists(db, ["a", "b"]); // how many of them exist
 * ```
 */
export const keyCommands: CommandTable = {
  TYPE: [2, (db, a) => db.get(a[0])?.type ?? "none"],
  // Repeated keys count each time, as in Redis.
  EXISTS: [-2, (db, a) => a.filter((k) => db.get(k)).length],
  DEL: [-2, (db, a) => a.filter((k) => db.delete(k)).length],
  UNLINK: [-2, (db, a) => a.filter((k) => db.delete(k)).length],
  RENAME: [3, (db, a) => {
    if (!db.rename(a[0], a[1])) throw new ReplyError("ERR no such key");
    return "OK";
  }],
  EXPIRE: [-3, (db, a) => expire(db, a, 1000)],
  PEXPIRE: [-3, (db, a) => expire(db, a, 1)],
  TTL: [2, (db, a) => ttl(db, a[0], false)],
  PTTL: [2, (db, a) => ttl(db, a[0], true)],
  PERSIST: [2, (db, a) => {
    const e = db.get(a[0]);
    if (!e || e.expiresAt === undefined) return 0;
    e.expiresAt = undefined;
    return 1;
  }],
  KEYS: [2, (db, a) => {
    const re = glob(a[0]);
    return db.keys().filter((k) => re.test(k));
  }],
  SCAN: [-2, (db, a) => {
    const { match, type } = scanOptions(a, 0, true);
    if (a[0] !== "0") return ["0", []];
    const out = db.keys().filter((k) => (!match || match.test(k)) && (!type || db.get(k)?.type === type));
    return ["0", out];
  }],
  DBSIZE: [1, (db) => db.keys().length],
  FLUSHDB: [-1, flush],
  FLUSHALL: [-1, flush],
};
