/**
 * The keyspace: one Map from key to typed value, with lazy expiry checked on
 * every access (no timers, so an idle process exits cleanly). Command modules
 * reach the data only through it, so type checks (WRONGTYPE) and Redis's
 * "an emptied container is deleted" rule live in one place.
 *
 * @module
 */
import type { RedisReply } from "../../transport.ts";
import { ReplyError, WRONGTYPE } from "./command_args.ts";
import { Deque } from "./deque.ts";
import { ZSet } from "./zset.ts";
import type { Stream } from "./stream.ts";

/**
 * The value types, by the name TYPE reports.
 *
 * @example
 * ```ts
 * const list: Types["list"] = new Deque<string>();
 * ```
 */
export interface Types {
  /** A string value. */
  string: string;
  /** A list. */
  list: Deque<string>;
  /** A set. */
  set: Set<string>;
  /** A sorted set. */
  zset: ZSet;
  /** A hash. */
  hash: Map<string, string>;
  /** A stream (kept when emptied, as Redis keeps it). */
  stream: Stream;
}

/**
 * A stored value with its type tag and expiry.
 *
 * @example
 * ```ts
 * const entry: Entry = { type: "string", value: "v" };
 * ```
 */
export type Entry = {
  [T in keyof Types]: {
    type: T;
    value: Types[T];
    /** Epoch milliseconds, or undefined for no expiry. */
    expiresAt?: number;
  };
}[keyof Types];

/**
 * A command implementation: the keyspace and the arguments after the name,
 * already turned to strings. Throws `ReplyError` for error replies.
 *
 * @example
 * ```ts
 * const llen: Handler = (db, a) => db.typed(a[0], "list")?.length ?? 0;
 * ```
 */
export type Handler = (db: Keyspace, a: string[]) => RedisReply;

/**
 * Commands by upper-case name: Redis's arity (counting the name; negative
 * means "at least") and the handler.
 *
 * @example
 * ```ts
 * const table: CommandTable = { LLEN: [2, (db, a) => db.typed(a[0], "list")?.length ?? 0] };
 * ```
 */
export type CommandTable = Record<string, readonly [arity: number, run: Handler]>;

const empties: { [T in Exclude<keyof Types, "string" | "stream">]: () => Types[T] } = {
  list: () => new Deque<string>(),
  set: () => new Set<string>(),
  zset: () => new ZSet(),
  hash: () => new Map<string, string>(),
};

/**
 * The data of one memory database.
 *
 * @example
 * ```ts
 * const db = new Keyspace();
 * db.create("q", "list").pushLeft("job");
 * ```
 */
export class Keyspace {
  #data = new Map<string, Entry>();
  /** Lists and streams that gained items since the transport last served blocked calls. */
  readonly pushed: Set<string> = new Set();
  /** SHA-1s that SCRIPT LOAD has seen, for SCRIPT EXISTS. */
  readonly scripts: Set<string> = new Set();
  /** Commands run, for INFO's `total_commands_processed`. */
  commands = 0;

  /** The live entry at `key`, dropping it first if it has expired. */
  get(key: string): Entry | undefined {
    const e = this.#data.get(key);
    if (e?.expiresAt !== undefined && e.expiresAt <= Date.now()) {
      this.#data.delete(key);
      return undefined;
    }
    return e;
  }

  /** The value at `key` if it has type `type`; undefined if absent; WRONGTYPE otherwise. */
  typed<T extends keyof Types>(key: string, type: T): Types[T] | undefined {
    const e = this.get(key);
    if (!e) return undefined;
    if (e.type !== type) throw new ReplyError(WRONGTYPE);
    return e.value as Types[T];
  }

  /** The container at `key`, created empty if absent. Callers must `tidy` if they add nothing. */
  create<T extends Exclude<keyof Types, "string" | "stream">>(key: string, type: T): Types[T] {
    const existing = this.typed(key, type);
    if (existing) return existing;
    const value = empties[type]();
    this.#data.set(key, { type, value } as Entry);
    return value;
  }

  /** Stores a string, replacing any value and its expiry (as SET does). */
  setString(key: string, value: string, expiresAt?: number): void {
    this.#data.set(key, { type: "string", value, expiresAt });
  }

  /** Stores a new stream at `key` (XADD creates one only once its first entry is valid). */
  setStream(key: string, value: Stream): void {
    this.#data.set(key, { type: "stream", value });
  }

  /** Deletes `key`; true if a live key was there. */
  delete(key: string): boolean {
    return this.get(key) !== undefined && this.#data.delete(key);
  }

  /** Moves `from`'s value (and expiry) to `to`, replacing what `to` held; false if `from` is absent. */
  rename(from: string, to: string): boolean {
    const e = this.get(from);
    if (!e) return false;
    this.#data.delete(from);
    this.#data.set(to, e);
    if (e.type === "list") this.pushed.add(to);
    return true;
  }

  /** Deletes `key` if it holds an empty container: Redis never keeps empty ones. */
  tidy(key: string): void {
    const e = this.#data.get(key);
    if (!e || e.type === "string" || e.type === "stream") return;
    if ((e.type === "list" ? e.value.length : e.value.size) === 0) this.#data.delete(key);
  }

  /** Every live key, sweeping expired ones on the way. */
  keys(): string[] {
    const out: string[] = [];
    for (const key of [...this.#data.keys()]) if (this.get(key)) out.push(key);
    return out;
  }

  /** Empties the database. */
  clear(): void {
    this.#data.clear();
    this.pushed.clear();
  }
}
