/**
 * The ack book: what a capsule's held batches are, and which of their jobs
 * finished since Redis was last told. Reliable fetch takes the acks a call
 * carries as one {@link AckEntry}: its arguments go into the call; the call's
 * success confirms the entry, its failure restores it, so the acks go again
 * (they are idempotent).
 *
 * @module
 */
import type { RedisArg } from "../transport/transport.ts";
import { ChurningMap, ChurningSet } from "./churning_map.ts";

/**
 * How long a batch that is only partly done keeps its acks in memory before
 * they are written (ms). A batch of quick jobs is done well within it, and
 * then costs Redis a single `HDEL`; rewriting its state after every round
 * trip cost more Redis time than fetching it. A batch held up by a slow job
 * has its finished jobs recorded after this long, so a crash reruns at most
 * this much finished work (which the batching of acks implies anyway).
 */
const PARTIAL_ACK_DELAY_MS = 1000;

/** What the book knows of one held batch: its size and what finished since it was last told to Redis. */
interface Batch {
  readonly qi: number;
  readonly id: number;
  readonly size: number;
  /** How many fields of the held hash it is stored in (the fetch's reply said). */
  readonly pieces: number;
  /** Jobs finished or put back. */
  settled: number;
  /** Indexes acknowledged since the last call. */
  fresh: number[];
  /** When the oldest unsent ack of a batch not yet done was recorded (ms). */
  since: number;
}

/** An ack of a job that may no longer be held: (queue index, batch id, job index, raw payload). */
type RawAck = [qi: number, batch: number, index: number, raw: string];

/** The acks one call carries: its arguments, confirmed once the call succeeded, restored if it failed. */
export interface AckEntry {
  /**
   * Done batches, partial acks that are due (or all), acks with payload, in
   * the fetch script's ARGV order; `position` maps a queue index to where
   * the call names that queue.
   */
  args(position: (qi: number) => number): RedisArg[];
  /** The queues (indexes) the acks with payload touch: the call must name them. */
  readonly queues: ReadonlySet<number>;
  /** The call carrying the entry succeeded: done batches are gone from Redis. */
  confirm(): void;
  /** The call carrying the entry failed, or its reply was lost: its acks go again. */
  restore(): void;
}

/**
 * Acknowledgements waiting for the next call.
 *
 * @example
 * ```ts
 * const book = new AckBook();
 * book.track(1, 7, 10); // queue 1, batch 7, ten jobs
 * book.ack(1, 7, 0, raw, false);
 * const entry = book.take(false);
 * argv.push(...entry.args((qi) => qi));
 * await send(argv).then(() => entry.confirm(), (e) => (entry.restore(), Promise.reject(e)));
 * ```
 */
export class AckBook {
  // Churning: a batch comes and goes with nearly every fetch (see ChurningMap).
  #batches = new ChurningMap<number, Batch>();
  /** Batches with acks not yet sent. */
  #dirty = new ChurningSet<Batch>();
  #rawAcks: RawAck[] = [];

  /** Acks waiting to be sent. */
  get pending(): number {
    return this.#dirty.size + this.#rawAcks.length;
  }

  /** A batch of `size` jobs, stored in `pieces` fields, was taken from queue `qi` (1-based) under id `id`. */
  track(qi: number, id: number, size: number, pieces = 1): void {
    this.#batches.set(id, { qi, id, size, pieces, settled: 0, fresh: [], since: 0 });
  }

  /**
   * Records a finished job. One that may have been put back on its queue
   * meanwhile, or whose batch this book no longer knows, is acknowledged with
   * its payload, so a requeued copy is taken back.
   */
  ack(qi: number, id: number, index: number, raw: string, mayBeRequeued: boolean): void {
    const batch = this.#batches.get(id);
    if (mayBeRequeued || !batch) {
      this.#rawAcks.push([qi, id, index, raw]);
      if (batch) this.#settle(batch, 1, false);
      return;
    }
    batch.fresh.push(index);
    this.#settle(batch, 1);
  }

  /** The queues (indexes) of the batches this book still tracks: what the held hash may hold as far as it knows. */
  heldQueues(): Set<number> {
    return new Set([...this.#batches.values()].map((b) => b.qi));
  }

  /** Jobs of batch `id` went back to their queue: settled, as far as this process goes. */
  putBack(id: number, count: number): void {
    const batch = this.#batches.get(id);
    if (batch) this.#settle(batch, count, false);
  }

  /** The held hashes were recovered elsewhere: nothing held is this process's to acknowledge by index. */
  forget(): void {
    this.#batches.clear();
  }

  /**
   * Takes the acks the next call carries: done batches, partial acks that
   * are due (or all, with `all`), then acks with payload.
   */
  take(all: boolean): AckEntry {
    const done: Batch[] = [];
    const partial: Batch[] = [];
    const due = Date.now() - PARTIAL_ACK_DELAY_MS;
    for (const b of this.#dirty) {
      if (b.settled === b.size) done.push(b);
      else if (all || b.since <= due) partial.push(b);
    }
    const fresh = partial.map((b) => b.fresh);
    const rawAcks = this.#rawAcks;
    const args = (position: (qi: number) => number): RedisArg[] => {
      const out: RedisArg[] = [done.length];
      for (const b of done) out.push(b.id, b.pieces);
      out.push(partial.length);
      partial.forEach((b, i) => out.push(b.id, b.size, b.pieces, fresh[i].length, ...fresh[i]));
      out.push(rawAcks.length);
      for (const [qi, id, index, raw] of rawAcks) out.push(position(qi), id, index, raw);
      return out;
    };
    for (const b of partial) {
      b.fresh = [];
      this.#dirty.delete(b);
    }
    for (const b of done) this.#dirty.delete(b);
    this.#rawAcks = [];
    return {
      args,
      queues: new Set(rawAcks.map(([qi]) => qi)),
      confirm: () => {
        for (const b of done) this.#batches.delete(b.id);
      },
      restore: () => {
        partial.forEach((b, i) => {
          b.fresh.unshift(...fresh[i]);
          this.#dirty.add(b);
        });
        for (const b of done) this.#dirty.add(b);
        this.#rawAcks.unshift(...rawAcks);
      },
    };
  }

  /**
   * Counts jobs of a batch as settled. A batch whose every job is settled is
   * dropped from Redis with the next call; with `tell`, what settled is sent.
   */
  #settle(batch: Batch, count: number, tell = true): void {
    batch.settled += count;
    if (!tell && batch.settled < batch.size) return;
    if (!this.#dirty.has(batch)) {
      batch.since = Date.now();
      this.#dirty.add(batch);
    }
  }
}
