/**
 * Set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SSCAN.
 *
 * @module
 */
import type { CommandTable } from "./keyspace.ts";
import { scanReply } from "./scan.ts";

/**
 * The set commands.
 *
 * @example
 * ```ts
 * const [, sadd] = setCommands.SADD;
 * sadd(db, ["processes", "host:1"]); // 1
 * ```
 */
export const setCommands: CommandTable = {
  SADD: [-3, (db, a) => {
    const set = db.create(a[0], "set");
    const before = set.size;
    for (let i = 1; i < a.length; i++) set.add(a[i]);
    return set.size - before;
  }],
  SREM: [-3, (db, a) => {
    const set = db.typed(a[0], "set");
    if (!set) return 0;
    let n = 0;
    for (let i = 1; i < a.length; i++) if (set.delete(a[i])) n++;
    db.tidy(a[0]);
    return n;
  }],
  SMEMBERS: [2, (db, a) => [...(db.typed(a[0], "set") ?? [])]],
  SISMEMBER: [3, (db, a) => (db.typed(a[0], "set")?.has(a[1]) ? 1 : 0)],
  SMISMEMBER: [-3, (db, a) => {
    const set = db.typed(a[0], "set");
    return a.slice(1).map((m) => (set?.has(m) ? 1 : 0));
  }],
  SCARD: [2, (db, a) => db.typed(a[0], "set")?.size ?? 0],
  SSCAN: [-3, (db, a) => scanReply(db.typed(a[0], "set") ?? [], a, 1)],
};
