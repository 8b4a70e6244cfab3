/**
 * The base of `ScheduledSet`, `RetrySet` and `DeadSet` (Sidekiq's `JobSet`):
 * size, paging, scanning, finding, and moving entries to their queues or to
 * the dead set. Works on every transport: ZRANGE by rank and ZSCAN, never
 * KEYS. On a sharded namespace's client (`shards`) it is every shard's set:
 * sizes summed, pages merged by score, scans and iteration shard by shard,
 * and each entry acted on in the shard it was read from.
 *
 * @module
 */
import type { Client } from "../client.ts";
import type { DeathHandler } from "../dead_set_rules.ts";
import { clearEntries, drainSet, enqueueFromSet, killFromSet, notifyDeath, removeEntries } from "./moves.ts";
import { SortedEntry } from "./sorted_entry.ts";
import { checkJid, checkPage, invalid } from "./arguments.ts";
import { zscan } from "./zscan.ts";
import { num, pairs, scanReply } from "../transport/reply_readers.ts";
import { readBatch } from "../scripts/read_batch.ts";
import type { Command } from "../transport/transport.ts";

/** The three job sets. */
export type JobSetName = "schedule" | "retry" | "dead";

/** Options for a job set. */
export interface JobSetOptions {
  /** Run, in order, for each job killed through this set (Sidekiq's `death_handlers`). */
  deathHandlers?: readonly DeathHandler[];
}

/** Options for {@link JobSet.page}. */
export interface PageOptions {
  /** Highest score first (latest run time, most recent death). */
  reverse?: boolean;
}

/**
 * A sorted set of jobs, scored by epoch seconds.
 *
 * @example
 * ```ts
 * const retries = new RetrySet(client);
 * await retries.size();                        // 12
 * const [first] = await retries.page(0, 25);   // soonest retry first
 * for await (const entry of retries.scan("HardJob")) await entry.kill();
 * ```
 */
export class JobSet implements AsyncIterable<SortedEntry> {
  #client: Client;
  #name: JobSetName;
  #deathHandlers: readonly DeathHandler[];
  /** Each shard's set, on a sharded namespace's client; undefined otherwise. */
  #shards: readonly JobSet[] | undefined;

  /**
   * Opens one of the three job sets.
   *
   * @param client The client whose transport, key prefix, time format and
   *   middleware to use.
   * @param name Which set: `schedule`, `retry` or `dead`.
   * @param options Death handlers for {@link JobSet.killEntries}.
   */
  constructor(client: Client, name: JobSetName, options: JobSetOptions = {}) {
    if (name !== "schedule" && name !== "retry" && name !== "dead") {
      throw invalid("open job set", "name", `"schedule", "retry" or "dead"`, name);
    }
    this.#client = client;
    this.#name = name;
    this.#deathHandlers = options.deathHandlers ?? [];
    const shards = client.shards;
    if (shards.length > 1) this.#shards = shards.map((shard) => new JobSet(shard, name, options));
  }

  /** The set's name: `schedule`, `retry` or `dead`. */
  get name(): JobSetName {
    return this.#name;
  }

  /** The set's Redis key (with the client's prefix; shard 0's on a sharded namespace). */
  get key(): string {
    return this.#client.keys[this.#name];
  }

  /** The client the set works through. */
  get client(): Client {
    return this.#client;
  }

  /** The death handlers killed jobs are reported to. */
  get deathHandlers(): readonly DeathHandler[] {
    return this.#deathHandlers;
  }

