/**
 * Concurrency slots kept between the jobs of one process. A job's slot,
 * given back with its outcome, goes to the next job here that asks the same
 * limiter, instead of a release and a take in Redis per job: measured on a
 * no-op drain with a declared concurrency limit that is not the bottleneck,
 * those two calls were half a command per job and most of the drain's time.
 *
 * The limit still holds at every instant: a kept slot stays a holder in
 * Redis (its lease renewed while a job runs in it), so the process never
 * runs more jobs of a limiter than the slots it holds there. Two bounds keep
 * other processes' chances: a slot left unused for `graceMs` goes back to
 * Redis, and a slot taken longer than `reuseMs` ago is stale: the next job
 * gives it back and then takes a slot afresh, so each slot passes through
 * Redis, where every process's take competes, at least that often.
 *
 * @module
 */
import type { ReceiveContext } from "../../server/worker_feature.ts";
import type { Transport } from "../../transport/transport.ts";
import type { Limiter } from "./limiter.ts";

/** A concurrent slot this process holds in Redis, running a job or kept for the next one. */
export interface Slot {
  readonly limiter: Limiter;
  /** Its holder in the limiter's set: the jid of the job that took it and a random part (the slot outlives the job). */
  readonly holder: string;
  /** When it was taken (this process's clock). */
  readonly takenAt: number;
  /** Where it was taken: the transport and keys to give it back with. */
  readonly site: ReceiveContext;
  /** Jobs that have run in it, and their time in it (ms): the limiter's measured hold time and use count. */
  runs: number;
  heldMs: number;
}

/** Options for {@link SlotPool}. */
export interface SlotPoolOptions {
  /** A slot taken longer ago than this is stale: given back before a job takes one afresh (ms). */
  readonly reuseMs: (limiter: Limiter) => number;
  /** A kept slot no job has taken for this long goes back to Redis (ms). */
  readonly graceMs: number;
  /** Gives slots back to Redis (in the background: a failure leaves them to their leases). */
  readonly release: (slots: Slot[]) => void;
}

/**
 * The slots kept between jobs, per limiter.
 *
 * @example
 * ```ts
 * const pool = new SlotPool({ reuseMs: () => 1000, graceMs: 20, release: (slots) => giveBack(slots) });
 * let slot = pool.take(limiter, site);
 * if (slot && pool.stale(slot)) slot = (await giveBack([slot]), undefined);
 * slot ??= await takeFromRedis(limiter);
 * // ... the job runs ...
 * pool.keep(slot);
 * ```
 */
export class SlotPool {
  readonly #options: SlotPoolOptions;
  /** Kept slots per Redis and limiter identity, each with when it was kept. */
  readonly #kept = new Map<Transport, Map<string, { slot: Slot; since: number }[]>>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: SlotPoolOptions) {
    this.#options = options;
  }

  /** A kept slot of `limiter` on `site`'s Redis for the next job (see {@link SlotPool.stale}), or undefined. */
  take(limiter: Limiter, site: ReceiveContext): Slot | undefined {
    const byLimiter = this.#kept.get(site.transport);
    const key = identity(limiter, site);
    const list = byLimiter?.get(key);
    if (!list) return undefined;
    // Newest first: the oldest kept slot is the one the grace sweep gives back if no job wants it.
    const { slot } = list.pop()!;
    if (!list.length) byLimiter!.delete(key);
    if (!byLimiter!.size) this.#kept.delete(site.transport);
    return slot;
  }

  /** Whether `slot` was taken too long ago to run another job: give it back, then take one afresh. */
  stale(slot: Slot): boolean {
    return Date.now() - slot.takenAt >= this.#options.reuseMs(slot.limiter);
  }

  /** Keeps `slot` for the next job. */
  keep(slot: Slot): void {
    let byLimiter = this.#kept.get(slot.site.transport);
    if (!byLimiter) this.#kept.set(slot.site.transport, byLimiter = new Map());
    const key = identity(slot.limiter, slot.site);
    let list = byLimiter.get(key);
    if (!list) byLimiter.set(key, list = []);
    list.push({ slot, since: Date.now() });
    this.#timer ??= setTimeout(() => this.#sweep(), this.#options.graceMs);
  }

  /** Empties the pool (at a stop): every kept slot, to give back. */
  empty(): Slot[] {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const all = [...this.#kept.values()].flatMap((byLimiter) => [...byLimiter.values()].flat().map((k) => k.slot));
    this.#kept.clear();
    return all;
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = Date.now();
    const idle: Slot[] = [];
    for (const [transport, byLimiter] of this.#kept) {
      for (const [key, list] of byLimiter) {
        const keep = list.filter((k) => now - k.since < this.#options.graceMs);
        for (const k of list) if (now - k.since >= this.#options.graceMs) idle.push(k.slot);
        if (keep.length) byLimiter.set(key, keep);
        else byLimiter.delete(key);
      }
      if (!byLimiter.size) this.#kept.delete(transport);
    }
    if (idle.length) this.#options.release(idle);
    if (this.#kept.size) this.#timer = setTimeout(() => this.#sweep(), this.#options.graceMs);
  }
}

/** Slots are interchangeable only between limiters of one key (name and namespace) and one definition. */
function identity(limiter: Limiter, site: ReceiveContext): string {
  return `${site.keys.limiter(limiter.name)}\n${limiter.limit}\n${limiter.perMs}`;
}
