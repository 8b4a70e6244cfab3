/**
 * Stream commands: XADD (NOMKSTREAM, MAXLEN/MINID with `=` or `~`, LIMIT),
 * XLEN, XRANGE, XREVRANGE (exclusive `(` bounds, `-`, `+`), XREAD (COUNT,
 * STREAMS, `$`), XTRIM and XDEL. XREAD's BLOCK is checked and ignored
 * here, as Redis ignores it inside MULTI or a script; the transport adds
 * the waiting. `~` trims exactly, which Redis allows (it may trim less).
 *
 * @module
 */
import { int, ReplyError, SYNTAX } from "./command_args.ts";
import type { CommandTable, Keyspace } from "./keyspace.ts";
import { compareIds, idText, parseId, Stream, type StreamEntry, type StreamId } from "./stream.ts";

const MAX = Number.MAX_SAFE_INTEGER;

/** A trim asked for by XADD or XTRIM. */
type Trim = { kind: "MAXLEN"; count: number } | { kind: "MINID"; min: StreamId };

/** Parses `MAXLEN|MINID [=|~] threshold [LIMIT n]` at `a[i]`; returns the trim and the next index. */
function trimOption(a: string[], i: number): [Trim, number] {
  const kind = a[i].toUpperCase() as "MAXLEN" | "MINID";
  let j = i + 1;
  let approximate = false;
  if (a[j] === "=" || a[j] === "~") approximate = a[j++] === "~";
  if (a[j] === undefined) throw new ReplyError(SYNTAX);
  const trim: Trim = kind === "MAXLEN"
    ? { kind, count: int(a[j], "ERR The MAXLEN argument must be >= 0.") }
    : { kind, min: parseId(a[j], 0) };
  if (trim.kind === "MAXLEN" && trim.count < 0) throw new ReplyError("ERR The MAXLEN argument must be >= 0.");
  j++;
  if (a[j]?.toUpperCase() === "LIMIT") {
    if (!approximate) throw new ReplyError("ERR syntax error, LIMIT cannot be used without the special ~ option");
    int(a[j + 1] ?? "", "ERR The LIMIT argument must be >= 0.");
    j += 2;
  }
  return [trim, j];
}

function applyTrim(stream: Stream, trim: Trim): number {
  return trim.kind === "MAXLEN" ? stream.trimToLength(trim.count) : stream.trimBelow(trim.min);
}

function entryReply(e: StreamEntry): [string, string[]] {
  return [idText(e.id), [...e.fields]];
}

/** A range bound: `-`, `+`, an ID, or `(ID` (exclusive). */
function rangeBound(text: string, isStart: boolean): StreamId | undefined {
  if (text === "-") return [0, 0];
  if (text === "+") return [MAX, MAX];
  if (text.startsWith("(")) {
    const [ms, seq] = parseId(text.slice(1), isStart ? 0 : MAX);
    // Exclusive: the next ID up (start) or down (end); none past the ends.
    if (isStart) return seq === MAX ? (ms === MAX ? undefined : [ms + 1, 0]) : [ms, seq + 1];
    return seq === 0 ? (ms === 0 ? undefined : [ms - 1, MAX]) : [ms, seq - 1];
  }
  return parseId(text, isStart ? 0 : MAX);
}

function range(db: Keyspace, a: string[], reverse: boolean): [string, string[]][] {
  const [key, first, second] = a;
  let count = Infinity;
  if (a.length > 3) {
    if (a.length !== 5 || a[3].toUpperCase() !== "COUNT") throw new ReplyError(SYNTAX);
    count = Math.max(0, int(a[4]));
  }
  const start = rangeBound(reverse ? second : first, true);
  const end = rangeBound(reverse ? first : second, false);
  const stream = db.typed(key, "stream");
  if (!stream || !start || !end || count === 0) return [];
  const found = stream.range(start, end);
  const ordered = reverse ? found.reverse() : found;
  return ordered.slice(0, count).map(entryReply);
}

/**
 * XREAD's arguments: COUNT, BLOCK (ms) and each stream's key and ID.
 *
 * @example
 * ```ts
 * xreadArgs(["COUNT", "10", "BLOCK", "5000", "STREAMS", "a", "$"]); // { count: 10, blockMs: 5000, streams: [["a", "$"]] }
 * ```
 */
