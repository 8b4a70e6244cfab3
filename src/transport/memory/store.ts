/**
 * The memory store: Redis's data types and commands, synchronously, in one
 * JavaScript heap. Commands return RESP-shaped replies (strings, integers,
 * null, arrays) and throw Redis's own error messages.
 *
 * @module
 */
import type { RedisArg, RedisReply } from "../transport.ts";
import { Deque } from "./deque.ts";
import { ZSet } from "./zset.ts";

type Value =
  | { type: "string"; v: string }
  | { type: "list"; v: Deque<string> }
  | { type: "set"; v: Set<string> }
  | { type: "zset"; v: ZSet }
  | { type: "hash"; v: Map<string, string> };

interface Types {
  string: string;
  list: Deque<string>;
  set: Set<string>;
  zset: ZSet;
  hash: Map<string, string>;
}

interface Entry {
  value: Value;
  /** Epoch ms, or undefined for no expiry. */
  expiresAt?: number;
}

/** An error reply, thrown with Redis's exact wording. */
export class ReplyError extends Error {}

const WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_INT = "ERR value is not an integer or out of range";
const NOT_FLOAT = "ERR value is not a valid float";
const SYNTAX = "ERR syntax error";

function int(arg: string): number {
  if (!/^-?\d+$/.test(arg)) throw new ReplyError(NOT_INT);
  return Number(arg);
}

function float(arg: string): number {
  const a = arg.toLowerCase();
  if (a === "inf" || a === "+inf" || a === "infinity" || a === "+infinity") return Infinity;
  if (a === "-inf" || a === "-infinity") return -Infinity;
  const n = Number(arg);
  if (arg.trim() === "" || Number.isNaN(n)) throw new ReplyError(NOT_FLOAT);
  return n;
}

/** Redis's text for a score. */
export function scoreText(n: number): string {
  if (n === Infinity) return "inf";
  if (n === -Infinity) return "-inf";
  return String(n);
}

function bound(arg: string): { value: number; exclusive: boolean } {
  const exclusive = arg.startsWith("(");
  const text = exclusive ? arg.slice(1) : arg;
  const low = text.toLowerCase();
  if (low === "-inf") return { value: -Infinity, exclusive };
  if (low === "+inf" || low === "inf") return { value: Infinity, exclusive };
  const value = Number(text);
  if (text === "" || Number.isNaN(value)) throw new ReplyError("ERR min or max is not a float");
  return { value, exclusive };
}

function globToRegExp(glob: string): RegExp {
  let re = "^";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") re += "[\\s\\S]*";
    else if (c === "?") re += "[\\s\\S]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end < 0) re += "\\[";
      else {
        let cls = glob.slice(i + 1, end);
        if (cls.startsWith("^")) cls = "^" + cls.slice(1).replace(/\\/g, "\\\\");
        re += `[${cls}]`;
        i = end;
      }
    } else if (c === "\\" && i + 1 < glob.length) re += "\\" + glob[++i];
    else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(re + "$");
}

/** Called when a list gains items, so blocked pops can be served. */
export type OnPush = (key: string) => void;

/** The in-memory keyspace. */
export class Store {
  #data = new Map<string, Entry>();
  #commands = 0;
  onPush: OnPush = () => {};

  /** Runs one command. */
  exec(name: string, args: RedisArg[]): RedisReply {
    const cmd = name.toUpperCase();
    const a = args.map(String);
    this.#commands++;
    const fn = this.#table[cmd];
    if (!fn) {
      throw new ReplyError(
        `ERR unknown command '${name}', with args beginning with: ${a.slice(0, 3).map((x) => `'${x}'`).join(" ")}`,
      );
    }
    const [minArgs, handler] = fn;
    if (a.length < minArgs) throw new ReplyError(`ERR wrong number of arguments for '${name.toLowerCase()}' command`);
    return handler(a);
  }

  /** Whether a command exists and has enough arguments (MULTI queues only valid ones). */
  check(name: string, args: RedisArg[]): string | undefined {
    const fn = this.#table[name.toUpperCase()];
    if (!fn) return `ERR unknown command '${name}'`;
    if (args.length < fn[0]) return `ERR wrong number of arguments for '${name.toLowerCase()}' command`;
    return undefined;
  }

