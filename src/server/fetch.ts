/**
 * The fetcher: the Redis side of one capsule's fetching. It takes batches,
 * blocks when asked, acknowledges, requeues and releases; it keeps no job
 * itself (the {@link Feeder} holds and hands them out).
 *
 * - Reliable fetch (default): a job moves atomically from its queue into this
 *   capsule's held hash under a short token, and leaves it only when
 *   acknowledged, so a crash loses nothing; survivors recover the hashes of
 *   dead processes.
 * - Basic fetch (Sidekiq OSS): jobs are popped; a crash mid-job loses it.
 *
 * Faults: transports never resend a fetch whose reply was lost. The fetcher
 * remembers the tokens such a request may have taken and releases them with
 * its next call: whatever it took goes back to the queue, and a late run of
 * the lost request takes nothing. Acks are idempotent (`HDEL`) and are sent
 * again after a failure.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { AckBook } from "./ack_book.ts";
import { FETCH, POP, RELEASE_KEYS } from "../scripts/fetch.ts";
import { BATCH_SPAN } from "../scripts/held.ts";
import { startingNow } from "../scripts/recover.ts";
import { RELEASE } from "../scripts/release.ts";
import { REQUEUE } from "../scripts/requeue.ts";
import type { Command, RedisArg, RedisReply, Transport } from "../transport/transport.ts";
import type { QueueList } from "./queues.ts";
import { type UnitOfWork, unitOfWork } from "./unit_of_work.ts";

/** Options for {@link Fetcher}. */
export interface FetcherOptions {
  transport: Transport;
  keys: Keys;
  /** The owning process's identity (names the held hashes). */
  identity: string;
  /** The capsule's name (names the held hashes). */
  capsule: string;
  queues: QueueList;
  /** Reliable (default) or basic fetch. */
  reliable: boolean;
  /** Seconds a blocking fetch waits when idle (TCP only); Sidekiq's 2. */
  blockSeconds: number;
  /** Seconds the process entry lives: every fetch renews it (a fetching process is alive). */
  ttl: number;
}

/** What one {@link Fetcher.take} got. */
export interface Take {
  readonly units: UnitOfWork[];
  /** False when this process's entry had expired: beat before fetching again. */
  readonly alive: boolean;
  /**
   * The held hashes had been recovered by another process (this one stalled
   * past its TTL) and were registered again: jobs held from before may be
   * back on their queues.
   */
  readonly reregistered: boolean;
}

const NOTHING: Take = { units: [], alive: true, reregistered: false };

/**
 * Fetches and acknowledges jobs for one capsule.
 *
 * @example
 * ```ts
 * const fetcher = new Fetcher({ transport, keys: keys(), identity, capsule: "default",
 *   queues: parseQueues(["default"]), reliable: true, blockSeconds: 2, ttl: 60 });
 * const { units } = await fetcher.take(10, 10);
 * fetcher.ack(units[0]);
 * await fetcher.flush();
 * ```
 */
export class Fetcher {
  #o: FetcherOptions;
  #names: readonly string[];
  #index = new Map<string, number>();
  #queueKeys: string[];
  #heldKeys: string[];
  #scriptKeys: string[];
  /** The next batch id; job i of batch b has token `b * 1000 + i`. */
  #next = 1;
  #acks = new AckBook();
  #released: number[] = [];
  #unlocks: Array<[key: string, value: string]> = [];
  #landing: [queueIndex: number, batch: number] | undefined;
  #mark = 0;
  #sentMark = 0;
  /** A call on its way that carries the started mark up to `upTo`. */
  #markWrite: { upTo: number; done: Promise<void> } | undefined;
  #rotation = 0;

