/**
 * List commands. The blocking pops (BRPOP, BLPOP, BLMOVE, BRPOPLPUSH) are
 * here in their non-blocking form, which is what Redis runs inside MULTI or a
 * script; the transport adds the waiting.
 *
 * @module
 */
import { float, int, range, ReplyError, SYNTAX } from "./command_args.ts";
import type { CommandTable, Keyspace } from "./keyspace.ts";

function push(db: Keyspace, key: string, values: string[], left: boolean): number {
  const list = db.create(key, "list");
  for (const v of values) left ? list.pushLeft(v) : list.pushRight(v);
  db.pushed.add(key);
  return list.length;
}

function pop(db: Keyspace, a: string[], right: boolean): string | string[] | null {
  const count = a.length > 1 ? int(a[1], "ERR value is out of range, must be positive") : undefined;
  if (count !== undefined && count < 0) throw new ReplyError("ERR value is out of range, must be positive");
  const list = db.typed(a[0], "list");
  if (!list) return null;
  if (count === undefined) {
    const v = right ? list.popRight()! : list.popLeft()!;
    db.tidy(a[0]);
    return v;
  }
  const out: string[] = [];
  while (out.length < count && list.length > 0) out.push(right ? list.popRight()! : list.popLeft()!);
  db.tidy(a[0]);
  return out;
}

function side(arg: string): "LEFT" | "RIGHT" {
  const s = arg.toUpperCase();
  if (s !== "LEFT" && s !== "RIGHT") throw new ReplyError(SYNTAX);
  return s;
}

function move(db: Keyspace, src: string, dst: string, from: string, to: string): string | null {
  const [f, t] = [side(from), side(to)];
  const list = db.typed(src, "list");
  if (!list) return null;
  db.typed(dst, "list"); // WRONGTYPE before anything is popped, as Redis checks
  const v = f === "RIGHT" ? list.popRight()! : list.popLeft()!;
  db.tidy(src);
  push(db, dst, [v], t === "LEFT");
  return v;
}

/** The non-blocking core of BRPOP/BLPOP: the first non-empty key, in argument order. */
function bpop(db: Keyspace, keys: string[], right: boolean): string[] | null {
  for (const key of keys) {
    const list = db.typed(key, "list");
    if (!list) continue;
    const v = right ? list.popRight()! : list.popLeft()!;
    db.tidy(key);
    return [key, v];
  }
  return null;
}

/**
 * A blocking command's timeout in milliseconds (0 = forever), checked as
 * Redis checks it even when the command will not block.
 *
 * @example
 * ```ts
 * blockTimeout("0.5"); // 500
 * ```
 */
export function blockTimeout(arg: string): number {
  const seconds = float(arg, "ERR timeout is not a float or out of range");
  if (seconds < 0) throw new ReplyError("ERR timeout is negative");
  if (!Number.isFinite(seconds)) throw new ReplyError("ERR timeout is out of range");
  return seconds * 1000;
}

/**
 * The list commands.
 *
 * @example
 * ```ts
 * const [, lpush] = listCommands.LPUSH;
 * lpush(db, ["queue:default", "{}"]); // 1
 * ```
 */
export const listCommands: CommandTable = {
  LPUSH: [-3, (db, a) => push(db, a[0], a.slice(1), true)],
  RPUSH: [-3, (db, a) => push(db, a[0], a.slice(1), false)],
  LPOP: [-2, (db, a) => pop(db, a, false)],
  RPOP: [-2, (db, a) => pop(db, a, true)],
  LLEN: [2, (db, a) => db.typed(a[0], "list")?.length ?? 0],
  LINDEX: [3, (db, a) => {
    const list = db.typed(a[0], "list");
    let i = int(a[1]);
    if (!list) return null;
    if (i < 0) i += list.length;
    return list.at(i) ?? null;
  }],
  LRANGE: [4, (db, a) => {
    const [start, stop] = [int(a[1]), int(a[2])];
    const list = db.typed(a[0], "list");
    const r = list && range(start, stop, list.length);
    return r ? list.slice(r[0], r[1]) : [];
  }],
  LREM: [4, (db, a) => {
    const count = int(a[1]);
    const list = db.typed(a[0], "list");
    if (!list) return 0;
    const items = list.slice(0, list.length - 1);
    const limit = count === 0 ? Infinity : Math.abs(count);
    const drop = new Set<number>();
    // A negative count removes from the tail, so scan backwards.
    for (let n = 0; n < items.length && drop.size < limit; n++) {
      const i = count < 0 ? items.length - 1 - n : n;
      if (items[i] === a[2]) drop.add(i);
    }
    if (drop.size > 0) {
      list.reset(items.filter((_, i) => !drop.has(i)));
      db.tidy(a[0]);
    }
    return drop.size;
  }],
  LPOS: [-3, (db, a) => {
    let rank = 1, count: number | undefined, maxlen = 0;
    for (let i = 2; i < a.length; i += 2) {
      const opt = a[i].toUpperCase();
      if (a[i + 1] === undefined) throw new ReplyError(SYNTAX);
      if (opt === "RANK") rank = int(a[i + 1]);
      else if (opt === "COUNT") count = int(a[i + 1]);
      else if (opt === "MAXLEN") maxlen = int(a[i + 1]);
      else throw new ReplyError(SYNTAX);
    }
    if (rank === 0) throw new ReplyError("ERR RANK can't be zero");
    const list = db.typed(a[0], "list");
    const found: number[] = [];
    if (list) {
      const len = list.length;
      const items = list.slice(0, len - 1);
      let skip = Math.abs(rank) - 1;
      for (let n = 0; n < len && (maxlen === 0 || n < maxlen); n++) {
        const i = rank < 0 ? len - 1 - n : n;
        if (items[i] !== a[1]) continue;
        if (skip > 0) {
          skip--;
          continue;
        }
        found.push(i);
        if (count === undefined || (count > 0 && found.length >= count)) break;
      }
    }
    return count === undefined ? found[0] ?? null : found;
  }],
  LTRIM: [4, (db, a) => {
    const [start, stop] = [int(a[1]), int(a[2])];
    const list = db.typed(a[0], "list");
    if (!list) return "OK";
    const r = range(start, stop, list.length);
    list.reset(r ? list.slice(r[0], r[1]) : []);
    db.tidy(a[0]);
    return "OK";
  }],
  LSET: [4, (db, a) => {
    const list = db.typed(a[0], "list");
    if (!list) throw new ReplyError("ERR no such key");
    let i = int(a[1]);
    if (i < 0) i += list.length;
    if (i < 0 || i >= list.length) throw new ReplyError("ERR index out of range");
    list.set(i, a[2]);
    return "OK";
  }],
  LMOVE: [5, (db, a) => move(db, a[0], a[1], a[2], a[3])],
  RPOPLPUSH: [3, (db, a) => move(db, a[0], a[1], "RIGHT", "LEFT")],
  BRPOP: [-3, (db, a) => (blockTimeout(a[a.length - 1]), bpop(db, a.slice(0, -1), true))],
  BLPOP: [-3, (db, a) => (blockTimeout(a[a.length - 1]), bpop(db, a.slice(0, -1), false))],
  BLMOVE: [6, (db, a) => (blockTimeout(a[4]), move(db, a[0], a[1], a[2], a[3]))],
  BRPOPLPUSH: [4, (db, a) => (blockTimeout(a[2]), move(db, a[0], a[1], "RIGHT", "LEFT"))],
};
