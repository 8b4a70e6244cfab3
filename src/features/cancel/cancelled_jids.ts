/**
 * A worker's copy of the cancelled jids (`edgekiq:cancelled`), read
 * incrementally: the set's scores only ever grow (each cancel scores above
 * every earlier one), so a refresh asks only for what scores above the
 * highest it has read, and the heartbeat, which reads the set's highest
 * score inside its own script, says when there is anything to ask for. A
 * fleet with no new cancels sends no command for them at all.
 *
 * @module
 */
import type { Keys } from "../../keys.ts";
import type { Transport } from "../../transport/transport.ts";
import { CANCEL_TTL, MAX_CANCELS } from "../../api/cancel_job.ts";

/** Entries read per command when catching up. */
const PAGE = 1_000;

/**
 * The cancelled jids this process knows of, each with its score (when it
 * was cancelled, epoch ms).
 *
 * @example
 * ```ts
 * const jids = new CancelledJids();
 * if (jids.isBehind(watchedTop)) await jids.refresh(transport, keys());
 * jids.has("0a1b2c3d4e5f60718293a4b5"); // true once cancelled
 * ```
 */
export class CancelledJids {
  #jids = new Map<string, number>();
  /** The highest score read: everything at or below it is in `#jids` (or expired). */
  #cursor = 0;
  /** When the copy was last known complete (epoch ms). */
  #freshAt = -Infinity;
  /** When a refresh was last tried (epoch ms), so one that fails is not retried for every job. */
  #triedAt = -Infinity;
  #loading: Promise<void> | undefined;
  /** Grows whenever jids are added: what a check of running jobs compares against. */
  version = 0;

  /** Whether `jid` was cancelled. */
  has(jid: string): boolean {
    return this.#jids.has(jid);
  }

  /** How many cancelled jids are known. */
  get size(): number {
    return this.#jids.size;
  }

  /**
   * Whether the set's highest score (as a heartbeat read it) is above what
   * was read. One below it means the set was deleted and begun again (scores
   * only grow otherwise): everything is read again from the start.
   */
  isBehind(top: number | null): boolean {
    if (top !== null && top < this.#cursor) this.#cursor = 0;
    return top !== null && top > this.#cursor;
  }

  /** A heartbeat found nothing new: the copy is complete as of `now`. */
  markFresh(now: number): void {
    this.#freshAt = Math.max(this.#freshAt, now);
  }

  /**
   * What a fetched job must wait for before it is looked up: the read under
   * way, or a new one when the copy is older than `maxAgeMs` (no heartbeat
   * confirmed it since, and no read was tried since); undefined when the
   * copy is fresh.
   */
  current(transport: Transport, keys: Keys, now: number, maxAgeMs: number): Promise<void> | undefined {
    if (this.#loading) return this.#loading;
    if (now - Math.max(this.#freshAt, this.#triedAt) <= maxAgeMs) return undefined;
    return this.refresh(transport, keys);
  }

  /**
   * Reads what was cancelled since the last read (one command, more only
   * while catching up on thousands). Calls made meanwhile share it.
   */
  refresh(transport: Transport, keys: Keys): Promise<void> {
    return this.#loading ??= this.#read(transport, keys).finally(() => (this.#loading = undefined));
  }

  async #read(transport: Transport, keys: Keys): Promise<void> {
    const started = Date.now();
    this.#triedAt = started;
    let added = 0;
    for (let pages = 0; pages <= MAX_CANCELS / PAGE; pages++) {
      const reply = await transport.call(
        "ZRANGEBYSCORE",
        keys.cancelled,
        `(${this.#cursor}`,
        "+inf",
        "WITHSCORES",
        "LIMIT",
        0,
        PAGE,
      );
      const flat = Array.isArray(reply) ? reply.map(String) : [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const score = Number(flat[i + 1]);
        if (!Number.isFinite(score)) continue;
        if (!this.#jids.delete(flat[i])) added++;
        this.#jids.set(flat[i], score);
        if (score > this.#cursor) this.#cursor = score;
      }
      if (flat.length < PAGE * 2) break;
    }
    this.#prune(started);
    if (added > 0) this.version++;
    this.#freshAt = Math.max(this.#freshAt, started);
  }

  /** Drops what Redis has dropped too: cancels past their TTL, and the oldest beyond the most kept. */
  #prune(now: number): void {
    const oldest = now - CANCEL_TTL * 1000;
    // Map order is the order read, which is score order: the oldest come first.
    for (const [jid, score] of this.#jids) {
      if (score >= oldest && this.#jids.size <= MAX_CANCELS) break;
      this.#jids.delete(jid);
    }
  }
}