export function xreadArgs(a: string[]): { count: number; blockMs: number | undefined; streams: [string, string][] } {
  let count = Infinity;
  let blockMs: number | undefined;
  let i = 0;
  for (; i < a.length; i++) {
    const opt = a[i].toUpperCase();
    if (opt === "STREAMS") break;
    if (opt === "COUNT" && a[i + 1] !== undefined) count = Math.max(1, int(a[++i]));
    else if (opt === "BLOCK" && a[i + 1] !== undefined) {
      blockMs = int(a[++i], "ERR timeout is not an integer or out of range");
      if (blockMs < 0) throw new ReplyError("ERR timeout is negative");
    } else throw new ReplyError(SYNTAX);
  }
  const rest = a.slice(i + 1);
  if (i >= a.length || rest.length === 0 || rest.length % 2 !== 0) {
    throw new ReplyError(
      "ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.",
    );
  }
  const n = rest.length / 2;
  return { count, blockMs, streams: rest.slice(0, n).map((key, k) => [key, rest[n + k]]) };
}

/**
 * The streams' IDs with `$` replaced by each stream's last ID now, so a
 * blocked XREAD waits for entries added after it was called.
 *
 * @example
 * ```ts
 * resolveLast(db, [["a", "$"]]); // [["a", "1700000000000-0"]]
 * ```
 */
export function resolveLast(db: Keyspace, streams: [string, string][]): [string, string][] {
  return streams.map(([key, id]) => [key, id === "$" ? idText(db.typed(key, "stream")?.lastId ?? [0, 0]) : id]);
}

/** XREAD without waiting: entries after each ID, or null when none has any. */
function read(db: Keyspace, a: string[]): RedisStreams | null {
  const { count, streams } = xreadArgs(a);
  const out: RedisStreams = [];
  for (const [key, id] of resolveLast(db, streams)) {
    const stream = db.typed(key, "stream");
    const after = rangeBound(`(${id}`, true);
    if (!stream || !after) continue;
    const entries = stream.range(after, [MAX, MAX]).slice(0, count).map(entryReply);
    if (entries.length) out.push([key, entries]);
  }
  return out.length ? out : null;
}

type RedisStreams = [string, [string, string[]][]][];

/**
 * The stream commands.
 *
 * @example
 * ```ts
 * const [, xadd] = streamCommands.XADD;
 * xadd(db, ["events", "MAXLEN", "~", "1000", "*", "event", "completed"]); // "1700000000000-0"
 * ```
 */
export const streamCommands: CommandTable = {
  XADD: [-5, (db, a) => {
    let i = 1;
    let create = true;
    let trim: Trim | undefined;
    for (;;) {
      const opt = a[i]?.toUpperCase();
      if (opt === "NOMKSTREAM") {
        create = false;
        i++;
      } else if (opt === "MAXLEN" || opt === "MINID") [trim, i] = trimOption(a, i);
      else break;
    }
    const fields = a.slice(i + 1);
    if (a[i] === undefined || fields.length === 0 || fields.length % 2 !== 0) {
      throw new ReplyError("ERR wrong number of arguments for 'xadd' command");
    }
    const existing = db.typed(a[0], "stream");
    if (!existing && !create) return null;
    const stream = existing ?? new Stream();
    const id = stream.add(a[i], fields);
    if (!existing) db.setStream(a[0], stream);
    if (trim) applyTrim(stream, trim);
    db.pushed.add(a[0]);
    return idText(id);
  }],
  XLEN: [2, (db, a) => db.typed(a[0], "stream")?.entries.length ?? 0],
  XRANGE: [-4, (db, a) => range(db, a, false)],
  XREVRANGE: [-4, (db, a) => range(db, a, true)],
  XREAD: [-4, (db, a) => read(db, a)],
  XTRIM: [-4, (db, a) => {
    const opt = a[1].toUpperCase();
    if (opt !== "MAXLEN" && opt !== "MINID") throw new ReplyError(SYNTAX);
    const [trim, next] = trimOption(a, 1);
    if (next !== a.length) throw new ReplyError(SYNTAX);
    const stream = db.typed(a[0], "stream");
    return stream ? applyTrim(stream, trim) : 0;
  }],
  XDEL: [-3, (db, a) => {
    const stream = db.typed(a[0], "stream");
    const ids = a.slice(1).map((t) => parseId(t, 0));
    if (!stream) return 0;
    const before = stream.entries.length;
    stream.entries = stream.entries.filter((e) => !ids.some((id) => compareIds(id, e.id) === 0));
    return before - stream.entries.length;
  }],
};
