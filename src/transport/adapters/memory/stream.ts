/**
 * A Redis stream for the memory transport: entries in ID order, each ID
 * `<ms>-<seq>`, and the last ID ever given (a stream keeps it when emptied,
 * so IDs never go back).
 *
 * @module
 */
import { ReplyError } from "./command_args.ts";

/** A stream entry ID: milliseconds and a sequence number. */
export type StreamId = readonly [ms: number, seq: number];

/** One entry: its ID and its field/value pairs, flat. */
export interface StreamEntry {
  readonly id: StreamId;
  readonly fields: readonly string[];
}

const INVALID_ID = "ERR Invalid stream ID specified as stream command argument";

/**
 * Parses an ID: `ms-seq`, or `ms` alone (seq `missing`: 0 for a start, the
 * largest for an end).
 *
 * @example
 * ```ts
 * parseId("1700000000000-3", 0); // [1700000000000, 3]
 * parseId("5", Number.MAX_SAFE_INTEGER); // [5, 9007199254740991]
 * ```
 */
export function parseId(text: string, missing: number): StreamId {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  if (!m) throw new ReplyError(INVALID_ID);
  const ms = Number(m[1]);
  const seq = m[2] === undefined ? missing : Number(m[2]);
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(seq)) throw new ReplyError(INVALID_ID);
  return [ms, seq];
}

/**
 * Compares two IDs: negative, zero or positive.
 *
 * @example
 * ```ts
 * compareIds([1, 2], [1, 3]); // -1
 * ```
 */
export function compareIds(a: StreamId, b: StreamId): number {
  return a[0] - b[0] || a[1] - b[1];
}

/**
 * An ID as Redis writes it.
 *
 * @example
 * ```ts
 * idText([1700000000000, 0]); // "1700000000000-0"
 * ```
 */
export function idText(id: StreamId): string {
  return `${id[0]}-${id[1]}`;
}

/**
 * A stream.
 *
 * @example
 * ```ts
 * const stream = new Stream();
 * stream.add("*", ["event", "completed"]); // "1700000000000-0"
 * ```
 */
export class Stream {
  /** Entries, oldest first. */
  entries: StreamEntry[] = [];
  /** The last ID given (kept when the entries are trimmed away). */
  lastId: StreamId = [0, 0];

  /** Appends an entry with `id` (`*` for a new one); returns its ID. */
  add(id: string, fields: readonly string[]): StreamId {
    let next: StreamId;
    if (id === "*") {
      const now = Date.now();
      next = now > this.lastId[0] ? [now, 0] : [this.lastId[0], this.lastId[1] + 1];
    } else if (/^\d+-\*$/.test(id)) {
      const ms = parseId(id.slice(0, -2), 0)[0];
      next = ms === this.lastId[0] ? [ms, this.lastId[1] + 1] : [ms, 0];
    } else next = parseId(id, 0);
    if (compareIds(next, [0, 0]) === 0) throw new ReplyError("ERR The ID specified in XADD must be greater than 0-0");
    if (compareIds(next, this.lastId) <= 0) {
      throw new ReplyError("ERR The ID specified in XADD is equal or smaller than the target stream top item");
    }
    this.entries.push({ id: next, fields });
    this.lastId = next;
    return next;
  }

  /** Keeps the newest `count` entries; returns how many it removed. */
  trimToLength(count: number): number {
    const removed = Math.max(0, this.entries.length - count);
    if (removed) this.entries.splice(0, removed);
    return removed;
  }

  /** Removes entries with IDs below `min`; returns how many. */
  trimBelow(min: StreamId): number {
    const keep = this.entries.findIndex((e) => compareIds(e.id, min) >= 0);
    const removed = keep < 0 ? this.entries.length : keep;
    if (removed) this.entries.splice(0, removed);
    return removed;
  }

  /** Entries from `start` to `end` inclusive, oldest first. */
  range(start: StreamId, end: StreamId): StreamEntry[] {
    return this.entries.filter((e) => compareIds(e.id, start) >= 0 && compareIds(e.id, end) <= 0);
  }
}
