/**
 * The fetcher a capsule's processors share. It never holds a job it has not
 * handed out, and it batches: one round trip acknowledges every finished job
 * and takes the next batch.
 *
 * - Reliable fetch (default): jobs move atomically into a private list per
 *   process and queue, and leave it only when acknowledged, so a crash loses
 *   nothing; survivors recover the lists of dead processes.
 * - Basic fetch (Sidekiq OSS): jobs are popped; a crash mid-job loses it.
 *
 * When the queues are empty a TCP transport blocks once (BLMOVE / BRPOP); an
 * HTTP transport returns nothing and the capsule backs off.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { FETCH } from "../scripts/fetch.ts";
import { RELEASE } from "../scripts/release.ts";
import { REQUEUE } from "../scripts/requeue.ts";
import type { RedisArg, Transport } from "../transport/transport.ts";
import type { QueueList } from "./queues.ts";

/** A job handed to a processor: its queue and raw payload. */
export interface UnitOfWork {
  readonly queue: string;
  readonly raw: string;
}

/** Options for {@link Fetcher}. */
export interface FetcherOptions {
  transport: Transport;
  keys: Keys;
  /** The owning process's identity (names the private lists). */
  identity: string;
  queues: QueueList;
  /** Reliable (default) or basic fetch. */
  reliable: boolean;
  /** Seconds a blocking pop waits when idle (TCP only); Sidekiq's 2. */
  blockSeconds: number;
}

/**
 * Fetches and acknowledges jobs for one capsule.
 *
 * @example
 * ```ts
 * const fetcher = new Fetcher({ transport, keys: keys(), identity, queues: parseQueues(["default"]), reliable: true, blockSeconds: 2 });
 * const units = await fetcher.take(10, true);
 * fetcher.ack(units[0]);
 * await fetcher.flush();
 * ```
 */
export class Fetcher {
  #o: FetcherOptions;
  #acks = new Map<string, string[]>();
  #ackCount = 0;
  #rotation = 0;

  constructor(options: FetcherOptions) {
    this.#o = options;
  }

  /** The capsule's distinct queue names. */
  get queues(): readonly string[] {
    return this.#o.queues.names;
  }

  /** Each queue's weight. */
  get weights(): Readonly<Record<string, number>> {
    return this.#o.queues.weights;
  }

  /** The queue mode. */
  get mode(): string {
    return this.#o.queues.mode;
  }

  /** Whether jobs live in private lists until acknowledged. */
  get reliable(): boolean {
    return this.#o.reliable;
  }

  /** Acknowledged jobs not yet sent to Redis. */
  get pendingAcks(): number {
    return this.#ackCount;
  }

  /** The private list holding this process's in-flight jobs from `queue`. */
  privateList(queue: string): string {
    return this.#o.keys.inflight(this.#o.identity, queue);
  }