  #get(key: string): Entry | undefined {
    const e = this.#data.get(key);
    if (e && e.expiresAt !== undefined && e.expiresAt <= Date.now()) {
      this.#data.delete(key);
      return undefined;
    }
    return e;
  }

  #typed<T extends keyof Types>(key: string, type: T): Types[T] | undefined {
    const e = this.#get(key);
    if (!e) return undefined;
    if (e.value.type !== type) throw new ReplyError(WRONGTYPE);
    return e.value.v as Types[T];
  }

  #create<T extends Exclude<keyof Types, "string">>(key: string, type: T): Types[T] {
    const existing = this.#typed(key, type);
    if (existing) return existing;
    const v = type === "list"
      ? new Deque<string>()
      : type === "set"
      ? new Set<string>()
      : type === "zset"
      ? new ZSet()
      : new Map<string, string>();
    this.#data.set(key, { value: { type, v } as Value });
    return v as Types[T];
  }

  /** Deletes containers that became empty, as Redis does. */
  #tidy(key: string): void {
    const e = this.#data.get(key);
    if (!e) return;
    const v = e.value;
    const size = v.type === "list"
      ? v.v.length
      : v.type === "set" || v.type === "zset"
      ? v.v.size
      : v.type === "hash"
      ? v.v.size
      : 1;
    if (size === 0) this.#data.delete(key);
  }

  #pop(key: string, right: boolean): string | null {
    const list = this.#typed(key, "list");
    if (!list || list.length === 0) return null;
    const v = right ? list.popRight()! : list.popLeft()!;
    this.#tidy(key);
    return v;
  }

  #push(key: string, values: string[], left: boolean): number {
    const list = this.#create(key, "list");
    for (const v of values) left ? list.pushLeft(v) : list.pushRight(v);
    this.onPush(key);
    return list.length;
  }

  #zrange(key: string, a: string[], byScoreDefault: boolean): RedisReply {
    // a = [start, stop, ...options] (ZRANGE) or [min, max, ...] (ZRANGEBYSCORE)
    let byScore = byScoreDefault, rev = false, withScores = false, limit: [number, number] | undefined;
    for (let i = 2; i < a.length; i++) {
      const o = a[i].toUpperCase();
      if (o === "BYSCORE") byScore = true;
      else if (o === "REV") rev = true;
      else if (o === "WITHSCORES") withScores = true;
      else if (o === "LIMIT" && i + 2 < a.length) {
        limit = [int(a[i + 1]), int(a[i + 2])];
        i += 2;
      } else throw new ReplyError(SYNTAX);
    }
    const z = this.#typed(key, "zset");
    if (!z) return [];
    let list = z.entries as { score: number; member: string }[];
    if (byScore) {
      const [lo, hi] = rev ? [bound(a[1]), bound(a[0])] : [bound(a[0]), bound(a[1])];
      const from = z.firstAtLeast(lo.value, lo.exclusive);
      const out = [];
      for (let i = from; i < list.length; i++) {
        const s = list[i].score;
        if (s > hi.value || (hi.exclusive && s === hi.value)) break;
        out.push(list[i]);
      }
      list = rev ? out.reverse() : out;
      if (limit) list = limit[1] < 0 ? list.slice(limit[0]) : list.slice(limit[0], limit[0] + limit[1]);
    } else {
      const n = list.length;
      let start = int(a[0]), stop = int(a[1]);
      if (start < 0) start = Math.max(0, n + start);
      if (stop < 0) stop = n + stop;
      stop = Math.min(stop, n - 1);
      if (start > stop) return [];
      list = rev ? list.slice().reverse().slice(start, stop + 1) : list.slice(start, stop + 1);
    }
    const out: string[] = [];
    for (const e of list) withScores ? out.push(e.member, scoreText(e.score)) : out.push(e.member);
    return out;
  }

  #scan(items: string[], a: string[], from: number, pairs?: (k: string) => string[]): RedisReply {
    const cursor = int(a[from]);
    let match: RegExp | undefined, count = 10;
    for (let i = from + 1; i + 1 < a.length; i += 2) {
      const o = a[i].toUpperCase();
      if (o === "MATCH") match = globToRegExp(a[i + 1]);
      else if (o === "COUNT") count = int(a[i + 1]);
      else if (o !== "TYPE") throw new ReplyError(SYNTAX);
    }
    const slice = items.slice(cursor, cursor + count);
    const next = cursor + count >= items.length ? 0 : cursor + count;
    const out: string[] = [];
    for (const item of slice) if (!match || match.test(item)) out.push(...(pairs ? pairs(item) : [item]));
    return [String(next), out];
  }

  #incr(key: string, by: number): number {
    const e = this.#get(key);
    if (e && e.value.type !== "string") throw new ReplyError(WRONGTYPE);
    const current = e ? int((e.value as { v: string }).v) : 0;
    const next = current + by;
    if (e) (e.value as { v: string }).v = String(next);
    else this.#data.set(key, { value: { type: "string", v: String(next) } });
    return next;
  }

  #expire(key: string, ms: number): number {
    const e = this.#get(key);
    if (!e) return 0;
    if (ms <= 0) this.#data.delete(key);
    else e.expiresAt = Date.now() + ms;
    return 1;
  }

  #ttl(key: string, unit: number): number {
    const e = this.#get(key);
    if (!e) return -2;
    if (e.expiresAt === undefined) return -1;
    return Math.max(0, Math.round((e.expiresAt - Date.now()) / unit));
  }

  #move(src: string, dst: string, from: string, to: string): string | null {
    const fromRight = from.toUpperCase() === "RIGHT";
    if (!["LEFT", "RIGHT"].includes(from.toUpperCase()) || !["LEFT", "RIGHT"].includes(to.toUpperCase())) {
      throw new ReplyError(SYNTAX);
    }
    const list = this.#typed(src, "list");
    if (!list || list.length === 0) return null;
    this.#typed(dst, "list"); // type check before popping
    const v = fromRight ? list.popRight()! : list.popLeft()!;
    this.#tidy(src);
    this.#push(dst, [v], to.toUpperCase() === "LEFT");
    return v;
  }

  /** For blocking pops: the first of `keys` holding a non-empty list. */
  firstNonEmpty(keys: string[]): string | undefined {
    for (const k of keys) {
      const list = this.#typed(k, "list");
      if (list && list.length > 0) return k;
    }
    return undefined;
  }

  // [minimum argument count, handler]
  #table: Record<string, [number, (a: string[]) => RedisReply]> = {
    PING: [0, (a) => a[0] ?? "PONG"],
    ECHO: [1, (a) => a[0]],
    TIME: [0, () => {
      const ms = Date.now();
      return [String(Math.floor(ms / 1000)), String((ms % 1000) * 1000)];
    }],
    DBSIZE: [0, () => [...this.#data.keys()].filter((k) => this.#get(k)).length],
    FLUSHDB: [0, () => (this.#data.clear(), "OK")],
    FLUSHALL: [0, () => (this.#data.clear(), "OK")],
    INFO: [
      0,
      () =>
        `# Server\r\nredis_version:7.0.0-edgekiq-memory\r\n# Memory\r\nmaxmemory_policy:noeviction\r\n# Stats\r\ntotal_commands_processed:${this.#commands}\r\n`,
    ],
    SCRIPT: [1, (a) => {
      const sub = a[0].toUpperCase();
      if (sub === "FLUSH") return "OK";
      if (sub === "EXISTS") return a.slice(1).map(() => 0);
      throw new ReplyError(`ERR unknown subcommand '${a[0]}'`);
    }],
    TYPE: [1, (a) => this.#get(a[0])?.value.type ?? "none"],
    EXISTS: [1, (a) => a.filter((k) => this.#get(k)).length],
    DEL: [1, (a) => a.filter((k) => this.#get(k) && this.#data.delete(k)).length],
    UNLINK: [1, (a) => a.filter((k) => this.#get(k) && this.#data.delete(k)).length],
    EXPIRE: [2, (a) => this.#expire(a[0], int(a[1]) * 1000)],
    PEXPIRE: [2, (a) => this.#expire(a[0], int(a[1]))],
    TTL: [1, (a) => this.#ttl(a[0], 1000)],
    PTTL: [1, (a) => this.#ttl(a[0], 1)],
    PERSIST: [1, (a) => {
      const e = this.#get(a[0]);
      if (!e || e.expiresAt === undefined) return 0;
      e.expiresAt = undefined;
      return 1;
    }],
    KEYS: [1, (a) => {
      const re = globToRegExp(a[0]);
      return [...this.#data.keys()].filter((k) => this.#get(k) && re.test(k));
    }],
    SCAN: [1, (a) => {
      let type: string | undefined;
      for (let i = 1; i + 1 < a.length; i += 2) if (a[i].toUpperCase() === "TYPE") type = a[i + 1].toLowerCase();
      const keys = [...this.#data.keys()].filter((k) => {
        const e = this.#get(k);
        return e && (!type || e.value.type === type);
      });
      return this.#scan(keys, a, 0);
    }],
    GET: [1, (a) => this.#typed(a[0], "string") ?? null],
    MGET: [1, (a) =>
      a.map((k) => {
        const e = this.#get(k);
        return e && e.value.type === "string" ? e.value.v : null;
      })],
    SET: [2, (a) => {
      let nx = false, xx = false, get = false, ms: number | undefined;
      for (let i = 2; i < a.length; i++) {
        const o = a[i].toUpperCase();
        if (o === "NX") nx = true;
        else if (o === "XX") xx = true;
        else if (o === "GET") get = true;
        else if ((o === "EX" || o === "PX") && i + 1 < a.length) {
          const n = int(a[++i]);
          if (n <= 0) throw new ReplyError("ERR invalid expire time in 'set' command");
          ms = o === "EX" ? n * 1000 : n;
        } else throw new ReplyError(SYNTAX);
      }
      const e = this.#get(a[0]);
      if (get && e && e.value.type !== "string") throw new ReplyError(WRONGTYPE);
      const old = e && e.value.type === "string" ? e.value.v : null;
      if ((nx && e) || (xx && !e)) return get ? old : null;
      this.#data.set(a[0], {
        value: { type: "string", v: a[1] },
        expiresAt: ms === undefined ? undefined : Date.now() + ms,
      });
      return get ? old : "OK";
    }],
    MSET: [2, (a) => {
      for (let i = 0; i + 1 < a.length; i += 2) this.#data.set(a[i], { value: { type: "string", v: a[i + 1] } });
      return "OK";
    }],
    INCR: [1, (a) => this.#incr(a[0], 1)],
    DECR: [1, (a) => this.#incr(a[0], -1)],
    INCRBY: [2, (a) => this.#incr(a[0], int(a[1]))],
    DECRBY: [2, (a) => this.#incr(a[0], -int(a[1]))],
    LPUSH: [2, (a) => this.#push(a[0], a.slice(1), true)],
    RPUSH: [2, (a) => this.#push(a[0], a.slice(1), false)],
    LPOP: [1, (a) => this.#popCount(a, false)],
    RPOP: [1, (a) => this.#popCount(a, true)],
    LLEN: [1, (a) => this.#typed(a[0], "list")?.length ?? 0],
    LINDEX: [2, (a) => {
      const list = this.#typed(a[0], "list");
      if (!list) return null;
      let i = int(a[1]);
      if (i < 0) i += list.length;
      return list.at(i) ?? null;
    }],
    LRANGE: [3, (a) => {
      const list = this.#typed(a[0], "list");
      if (!list) return [];
      const n = list.length;
      let start = int(a[1]), stop = int(a[2]);
      if (start < 0) start = Math.max(0, n + start);
      if (stop < 0) stop = n + stop;
      return list.slice(start, Math.min(stop, n - 1));
    }],
    LREM: [3, (a) => {
      const list = this.#typed(a[0], "list");
      if (!list) return 0;
      const count = int(a[1]);
      const items = list.slice(0, list.length - 1);
      let removed = 0;
      const limit = count === 0 ? Infinity : Math.abs(count);
      const order = count < 0 ? items.map((_, i) => items.length - 1 - i) : items.map((_, i) => i);
      const drop = new Set<number>();
      for (const i of order) {
        if (removed >= limit) break;
        if (items[i] === a[2]) {
          drop.add(i);
          removed++;
        }
      }
      if (removed) {
        list.reset(items.filter((_, i) => !drop.has(i)));
        this.#tidy(a[0]);
      }
      return removed;
    }],
    LTRIM: [3, (a) => {
      const list = this.#typed(a[0], "list");
      if (!list) return "OK";
      const n = list.length;
      let start = int(a[1]), stop = int(a[2]);
      if (start < 0) start = Math.max(0, n + start);
      if (stop < 0) stop = n + stop;
      list.reset(list.slice(start, Math.min(stop, n - 1)));
      this.#tidy(a[0]);
      return "OK";
    }],
    LSET: [3, (a) => {
      const list = this.#typed(a[0], "list");
      if (!list) throw new ReplyError("ERR no such key");
      let i = int(a[1]);
      if (i < 0) i += list.length;
      if (i < 0 || i >= list.length) throw new ReplyError("ERR index out of range");
      list.set(i, a[2]);
      return "OK";
    }],
    LMOVE: [4, (a) => this.#move(a[0], a[1], a[2], a[3])],
    RPOPLPUSH: [2, (a) => this.#move(a[0], a[1], "RIGHT", "LEFT")],
    // Inside a pipeline or script a blocking pop does not block (Redis's MULTI rule).
    BRPOP: [2, (a) => this.#bpop(a, true)],
    BLPOP: [2, (a) => this.#bpop(a, false)],
    BLMOVE: [5, (a) => this.#move(a[0], a[1], a[2], a[3])],
    BRPOPLPUSH: [3, (a) => this.#move(a[0], a[1], "RIGHT", "LEFT")],
    SADD: [2, (a) => {
      const set = this.#create(a[0], "set");
      let n = 0;
      for (const m of a.slice(1)) if (!set.has(m)) set.add(m), n++;
      return n;
    }],
    SREM: [2, (a) => {
      const set = this.#typed(a[0], "set");
      if (!set) return 0;
      const n = a.slice(1).filter((m) => set.delete(m)).length;
      this.#tidy(a[0]);
      return n;
    }],
    SMEMBERS: [1, (a) => [...(this.#typed(a[0], "set") ?? [])]],
    SISMEMBER: [2, (a) => (this.#typed(a[0], "set")?.has(a[1]) ? 1 : 0)],
    SCARD: [1, (a) => this.#typed(a[0], "set")?.size ?? 0],
    SSCAN: [2, (a) => this.#scan([...(this.#typed(a[0], "set") ?? [])], a, 1)],
    ZADD: [3, (a) => this.#zadd(a)],
    ZREM: [2, (a) => {
      const z = this.#typed(a[0], "zset");
      if (!z) return 0;
      const n = a.slice(1).filter((m) => z.remove(m)).length;
      this.#tidy(a[0]);
      return n;
    }],
    ZCARD: [1, (a) => this.#typed(a[0], "zset")?.size ?? 0],
    ZSCORE: [2, (a) => {
      const s = this.#typed(a[0], "zset")?.scores.get(a[1]);
      return s === undefined ? null : scoreText(s);
    }],
    ZINCRBY: [3, (a) => {
      const z = this.#create(a[0], "zset");
      const s = (z.scores.get(a[2]) ?? 0) + float(a[1]);
      z.add(a[2], s);
      return scoreText(s);
    }],
    ZRANK: [2, (a) => this.#typed(a[0], "zset")?.rank(a[1]) ?? null],
    ZCOUNT: [3, (a) => (this.#zrange(a[0], [a[1], a[2]], true) as string[]).length],
    ZRANGE: [3, (a) => this.#zrange(a[0], a.slice(1), false)],
    ZRANGEBYSCORE: [3, (a) => this.#zrange(a[0], a.slice(1), true)],
    ZREVRANGE: [3, (a) => this.#zrange(a[0], [...a.slice(1), "REV"], false)],
    ZREVRANGEBYSCORE: [3, (a) => this.#zrange(a[0], [...a.slice(1), "REV"], true)],
    ZREMRANGEBYSCORE: [3, (a) => {
      const z = this.#typed(a[0], "zset");
      if (!z) return 0;
      const members = this.#zrange(a[0], [a[1], a[2]], true) as string[];
      for (const m of members) z.remove(m);
      this.#tidy(a[0]);
      return members.length;
    }],
    ZREMRANGEBYRANK: [3, (a) => {
      const z = this.#typed(a[0], "zset");
      if (!z) return 0;
      const n = z.size;
      let start = int(a[1]), stop = int(a[2]);
      if (start < 0) start = Math.max(0, n + start);
      if (stop < 0) stop = n + stop;
      const removed = z.removeRange(start, Math.min(stop, n - 1));
      this.#tidy(a[0]);
      return removed;
    }],
    ZPOPMIN: [1, (a) => {
      const z = this.#typed(a[0], "zset");
      if (!z) return [];
      const count = a[1] === undefined ? 1 : int(a[1]);
      const out: string[] = [];
      for (const e of z.entries.slice(0, count)) out.push(e.member, scoreText(e.score));
      z.removeRange(0, Math.min(count, z.size) - 1);
      this.#tidy(a[0]);
      return out;
    }],
    ZSCAN: [2, (a) => {
      const z = this.#typed(a[0], "zset");
      const members = z ? z.entries.map((e) => e.member) : [];
      return this.#scan(members, a, 1, (m) => [m, scoreText(z!.scores.get(m)!)]);
    }],
    HSET: [3, (a) => {
      if ((a.length - 1) % 2 !== 0) throw new ReplyError("ERR wrong number of arguments for 'hset' command");
      const h = this.#create(a[0], "hash");
      let n = 0;
      for (let i = 1; i < a.length; i += 2) {
        if (!h.has(a[i])) n++;
        h.set(a[i], a[i + 1]);
      }
      return n;
    }],
    HMSET: [3, (a) => (this.exec("HSET", a), "OK")],
    HSETNX: [3, (a) => {
      const h = this.#create(a[0], "hash");
      if (h.has(a[1])) return 0;
      h.set(a[1], a[2]);
      return 1;
    }],
    HGET: [2, (a) => this.#typed(a[0], "hash")?.get(a[1]) ?? null],
    HMGET: [2, (a) => {
      const h = this.#typed(a[0], "hash");
      return a.slice(1).map((f) => h?.get(f) ?? null);
    }],
    HGETALL: [1, (a) => [...(this.#typed(a[0], "hash") ?? [])].flat()],
    HKEYS: [1, (a) => [...(this.#typed(a[0], "hash")?.keys() ?? [])]],
    HVALS: [1, (a) => [...(this.#typed(a[0], "hash")?.values() ?? [])]],
    HLEN: [1, (a) => this.#typed(a[0], "hash")?.size ?? 0],
    HEXISTS: [2, (a) => (this.#typed(a[0], "hash")?.has(a[1]) ? 1 : 0)],
    HDEL: [2, (a) => {
      const h = this.#typed(a[0], "hash");
      if (!h) return 0;
      const n = a.slice(1).filter((f) => h.delete(f)).length;
      this.#tidy(a[0]);
      return n;
    }],
    HINCRBY: [3, (a) => {
      const h = this.#create(a[0], "hash");
      const current = h.has(a[1]) ? int(h.get(a[1])!) : 0;
      const next = current + int(a[2]);
      h.set(a[1], String(next));
      return next;
    }],
    HSCAN: [2, (a) => {
      const h = this.#typed(a[0], "hash");
      return this.#scan([...(h?.keys() ?? [])], a, 1, (f) => [f, h!.get(f)!]);
    }],
  };

  #popCount(a: string[], right: boolean): RedisReply {
    if (a[1] === undefined) return this.#pop(a[0], right);
    const count = int(a[1]);
    if (count < 0) throw new ReplyError("ERR value is out of range, must be positive");
    const list = this.#typed(a[0], "list");
    if (!list) return null;
    const out: string[] = [];
    while (out.length < count && list.length > 0) out.push(right ? list.popRight()! : list.popLeft()!);
    this.#tidy(a[0]);
    return out;
  }

  #bpop(a: string[], right: boolean): RedisReply {
    const key = this.firstNonEmpty(a.slice(0, -1));
    return key === undefined ? null : [key, this.#pop(key, right)!];
  }

  #zadd(a: string[]): RedisReply {
    let i = 1, nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
    for (; i < a.length; i++) {
      const o = a[i].toUpperCase();
      if (o === "NX") nx = true;
      else if (o === "XX") xx = true;
      else if (o === "GT") gt = true;
      else if (o === "LT") lt = true;
      else if (o === "CH") ch = true;
      else if (o === "INCR") incr = true;
      else break;
    }
    const rest = a.slice(i);
    if (rest.length === 0 || rest.length % 2 !== 0) throw new ReplyError(SYNTAX);
    if (nx && xx) throw new ReplyError("ERR XX and NX options at the same time are not compatible");
    if (incr && rest.length !== 2) throw new ReplyError("ERR INCR option supports a single increment-element pair");
    const pairs: Array<[number, string]> = [];
    for (let j = 0; j < rest.length; j += 2) pairs.push([float(rest[j]), rest[j + 1]]);
    const z = this.#create(a[0], "zset");
    let added = 0, changed = 0;
    let result: string | null = null;
    for (const [score, member] of pairs) {
      const old = z.scores.get(member);
      if ((nx && old !== undefined) || (xx && old === undefined)) continue;
      const next = incr ? (old ?? 0) + score : score;
      if (old !== undefined && ((gt && next <= old) || (lt && next >= old))) continue;
      if (z.add(member, next)) added++;
      else if (old !== next) changed++;
      result = scoreText(next);
    }
    this.#tidy(a[0]);
    if (incr) return result;
    return ch ? added + changed : added;
  }
}
