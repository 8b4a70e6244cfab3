/**
 * Sorted-set commands: ZADD (NX, XX, GT, LT, CH, INCR), ZREM, ZCARD, ZSCORE,
 * ZMSCORE, ZINCRBY, ZCOUNT, ZRANGE (BYSCORE, REV, LIMIT, WITHSCORES) and its
 * older forms, ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZRANK, ZREVRANK, ZSCAN,
 * ZPOPMIN, ZPOPMAX. Scores are replied as Redis prints them.
 *
 * @module
 */
import type { RedisReply } from "../../transport.ts";
import { type Bound, bound, float, int, range, ReplyError, scoreText, SYNTAX } from "./command_args.ts";
import type { CommandTable, Keyspace } from "./keyspace.ts";
import { scanReply } from "./scan.ts";
import type { ZEntry, ZSet } from "./zset.ts";

const NAN = "ERR resulting score is not a number (NaN)";

/** The index span [from, to) of entries with scores between two bounds. */
function span(z: ZSet, min: Bound, max: Bound): [number, number] {
  const from = z.countBelow(min.value, min.exclusive);
  const to = z.countBelow(max.value, !max.exclusive);
  return [from, Math.max(from, to)];
}

function zadd(db: Keyspace, a: string[]): RedisReply {
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
  const rest = a.length - i;
  if (rest === 0 || rest % 2 !== 0) throw new ReplyError(SYNTAX);
  if (nx && xx) throw new ReplyError("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    throw new ReplyError("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (incr && rest !== 2) throw new ReplyError("ERR INCR option supports a single increment-element pair");
  // Every score is parsed before anything changes, so a bad one leaves the set untouched.
  const pairs: Array<[number, string]> = [];
  for (let j = i; j < a.length; j += 2) pairs.push([float(a[j]), a[j + 1]]);
  const z = db.create(a[0], "zset");
  let added = 0, changed = 0;
  let result: string | null = null;
  try {
    for (const [score, member] of pairs) {
      const old = z.scores.get(member);
      if ((nx && old !== undefined) || (xx && old === undefined)) continue;
      const next = incr && old !== undefined ? old + score : score;
      if (Number.isNaN(next)) throw new ReplyError(NAN);
      if (old !== undefined && ((gt && next <= old) || (lt && next >= old))) continue;
      if (z.add(member, next)) added++;
      else if (old !== next) changed++;
      result = scoreText(next);
    }
  } finally {
    db.tidy(a[0]);
  }
  if (incr) return result;
  return ch ? added + changed : added;
}

interface RangeMode {
  byScore: boolean;
  rev: boolean;
  /** ZRANGE accepts BYSCORE and REV; the older commands fix them. */
  modern: boolean;
  /** ZREVRANGE takes no LIMIT. */
  limit: boolean;
}

function zrange(db: Keyspace, a: string[], mode: RangeMode): RedisReply {
  let { byScore, rev } = mode;
  let withScores = false, limit: [number, number] | undefined;
  for (let i = 3; i < a.length; i++) {
    const o = a[i].toUpperCase();
    if (o === "WITHSCORES") withScores = true;
    else if (o === "BYSCORE" && mode.modern) byScore = true;
    else if (o === "REV" && mode.modern) rev = true;
    else if (o === "BYLEX" && mode.modern) throw new ReplyError("ERR BYLEX is not supported by the memory transport");
    else if (o === "LIMIT" && mode.limit && i + 2 < a.length) {
      limit = [int(a[i + 1]), int(a[i + 2])];
      i += 2;
    } else throw new ReplyError(SYNTAX);
  }
  if (limit && !byScore) {
    throw new ReplyError("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  const picked: ZEntry[] = [];
  if (byScore) {
    // Reversed ranges name the maximum first.
    const [min, max] = rev ? [bound(a[2]), bound(a[1])] : [bound(a[1]), bound(a[2])];
    const z = db.typed(a[0], "zset");
    if (!z) return [];
    const [from, to] = span(z, min, max);
    let [offset, count] = limit ?? [0, -1];
    if (offset < 0) return [];
    if (count < 0) count = Infinity;
    const e = z.entries;
    if (rev) { for (let i = to - 1 - offset; i >= from && picked.length < count; i--) picked.push(e[i]); }
    else for (let i = from + offset; i < to && picked.length < count; i++) picked.push(e[i]);
  } else {
    const [start, stop] = [int(a[1]), int(a[2])];
    const z = db.typed(a[0], "zset");
    if (!z) return [];
    const n = z.size, r = range(start, stop, n);
    if (!r) return [];
    for (let i = r[0]; i <= r[1]; i++) picked.push(z.entries[rev ? n - 1 - i : i]);
  }
  const out: string[] = [];
  for (const e of picked) withScores ? out.push(e.member, scoreText(e.score)) : out.push(e.member);
  return out;
}

function zpop(db: Keyspace, a: string[], max: boolean): RedisReply {
  const count = a.length > 1 ? int(a[1], "ERR value is out of range, must be positive") : 1;
  if (count < 0 || a.length > 2) {
    throw new ReplyError(a.length > 2 ? SYNTAX : "ERR value is out of range, must be positive");
  }
  const z = db.typed(a[0], "zset");
  if (!z) return [];
  const n = Math.min(count, z.size);
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    const e = z.entries[max ? z.size - 1 - k : k];
    out.push(e.member, scoreText(e.score));
  }
  if (max) z.removeRange(z.size - n, z.size - 1);
  else z.removeRange(0, n - 1);
  db.tidy(a[0]);
  return out;
}

function rank(db: Keyspace, a: string[], rev: boolean): RedisReply {
  if (a.length > 2) throw new ReplyError(SYNTAX);
  const z = db.typed(a[0], "zset");
  const r = z?.rank(a[1]);
  return r === undefined ? null : rev ? z!.size - 1 - r : r;
}

/**
 * The sorted-set commands.
 *
 * @example
 * ```ts
 * const [, zadd] = zsetCommands.ZADD;
 * zadd(db, ["retry", "1700000000.5", "{}"]); // 1
 * ```
 */
export const zsetCommands: CommandTable = {
  ZADD: [-4, zadd],
  ZREM: [-3, (db, a) => {
    const z = db.typed(a[0], "zset");
    if (!z) return 0;
    let n = 0;
    for (let i = 1; i < a.length; i++) if (z.remove(a[i])) n++;
    db.tidy(a[0]);
    return n;
  }],
  ZCARD: [2, (db, a) => db.typed(a[0], "zset")?.size ?? 0],
  ZSCORE: [3, (db, a) => {
    const s = db.typed(a[0], "zset")?.scores.get(a[1]);
    return s === undefined ? null : scoreText(s);
  }],
  ZMSCORE: [-3, (db, a) => {
    const z = db.typed(a[0], "zset");
    return a.slice(1).map((m) => {
      const s = z?.scores.get(m);
      return s === undefined ? null : scoreText(s);
    });
  }],
  ZINCRBY: [4, (db, a) => {
    const by = float(a[1]);
    const z = db.create(a[0], "zset");
    const next = (z.scores.get(a[2]) ?? 0) + by;
    if (Number.isNaN(next)) {
      db.tidy(a[0]);
      throw new ReplyError(NAN);
    }
    z.add(a[2], next);
    return scoreText(next);
  }],
  ZCOUNT: [4, (db, a) => {
    const [min, max] = [bound(a[1]), bound(a[2])];
    const z = db.typed(a[0], "zset");
    if (!z) return 0;
    const [from, to] = span(z, min, max);
    return to - from;
  }],
  ZRANGE: [-4, (db, a) => zrange(db, a, { byScore: false, rev: false, modern: true, limit: true })],
  ZRANGEBYSCORE: [-4, (db, a) => zrange(db, a, { byScore: true, rev: false, modern: false, limit: true })],
  ZREVRANGE: [-4, (db, a) => zrange(db, a, { byScore: false, rev: true, modern: false, limit: false })],
  ZREVRANGEBYSCORE: [-4, (db, a) => zrange(db, a, { byScore: true, rev: true, modern: false, limit: true })],
  ZREMRANGEBYSCORE: [4, (db, a) => {
    const [min, max] = [bound(a[1]), bound(a[2])];
    const z = db.typed(a[0], "zset");
    if (!z) return 0;
    const [from, to] = span(z, min, max);
    const n = z.removeRange(from, to - 1);
    db.tidy(a[0]);
    return n;
  }],
  ZREMRANGEBYRANK: [4, (db, a) => {
    const [start, stop] = [int(a[1]), int(a[2])];
    const z = db.typed(a[0], "zset");
    const r = z && range(start, stop, z.size);
    if (!r) return 0;
    const n = z.removeRange(r[0], r[1]);
    db.tidy(a[0]);
    return n;
  }],
  ZRANK: [-3, (db, a) => rank(db, a, false)],
  ZREVRANK: [-3, (db, a) => rank(db, a, true)],
  ZPOPMIN: [-2, (db, a) => zpop(db, a, false)],
  ZPOPMAX: [-2, (db, a) => zpop(db, a, true)],
  ZSCAN: [-3, (db, a) => {
    const z = db.typed(a[0], "zset");
    return scanReply(z ? z.entries.map((e) => e.member) : [], a, 1, (m) => scoreText(z!.scores.get(m)!));
  }],
};