  /**
   * Registers the private lists, so another process can recover them if
   * this one dies. Call once before fetching.
   */
  async register(): Promise<void> {
    if (!this.#o.reliable) return;
    const fields: string[] = [];
    for (const q of this.#o.queues.names) fields.push(this.privateList(q), this.#o.identity);
    await this.#o.transport.call("HSET", this.#o.keys.inflightRegistry, ...fields);
  }

  /**
   * Drops the registration after a clean stop. Anything still in a private
   * list (nothing runs any more) goes back to its queue first. Returns how
   * many jobs went back.
   */
  async unregister(): Promise<number> {
    if (!this.#o.reliable) return 0;
    let n = 0;
    for (const q of this.#o.queues.names) {
      const list = this.privateList(q);
      n += await this.#o.transport.script(RELEASE, [list, this.#o.keys.queue(q), this.#o.keys.inflightRegistry], [
        list,
      ]);
    }
    return n;
  }

  /** Records a finished job; it is sent with the next fetch or flush. */
  ack(unit: UnitOfWork): void {
    if (!this.#o.reliable) return;
    const list = this.#acks.get(unit.queue);
    if (list) list.push(unit.raw);
    else this.#acks.set(unit.queue, [unit.raw]);
    this.#ackCount++;
  }

  /**
   * Sends pending acks and takes up to `max` jobs in one round trip. If
   * nothing is there and `block` is set on a blocking transport, waits once
   * for a single job. Returns what it got (possibly nothing).
   */
  async take(max: number, block: boolean): Promise<UnitOfWork[]> {
    const order = this.#o.queues.order();
    const got = await this.#script(order, max);
    if (got.length > 0 || !block || !this.#o.transport.blocking || max === 0) return got;
    return this.#block(order);
  }

  /** Sends pending acks on their own (at quiet, stop, or when nothing else will). */
  async flush(): Promise<void> {
    if (this.#ackCount > 0) await this.#script(this.#o.queues.names.slice(), 0);
  }

  /**
   * Puts jobs back at the front of their queues. With reliable fetch only
   * jobs still in this process's private lists go back.
   */
  async requeue(units: readonly UnitOfWork[]): Promise<number> {
    const byQueue = new Map<string, string[]>();
    for (const u of units) {
      const list = byQueue.get(u.queue);
      if (list) list.push(u.raw);
      else byQueue.set(u.queue, [u.raw]);
    }
    let n = 0;
    for (const [queue, raws] of byQueue) {
      const keys = [this.#o.keys.queue(queue)];
      if (this.#o.reliable) keys.push(this.privateList(queue));
      n += await this.#o.transport.script(REQUEUE, keys, raws);
    }
    return n;
  }

  async #script(order: string[], max: number): Promise<UnitOfWork[]> {
    const k = this.#o.keys;
    const keys = order.map((q) => k.queue(q));
    if (this.#o.reliable) { for (const q of order) keys.push(this.privateList(q)); }
    const argv: RedisArg[] = [max, this.#ackCount];
    if (this.#ackCount > 0) {
      // Acks name their queue by index into this call's order; a queue
      // missing from the order (not possible today) would be added.
      for (const [queue, raws] of this.#acks) {
        let index = order.indexOf(queue);
        if (index < 0) {
          order.push(queue);
          keys.splice(order.length - 1, 0, k.queue(queue));
          keys.push(this.privateList(queue));
          index = order.length - 1;
        }
        for (const raw of raws) argv.push(index + 1, raw);
      }
    }
    argv.push(this.#o.reliable ? 1 : 0);
    const acks = this.#acks;
    const ackCount = this.#ackCount;
    this.#acks = new Map();
    this.#ackCount = 0;
    let result;
    try {
      result = await this.#o.transport.script(FETCH, keys, argv);
    } catch (error) {
      // Not acknowledged after all: keep them for the next attempt.
      for (const [queue, raws] of acks) {
        const list = this.#acks.get(queue);
        if (list) list.push(...raws);
        else this.#acks.set(queue, raws);
      }
      this.#ackCount += ackCount;
      throw error;
    }
    if (result.queueIndex < 0) return [];
    const queue = order[result.queueIndex];
    return result.jobs.map((raw) => ({ queue, raw }));
  }

  async #block(order: string[]): Promise<UnitOfWork[]> {
    const k = this.#o.keys;
    const seconds = this.#o.blockSeconds;
    if (!this.#o.reliable) {
      const reply = await this.#o.transport.call("BRPOP", ...order.map((q) => k.queue(q)), seconds) as string[] | null;
      return reply ? [{ queue: k.queueName(reply[0]), raw: reply[1] }] : [];
    }
    // BLMOVE watches one list. Rotate through the queues (in this fetch's
    // weighted order) so every queue is watched in turn; the batch script
    // before each block checks all of them.
    const queue = order[this.#rotation++ % order.length];
    const raw = await this.#o.transport.call(
      "BLMOVE",
      k.queue(queue),
      this.privateList(queue),
      "RIGHT",
      "LEFT",
      seconds,
    );
    return typeof raw === "string" ? [{ queue, raw }] : [];
  }
}
