/**
 * What a process keeps of the batches its jobs belong to: each batch's
 * callback queues (so the outcome script that fires a callback is given
 * its queue's key), whether it is a flow (so return values are sent only
 * for flows' jobs) and whether it was cancelled. Read once per batch per
 * process (a batch's callbacks never change), and the cancelled batches
 * read again at most once a second while batch jobs run.
 *
 * @module
 */
import type { Keys } from "../../keys.ts";
import type { Transport } from "../../transport/transport.ts";
import { bidChain } from "./bid.ts";
import { type BatchInfo, READ_BATCH_INFO } from "./control_scripts.ts";

/** Batches kept per process before the oldest is forgotten (read again if met again). */
const MAX_KEPT = 20_000;
/** How stale the cancelled batches may be before a job of a batch reads them again, ms. */
const CANCELLED_FRESH_MS = 1000;

/**
 * The cache.
 *
 * @example
 * ```ts
 * const cache = new InfoCache();
 * await cache.load(transport, keys(), "q0tJ3bS-w5bQZf.Xy");
 * cache.queues("q0tJ3bS-w5bQZf.Xy"); // ["default"]
 * ```
 */
export class InfoCache {
  #infos = new Map<string, BatchInfo>();
  #queues = new Map<string, { also: string | undefined; queues: readonly string[] }>();
  #cancelled = new Set<string>();
  #cancelledAt = -Infinity;
  #reading: Promise<void> | undefined;

  /** Remembers a batch this process made (no read needed when its jobs run here). */
  remember(bid: string, info: BatchInfo): void {
    this.#infos.delete(bid);
    this.#infos.set(bid, info);
    if (this.#infos.size > MAX_KEPT) this.#infos.delete(this.#infos.keys().next().value!);
  }

  /** The batch, as known here. */
  get(bid: string): BatchInfo | undefined {
    return this.#infos.get(bid);
  }

  /** Whether every batch of `bid`'s chain is known here. */
  known(bid: string): boolean {
    // A root (most batches) is its own chain: no chain made per job.
    if (!bid.includes(".")) return this.#infos.has(bid);
    return bidChain(bid).every((b) => this.#infos.has(b));
  }

  /** Reads the batches of `bid`'s chain not known here (one command). */
  async load(transport: Transport, keys: Keys, bid: string): Promise<void> {
    const missing = bidChain(bid).filter((b) => !this.#infos.has(b));
    if (missing.length === 0) return;
    const infos = await transport.script(READ_BATCH_INFO, missing.map((b) => keys.batch(b)), []);
    missing.forEach((b, i) => this.remember(b, infos[i]));
  }

  /**
   * The queues the callbacks of `bid`'s chain go to, as known here, and
   * `also` (a job's own queue: most callbacks go where their batch's jobs
   * go, so a chain not known here still fires straight to its queue).
   */
  queues(bid: string, also?: string): readonly string[] {
    const kept = this.#queues.get(bid);
    if (kept && kept.also === also) return kept.queues;
    const out = new Set<string>(also === undefined ? [] : [also]);
    for (const b of bidChain(bid)) for (const q of this.#infos.get(b)?.queues ?? []) out.add(q);
    const queues = [...out];
    if (this.known(bid)) {
      if (this.#queues.size >= MAX_KEPT) this.#queues.clear();
      this.#queues.set(bid, { also, queues });
    }
    return queues;
  }

  /** Whether the cancelled batches were read more than a second ago. */
  cancelledStale(): boolean {
    return Date.now() - this.#cancelledAt >= CANCELLED_FRESH_MS;
  }

  /** Notes a batch this process cancelled (other processes read it within a second). */
  noteCancelled(bid: string): void {
    this.#cancelled.add(bid);
  }

  /** Whether `bid` or an ancestor was cancelled, as known here. */
  cancelled(bid: string): boolean {
    if (this.#cancelled.size === 0 && !bid.includes(".")) return this.#infos.get(bid)?.cancelled ?? false;
    return bidChain(bid).some((b) => this.#cancelled.has(b) || this.#infos.get(b)?.cancelled);
  }

  /** Reads the cancelled batches again if the last read is older than a second (or `force`). */
  async refreshCancelled(transport: Transport, keys: Keys, force = false): Promise<void> {
    if (!force && Date.now() - this.#cancelledAt < CANCELLED_FRESH_MS) return;
    this.#reading ??= (async () => {
      try {
        const now = Date.now();
        const bids = await transport.call("ZRANGEBYSCORE", keys.batchesCancelled, now, "+inf") as string[];
        this.#cancelled = new Set(bids);
        this.#cancelledAt = now;
      } finally {
        this.#reading = undefined;
      }
    })();
    await this.#reading;
  }
}