  constructor(options: FetcherOptions) {
    this.#o = options;
    const k = options.keys;
    this.#names = options.queues.names;
    this.#names.forEach((q, i) => this.#index.set(q, i + 1));
    this.#queueKeys = this.#names.map((q) => k.queue(q));
    this.#heldKeys = this.#names.map((q) => k.held(options.identity, options.capsule, q));
    const landing = this.#heldKeys.map((h) => k.landing(h));
    this.#scriptKeys = [...this.#queueKeys, ...this.#heldKeys, ...landing];
  }

  /** The capsule's distinct queue names. */
  get queues(): readonly string[] {
    return this.#names;
  }

  /** Each queue's weight. */
  get weights(): Readonly<Record<string, number>> {
    return this.#o.queues.weights;
  }

  /** The queue mode. */
  get mode(): string {
    return this.#o.queues.mode;
  }

  /** The held hashes, one per queue (empty with basic fetch). */
  get heldKeys(): readonly string[] {
    return this.#o.reliable ? this.#heldKeys : [];
  }

  /**
   * Registers the held hashes, so another process recovers them if this one
   * dies. Every fetch re-registers them if they were lost, so this is only
   * the first registration.
   */
  async register(): Promise<void> {
    if (!this.#o.reliable) return;
    const fields = this.#heldKeys.flatMap((h) => [h, this.#o.identity]);
    await this.#o.transport.call("HSET", this.#o.keys.inflightRegistry, ...fields);
  }

  /**
   * Records a finished job; it is sent with the next fetch or flush. A job
   * that may have been put back on its queue meanwhile (hard shutdown, or
   * recovered while this process stalled) is acknowledged with its payload,
   * so the requeued copy is taken back if it has not started elsewhere.
   */
  ack(unit: UnitOfWork, mayBeRequeued = false): void {
    if (!this.#o.reliable) return;
    const id = Math.floor(unit.token / BATCH_SPAN);
    this.#acks.ack(this.#index.get(unit.queue)!, id, unit.token % BATCH_SPAN, unit.raw, mayBeRequeued);
  }

  /**
   * Deletes `key` if it still holds `value`, with the next call: a lock a
   * job's middleware let go of, at no Redis command of its own.
   */
  releaseLater(key: string, value: string): void {
    this.#unlocks.push([key, value]);
  }

  /**
   * Records that a job started here. Jobs start in token order, so one mark
   * (sent with the next call) tells recovery which held jobs were running.
   */
  started(unit: UnitOfWork): void {
    if (unit.token > this.#mark) this.#mark = unit.token;
  }

  /**
   * Writes that `unit` started, before it runs: a recovered job may be the
   * pill that killed its last process, and a pill that kills this one too
   * before the next call would otherwise die uncounted. Starts recorded
   * meanwhile share one call.
   */
  writeStart(unit: UnitOfWork): Promise<void> {
    if (!this.#o.reliable || unit.token <= this.#sentMark) return Promise.resolve();
    const pending = this.#markWrite;
    if (pending && pending.upTo >= unit.token) return pending.done;
    const write = {
      upTo: this.#mark,
      done: this.flush().finally(() => {
        if (this.#markWrite === write) this.#markWrite = undefined;
      }),
    };
    this.#markWrite = write;
    return write.done;
  }

  /**
   * Sends pending acks and takes up to `max` jobs (at most 1,000) in one
   * round trip; the first `startNow` of them start at once (for poison-pill
   * counting).
   */
  async take(max: number, startNow = 0): Promise<Take> {
    return this.#call(max, startNow, false);
  }

  async #call(max: number, startNow: number, all: boolean): Promise<Take> {
    if (!this.#o.reliable) return this.#pop(max);
    max = Math.min(max, BATCH_SPAN);
    const batch = this.#next;
    if (max > 0) this.#next++;
    const order = this.#o.queues.order().map((q) => this.#index.get(q)!);
    const mark = this.#mark > this.#sentMark ? this.#mark : 0;
    const argv: RedisArg[] = [
      this.#o.identity,
      this.#o.ttl,
      max,
      batch,
      Math.min(startNow, max),
      mark,
      this.#landing?.[0] ?? 0,
      this.#landing?.[1] ?? 0,
      Date.now() / 1000,
      this.#unlocks.length,
      ...this.#names,
      ...this.#unlocks.map(([, value]) => value),
      order.length,
      ...order,
      this.#released.length,
      ...this.#released,
    ];
    const acks = this.#acks.write(argv, all);
    const sent = { released: this.#released, unlocks: this.#unlocks };
    const landing = this.#landing;
    this.#released = [];
    this.#unlocks = [];
    this.#landing = undefined;
    let result;
    try {
      result = await this.#o.transport.script(FETCH, [
        this.#o.keys.process(this.#o.identity),
        this.#o.keys.inflightRegistry,
        this.#o.keys.dead,
        ...this.#scriptKeys,
        ...sent.unlocks.map(([key]) => key),
      ], argv);
    } catch (error) {
      // Not done, or done with the reply lost: acks are sent again (they
      // are idempotent), and whatever this request may have taken is released.
      this.#acks.restore(acks);
      this.#released.unshift(...sent.released);
      this.#unlocks.unshift(...sent.unlocks);
      if (max > 0) this.#released.push(batch);
      this.#landing ??= landing;
      throw error;
    }
    this.#acks.confirm(acks);
    if (mark) this.#sentMark = mark;
    // Run before: what that run took is held but was never seen here. Give it back.
    if (result.replayed) this.#released.push(batch);
    if (!result.alive) return { units: [], alive: false, reregistered: false };
    // Recovered while stalled: what was held is back on its queues.
    if (result.reregistered) this.#acks.forget();
    if (result.jobs.length === 0) return { units: [], alive: true, reregistered: result.reregistered };
    const queue = this.#names[result.queueIndex];
    this.#acks.track(result.queueIndex + 1, batch, result.jobs.length);
    // The script recorded these as started.
    const startedHere = batch * BATCH_SPAN + startingNow(result.jobs, startNow) - 1;
    if (startedHere >= batch * BATCH_SPAN && startedHere > this.#sentMark) this.#sentMark = startedHere;
    const units = result.jobs.map((raw, i) => unitOfWork(queue, raw, batch * BATCH_SPAN + i));
    return { units, alive: true, reregistered: result.reregistered };
  }

  /**
   * Waits once (up to `blockSeconds`) for a job on one of the queues, in turn,
   * and takes it. `signal` cuts the wait short; once this settles nothing
   * more can be taken by it. Returns the job, or nothing.
   */
  async block(signal: AbortSignal): Promise<UnitOfWork[]> {
    if (signal.aborted) return [];
    const order = this.#o.queues.order();
    const k = this.#o.keys;
    if (!this.#o.reliable) {
      const reply = await this.#o.transport.block(["BRPOP", ...this.#queueKeys, this.#o.blockSeconds], { signal });
      if (!Array.isArray(reply)) return [];
      return [unitOfWork(k.queueName(String(reply[0])), String(reply[1]), 0)];
    }
    // BLMOVE watches one list: rotate through the queues (in this fetch's
    // weighted order) so every queue is watched in turn; the batch fetch
    // before each block checks all of them. The job lands in a transit list
    // under a token assigned now; the next call adopts it into the held hash.
    const queue = order[this.#rotation++ % order.length];
    const qi = this.#index.get(queue)!;
    const batch = this.#next++;
    // Named to the next call only once the command is over: a call made
    // meanwhile (a suspect's flush) would find the landing list still empty,
    // and the job landing after it would be adopted by no one.
    let raw: RedisReply;
    try {
      // Once this settles the command is over on the server; a job that won
      // the race against an abort is returned, and ours like any other.
      raw = await this.#o.transport.block([
        "BLMOVE",
        this.#queueKeys[qi - 1],
        k.landing(this.#heldKeys[qi - 1]),
        "RIGHT",
        "LEFT",
        this.#o.blockSeconds,
      ], { signal });
    } catch (error) {
      // Reply lost: a job may have landed that nobody runs. Adopt it and
      // give it back with the next call.
      this.#landing = [qi, batch];
      this.#released.push(batch);
      throw error;
    }
    if (typeof raw !== "string") return [];
    this.#landing = [qi, batch];
    this.#acks.track(qi, batch, 1);
    return [unitOfWork(queue, raw, batch * BATCH_SPAN)];
  }

  /** Sends pending acks and marks on their own (at quiet, stop, or when nothing else will). */
  async flush(): Promise<void> {
    if (!this.#o.reliable) {
      if (this.#unlocks.length) await this.#pop(0);
      return;
    }
    const idle = this.#acks.pending === 0 && this.#released.length === 0 &&
      this.#unlocks.length === 0 && !this.#landing &&
      this.#mark <= this.#sentMark;
    if (!idle) await this.#call(0, 0, true);
  }

  /**
   * Puts jobs back at the front of their queues, in their order. With
   * reliable fetch only jobs still held go back (never one already
   * acknowledged or recovered). Returns how many went back.
   */
  async requeue(units: readonly UnitOfWork[]): Promise<number> {
    if (units.length === 0) return 0;
    if (!this.#o.reliable) {
      const commands: Command[] = [];
      for (const u of [...units].reverse()) commands.push(["RPUSH", this.#o.keys.queue(u.queue), u.raw]);
      await this.#o.transport.pipeline(commands, { atomic: true });
      return units.length;
    }
    const argv: RedisArg[] = [this.#landing?.[0] ?? 0, this.#landing?.[1] ?? 0];
    const groups = new Map<number, number[]>();
    for (const u of units) {
      const id = Math.floor(u.token / BATCH_SPAN);
      const group = groups.get(id);
      if (group) group.push(u.token % BATCH_SPAN);
      else groups.set(id, [u.token % BATCH_SPAN]);
    }
    for (const [id, indexes] of groups) {
      argv.push(this.#index.get(units.find((u) => Math.floor(u.token / BATCH_SPAN) === id)!.queue)!, id);
      argv.push(indexes.length, ...indexes);
    }
    const n = await this.#o.transport.script(REQUEUE, this.#scriptKeys, argv);
    this.#landing = undefined;
    // Put back (or no longer held anyway): settled, as far as this process goes.
    for (const [id, indexes] of groups) this.#acks.putBack(id, indexes.length);
    return n;
  }

  /**
   * At a clean stop: sends pending acks, then gives back whatever the held
   * hashes still hold and drops their registration. Returns how many jobs
   * went back.
   */
  async release(): Promise<number> {
    if (!this.#o.reliable) return 0;
    await this.flush().catch(() => {}); // the release below returns what an unsent ack would have removed
    let n = 0;
    for (let i = 0; i < this.#heldKeys.length; i++) {
      const held = this.#heldKeys[i];
      n += await this.#o.transport.script(RELEASE, [
        held,
        this.#o.keys.landing(held),
        this.#queueKeys[i],
        this.#o.keys.inflightRegistry,
      ], []);
    }
    return n;
  }

  async #pop(max: number): Promise<Take> {
    if (this.#unlocks.length) {
      const unlocks = this.#unlocks;
      this.#unlocks = [];
      try {
        await this.#o.transport.script(RELEASE_KEYS, unlocks.map(([key]) => key), unlocks.map(([, value]) => value));
      } catch (error) {
        this.#unlocks.unshift(...unlocks);
        throw error;
      }
    }
    if (max === 0) return NOTHING;
    const order = this.#o.queues.order();
    const result = await this.#o.transport.script(POP, order.map((q) => this.#o.keys.queue(q)), [max]);
    if (result.queueIndex < 0) return NOTHING;
    const queue = order[result.queueIndex];
    return { units: result.jobs.map((raw) => unitOfWork(queue, raw, 0)), alive: true, reregistered: false };
  }
}