  /**
   * The number of entries (ZCARD).
   *
   * @example
   * ```ts
   * await new DeadSet(client).size(); // 3
   * ```
   */
  async size(): Promise<number> {
    if (this.#shards) return sum(await Promise.all(this.#shards.map((set) => set.size())));
    return num(await this.#client.transport.call("ZCARD", this.key));
  }

  /**
   * `count` entries from rank `start`, lowest score first, or highest first
   * with `{ reverse: true }` (ZRANGE ... WITHSCORES).
   *
   * @example
   * ```ts
   * const newestDead = await new DeadSet(client).page(0, 25, { reverse: true });
   * ```
   */
  async page(start: number = 0, count: number = 50, options: PageOptions = {}): Promise<SortedEntry[]> {
    checkPage(`page ${this.#name} set`, start, count);
    if (this.#shards) {
      // Every shard's first start + count, merged by score: exact, at a cost that grows with the page's depth.
      const pages = await Promise.all(this.#shards.map((set) => set.page(0, start + count, options)));
      const direction = options.reverse ? -1 : 1;
      return pages.flat().sort((a, b) => direction * (a.score - b.score)).slice(start, start + count);
    }
    if (!options.reverse) return this.#range(start, start + count - 1);
    return (await this.#range(-(start + count), -(start + 1))).reverse();
  }

  /**
   * Every entry, highest score first, a page at a time (Sidekiq's `each`).
   * Entries removed while iterating do not make it skip any.
   *
   * @example
   * ```ts
   * for await (const entry of new ScheduledSet(client)) console.log(entry.at, entry.klass);
   * ```
   */
  async *each(): AsyncGenerator<SortedEntry, void, undefined> {
    if (this.#shards) {
      for (const set of this.#shards) yield* set.each();
      return;
    }
    const initial = await this.size();
    let offset = 0;
    for (let page = 1;; page++) {
      const start = -page * 50 + offset;
      const end = Math.min(start + 49, -1);
      if (start > end) return;
      const entries = await this.#range(start, end);
      if (entries.length === 0) return;
      for (let i = entries.length - 1; i >= 0; i--) yield entries[i];
      offset = initial - await this.size();
    }
  }

  /** Same as {@link JobSet.each}. */
  [Symbol.asyncIterator](): AsyncGenerator<SortedEntry, void, undefined> {
    return this.each();
  }

  /**
   * Entries whose raw string contains `match` (ZSCAN MATCH `*match*`); a
   * `match` with a `*` is used as the glob pattern itself. Each entry is
   * yielded once.
   *
   * @example
   * ```ts
   * for await (const entry of retries.scan("NoMethodError")) await entry.delete();
   * ```
   */
  async *scan(match: string, count: number = 100): AsyncGenerator<SortedEntry, void, undefined> {
    if (this.#shards) {
      for (const set of this.#shards) yield* set.scan(match, count);
      return;
    }
    for await (const [value, score] of zscan(this.#client.transport, this.key, this.#pattern(match), count)) {
      yield new SortedEntry(this, score, value);
    }
  }

  /**
   * One ZSCAN call of {@link JobSet.scan}: the entries matching `match` in
   * one step from `cursor`, and the cursor to go on from (`"0"` when the
   * scan is over). For a caller that bounds its work per request, such as a
   * page that scans a little and offers to go on. An entry may come twice
   * across steps (ZSCAN's own guarantee).
   *
   * @example
   * ```ts
   * let cursor = "0";
   * do ({ entries, cursor } = await retries.scanStep("NoMethodError", cursor)); while (cursor !== "0");
   * ```
   */
  async scanStep(match: string, cursor = "0", count = 100): Promise<{ entries: SortedEntry[]; cursor: string }> {
    if (typeof cursor !== "string" || !/^\d{1,20}$/.test(cursor)) {
      throw invalid(`scan ${this.#name} set`, "cursor", "a ZSCAN cursor (digits)", cursor);
    }
    if (this.#shards) {
      // The shard's index rides in the cursor's low digits (cursor × shards + index), as SCAN across primaries does.
      const n = BigInt(this.#shards.length);
      const at = BigInt(cursor);
      const index = Number(at % n);
      const found = await this.#shards[index].scanStep(match, String(at / n), count);
      const next = found.cursor !== "0"
        ? BigInt(found.cursor) * n + BigInt(index)
        : index + 1 < this.#shards.length
        ? BigInt(index + 1)
        : 0n;
      return { entries: found.entries, cursor: String(next) };
    }
    const reply = await this.#client.transport.call(
      "ZSCAN",
      this.key,
      cursor,
      "MATCH",
      this.#pattern(match),
      "COUNT",
      count,
    );
    const [next, items] = scanReply(reply);
    return { entries: pairs(items).map(([value, score]) => new SortedEntry(this, num(score), value)), cursor: next };
  }

  /** The ZSCAN pattern for `match`: `*match*` with glob characters escaped, or `match` itself if it has a `*`. */
  #pattern(match: string): string {
    if (typeof match !== "string") throw invalid(`scan ${this.#name} set`, "match", "a string", match);
    return match.includes("*") ? match : `*${match.replace(/[?[\]\\]/g, "\\$&")}*`;
  }

  /**
   * The entry with this jid, or `null`: scans for the jid, then confirms by
   * parsing.
   *
   * @example
   * ```ts
   * const entry = await new ScheduledSet(client).findJob(jid);
   * ```
   */
  async findJob(jid: string): Promise<SortedEntry | null> {
    checkJid("find job", jid);
    for await (const entry of this.scan(jid)) if (entry.jid === jid) return entry;
    return null;
  }

  /**
   * The entries with exactly this score, optionally only the one with `jid`.
   *
   * @example
   * ```ts
   * const [entry] = await retries.fetch(entry.score, entry.jid);
   * ```
   */
  async fetch(score: number | Date, jid?: string): Promise<SortedEntry[]> {
    const s = score instanceof Date ? score.getTime() / 1000 : score;
    if (typeof s !== "number" || !Number.isFinite(s)) {
      throw invalid("fetch job", "score", "a finite number or a Date", score);
    }
    if (jid !== undefined) checkJid("fetch job", jid);
    if (this.#shards) return (await Promise.all(this.#shards.map((set) => set.fetch(s, jid)))).flat();
    const reply = await this.#client.transport.call("ZRANGE", this.key, s, s, "BYSCORE", "WITHSCORES");
    const entries = pairs(reply).map(([value, sc]) => new SortedEntry(this, num(sc), value));
    return jid === undefined ? entries : entries.filter((entry) => entry.jid === jid);
  }

  /**
   * Removes the entry with this exact raw string. Resolves to whether it was
   * there. A unique job's lock is released with it.
   *
   * @example
   * ```ts
   * await retries.deleteByValue(entry.value);
   * ```
   */
  async deleteByValue(value: string): Promise<boolean> {
    if (typeof value !== "string") throw invalid("delete job", "value", "a raw job string", value);
    if (this.#shards) {
      for (const set of this.#shards) if (await set.deleteByValue(value)) return true;
      return false;
    }
    const [removed] = await removeEntries(this.#client, { key: this.key, home: this.#name }, [value]);
    return removed;
  }

  /**
   * Removes the entry with this score and jid (Sidekiq's `delete_by_jid`).
   *
   * @example
   * ```ts
   * await retries.deleteByJid(1700000000.5, "2f8b0c4e9a1d3b5c7e9f0a1b");
   * ```
   */
  async deleteByJid(score: number | Date, jid: string): Promise<boolean> {
    checkJid("delete job", jid);
    for (const entry of await this.fetch(score, jid)) if (await this.deleteByValue(entry.value)) return true;
    return false;
  }

  /**
   * Moves entries to their queues in one script call, each only if still
   * here, through the client middleware with a fresh `enqueued_at`; with
   * `{ retry: true }` `retry_count` is decremented first (Sidekiq's manual
   * retry). Resolves to one flag per entry: whether it left the set.
   *
   * @example
   * ```ts
   * const entries = await retries.page(0, 10);
   * await retries.enqueueEntries(entries, { retry: true });
   * ```
   */
  enqueueEntries(entries: readonly SortedEntry[], options: { retry?: boolean } = {}): Promise<boolean[]> {
    if (this.#shards) return this.#byShard(entries, (set, own) => set.enqueueEntries(own, options));
    return enqueueFromSet(this.#client, this.key, entries.map((e) => e.value), options.retry ?? false);
  }

  /**
   * Moves entries to the dead set in one script call, each only if still in
   * this set, and trims `dead` (six months, 10,000 jobs); then runs the death
   * handlers for each moved job. Resolves to one flag per entry.
   *
   * @example
   * ```ts
   * await retries.killEntries(await retries.page(0, 10));
   * ```
   */
  killEntries(entries: readonly SortedEntry[]): Promise<boolean[]> {
    if (this.#shards) return this.#byShard(entries, (set, own) => set.killEntries(own));
    return this.#kill(entries.map((e) => e.value));
  }

  async #kill(raws: readonly string[]): Promise<boolean[]> {
    const moved = await killFromSet(this.#client, this.key, raws);
    const error = new Error("Job killed by API");
    for (let i = 0; i < raws.length; i++) if (moved[i]) await notifyDeath(this.#deathHandlers, raws[i], error);
    return moved;
  }

  /**
   * Deletes every entry, releasing the locks of the unique jobs among them
   * (see `Queue#clear`; dead jobs hold none).
   *
   * @example
   * ```ts
   * await new ScheduledSet(client).clear();
   * ```
   */
  async clear(): Promise<boolean> {
    if (this.#shards) {
      await Promise.all(this.#shards.map((set) => set.clear()));
      return true;
    }
    if (this.#name === "dead") await this.#client.transport.call("UNLINK", this.key);
    else await clearEntries(this.#client, { key: this.key, home: this.#name });
    return true;
  }

  /**
   * Retries every entry now (see {@link SortedEntry.retry}), a batch per
   * round trip, lowest score first. Unreadable entries stay. Resolves to
   * how many entries left the set.
   *
   * @example
   * ```ts
   * await new RetrySet(client).retryAll();
   * ```
   */
  retryAll(): Promise<number> {
    if (this.#shards) return Promise.all(this.#shards.map((set) => set.retryAll())).then(sum);
    return drainSet(this.#client.transport, this.key, (raws) => enqueueFromSet(this.#client, this.key, raws, true));
  }

  /**
   * Moves every entry to the dead set, a batch per round trip. Resolves to
   * how many moved (0 for the dead set itself).
   *
   * @example
   * ```ts
   * await new RetrySet(client).killAll();
   * ```
   */
  killAll(): Promise<number> {
    // Killing a dead entry re-adds it scored now: draining would never end.
    if (this.#name === "dead") return Promise.resolve(0);
    if (this.#shards) return Promise.all(this.#shards.map((set) => set.killAll())).then(sum);
    return drainSet(this.#client.transport, this.key, (raws) => this.#kill(raws));
  }

  /**
   * The entries at these scores with these jids (the dashboard's selection),
   * one round trip per shard; those gone are left out.
   *
   * @example
   * ```ts
   * const [entry] = await retries.entriesAt([{ score: 1700000000.5, jid: "2f8b0c4e9a1d3b5c7e9f0a1b" }]);
   * ```
   */
  async entriesAt(wanted: readonly { score: number; jid: string }[]): Promise<SortedEntry[]> {
    if (this.#shards) return (await Promise.all(this.#shards.map((set) => set.entriesAt(wanted)))).flat();
    const replies = await readBatch(
      this.#client.transport,
      wanted.map((k): Command => ["ZRANGE", this.key, k.score, k.score, "BYSCORE", "WITHSCORES"]),
    );
    return wanted.flatMap((k, i) => {
      const match = pairs(replies[i]).map(([value, score]) => new SortedEntry(this, num(score), value))
        .find((entry) => entry.jid === k.jid);
      return match ? [match] : [];
    });
  }

  /**
   * Removes these entries (ZREM of their raw strings), each from the set it
   * was read from, without the features' delete ops (the dashboard's bulk
   * delete). Resolves to how many were there.
   *
   * @example
   * ```ts
   * await retries.removeEntries(await retries.page(0, 10));
   * ```
   */
  async removeEntries(entries: readonly SortedEntry[]): Promise<number> {
    if (entries.length === 0) return 0;
    if (this.#shards) {
      const counts = await Promise.all(this.#groups(entries).map(({ set, own }) => set.removeEntries(own)));
      return sum(counts);
    }
    return num(await this.#client.transport.call("ZREM", this.key, ...entries.map((e) => e.value)));
  }

  /**
   * Each shard's set with its own entries among `entries` (by the key of the
   * set each was read from, so entries read through another instance of this
   * set count too), and where they were in `entries`.
   */
  #groups(entries: readonly SortedEntry[]): { set: JobSet; own: SortedEntry[]; at: number[] }[] {
    return this.#shards!.map((set) => {
      const at: number[] = [];
      entries.forEach((entry, i) => entry.parent.key === set.key && at.push(i));
      return { set, own: at.map((i) => entries[i]), at };
    }).filter((group) => group.at.length > 0);
  }

  /** Runs `act` on each shard's own entries; one flag per entry, in order (false for an entry of no shard). */
  async #byShard(
    entries: readonly SortedEntry[],
    act: (set: JobSet, own: SortedEntry[]) => Promise<boolean[]>,
  ): Promise<boolean[]> {
    const out: boolean[] = new Array(entries.length).fill(false);
    await Promise.all(
      this.#groups(entries).map(async ({ set, own, at }) => {
        const flags = await act(set, own);
        at.forEach((i, j) => (out[i] = flags[j]));
      }),
    );
    return out;
  }

  async #range(start: number, end: number): Promise<SortedEntry[]> {
    const reply = await this.#client.transport.call("ZRANGE", this.key, start, end, "WITHSCORES");
    return pairs(reply).map(([value, score]) => new SortedEntry(this, num(score), value));
  }
}

function sum(counts: readonly number[]): number {
  return counts.reduce((a, b) => a + b, 0);
}
