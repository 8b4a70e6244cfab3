/**
 * The unique locks in Redis, as an admin API: list them, find those whose
 * job is nowhere (not queued, scheduled, retrying, held by a worker or
 * running), and clean those up. A lock outlives its job only when something
 * removed the job behind the API's back (a raw `DEL`, a poison pill buried
 * by recovery, a retry hook that discarded it); the `for` TTL bounds it in
 * any case, and this finds it sooner.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import { invalid } from "../../api/arguments.ts";
import { Workers } from "../../api/workers.ts";
import { QUEUES_FIELD, SEPARATOR } from "../../scripts/held.ts";
import { COMPARE_AND_DELETE } from "../../scripts/compare_and_delete.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { UNIQUE_FIELD } from "./mark.ts";

/** One lock: its key, the jid of the copy holding it, and its time left. */
export interface UniqueLock {
  /** The lock's key. */
  readonly key: string;
  /** The jid of the job holding it. */
  readonly jid: string;
  /** Milliseconds until it expires. */
  readonly ttlMs: number;
}

/** Options for {@link UniqueLocks.cleanOrphans}. */
export interface CleanOrphansOptions {
  /**
   * Milliseconds between the two sweeps a lock must be orphaned in before it
   * is deleted; default 30,000. A job moving between two places while a
   * sweep reads them, or one just fetched by a basic-fetch worker (seen in
   * its process's work hash only from the next heartbeat), can hide from one
   * sweep, not from two this far apart.
   */
  confirmAfterMs?: number;
}

/** Entries read per round trip. */
const PAGE = 500;

/**
 * The unique locks of a client's namespace.
 *
 * @example
 * ```ts
 * const locks = new UniqueLocks(client);
 * for await (const lock of locks.each()) console.log(lock.key, lock.jid, lock.ttlMs);
 * console.log(await locks.orphans());      // locks whose job is nowhere, right now
 * console.log(await locks.cleanOrphans()); // deletes those orphaned in two sweeps 30 s apart
 * ```
 */
export class UniqueLocks {
  #client: Client;

  /**
   * Reads locks through `client`.
   *
   * @param client The client whose transport and key prefix to use.
   */
  constructor(client: Client) {
    this.#client = client;
  }

  /**
   * Every lock (SCAN MATCH over the lock prefix, then GET and PTTL of each
   * page in one round trip). Works on every transport.
   */
  async *each(): AsyncGenerator<UniqueLock, void, undefined> {
    const t = this.#client.transport;
    const pattern = `${this.#client.keys.uniqueLockPrefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
    const seen = new Set<string>();
    let cursor = "0";
    do {
      const reply = await t.call("SCAN", cursor, "MATCH", pattern, "COUNT", PAGE);
      const [next, found] = Array.isArray(reply) ? reply : ["0", []];
      cursor = String(next);
      const keys = (Array.isArray(found) ? found : []).map(String).filter((key) => !seen.has(key));
      if (keys.length === 0) continue;
      for (const key of keys) seen.add(key);
      const replies = await t.pipeline(keys.flatMap((key) => [["GET", key], ["PTTL", key]] as const));
      for (let i = 0; i < keys.length; i++) {
        const jid = replies[2 * i];
        if (typeof jid === "string") yield { key: keys[i], jid, ttlMs: Number(replies[2 * i + 1]) };
      }
    } while (cursor !== "0");
  }

  /**
   * The locks whose job is nowhere right now: one sweep of the locks, then
   * of every place a job can be (scheduled, retrying, queued, held by a
   * reliable-fetch worker, in a worker's work hash). It reads every payload
   * in Redis: an admin operation, not a per-job one.
   */
  async orphans(): Promise<UniqueLock[]> {
    // Locks first: a lock seen was taken with its job, so the job is
    // somewhere (or gone for good) when the places are read after it.
    const locks: UniqueLock[] = [];
    for await (const lock of this.each()) locks.push(lock);
    if (locks.length === 0) return [];
    const live = await this.#liveJids();
    return locks.filter((lock) => !live.has(lock.jid));
  }

  /**
   * Deletes the locks orphaned in two sweeps `confirmAfterMs` apart, each
   * only if it still holds the same jid (a lock taken since is kept).
   * Resolves to the locks deleted.
   */
  async cleanOrphans(options: CleanOrphansOptions = {}): Promise<UniqueLock[]> {
    const wait = options.confirmAfterMs ?? 30_000;
    if (typeof wait !== "number" || !Number.isFinite(wait) || wait < 0) {
      throw invalid("clean orphaned locks", "confirmAfterMs", "a number of ms >= 0", wait);
    }
    const first = await this.orphans();
    if (first.length === 0) return [];
    await new Promise((resolve) => setTimeout(resolve, wait));
    const again = new Set((await this.orphans()).map((lock) => `${lock.key}\n${lock.jid}`));
    const confirmed = first.filter((lock) => again.has(`${lock.key}\n${lock.jid}`));
    if (confirmed.length === 0) return [];
    await this.#client.transport.script(COMPARE_AND_DELETE, confirmed.map((l) => l.key), confirmed.map((l) => l.jid));
    return confirmed;
  }

  /** The jids of every unique job somewhere, read upstream first (schedule, retry, queues, then workers). */
  async #liveJids(): Promise<Set<string>> {
    const t = this.#client.transport;
    const k = this.#client.keys;
    const live = new Set<string>();
    const note = (raw: RedisReply) => {
      if (typeof raw !== "string" || !raw.includes(UNIQUE_FIELD)) return;
      for (const one of raw.includes(SEPARATOR) ? raw.split(SEPARATOR) : [raw]) {
        const jid = jidOf(one);
        if (jid) live.add(jid);
      }
    };
    const readAll = async (key: string, command: "ZRANGE" | "LRANGE") => {
      for (let start = 0;; start += PAGE) {
        const page = await t.call(command, key, start, start + PAGE - 1);
        const raws = Array.isArray(page) ? page : [];
        raws.forEach(note);
        if (raws.length < PAGE) return;
      }
    };
    await readAll(k.schedule, "ZRANGE");
    await readAll(k.retry, "ZRANGE");
    const queues = await t.call("SMEMBERS", k.queues);
    for (const queue of Array.isArray(queues) ? queues : []) await readAll(k.queue(String(queue)), "LRANGE");
    // Held by reliable fetch: held hashes (a batch per field), their
    // queues' landing lists, and an older version's private lists.
    const registry = await t.call("HKEYS", k.heldRegistry);
    for (const key of (Array.isArray(registry) ? registry : []).map(String)) {
      if (k.parseHeld(key)) {
        const values = await t.call("HVALS", key);
        (Array.isArray(values) ? values : []).forEach(note);
        const listed = await t.call("HGET", key, QUEUES_FIELD);
        for (const queue of typeof listed === "string" && listed ? listed.split(",") : []) {
          await readAll(k.landing(key, queue), "LRANGE");
        }
      } else await readAll(key, "LRANGE");
    }
    // Running in any process, basic fetch included (written with each heartbeat).
    for (const work of await new Workers(this.#client).list()) note(work.payload.value);
    return live;
  }
}

/** The jid of a raw job (parsed: an arg may hold a `jid` field of its own). */
function jidOf(raw: string): string | undefined {
  try {
    const jid = JSON.parse(raw)?.jid;
    return typeof jid === "string" ? jid : undefined;
  } catch {
    return undefined;
  }
}
