/**
 * Reliable fetch, the default strategy (Sidekiq Pro's super_fetch idea, on
 * held hashes): a job moves atomically from its queue into this capsule's
 * held hash under a short token, and leaves it only when acknowledged, so a
 * crash loses nothing; survivors recover the hashes of dead processes. It
 * takes batches, blocks when asked, acknowledges, requeues and releases; it
 * keeps no job itself (the `Feeder` holds and hands them out).
 *
 * Faults: transports never resend a fetch whose reply was lost. The fetcher
 * remembers the tokens such a request may have taken and releases them with
 * its next call: whatever it took goes back to the queue, and a late run of
 * the lost request takes nothing. Acks are idempotent (`HDEL`) and are sent
 * again after a failure. A job whose bytes are not UTF-8 is never handed out:
 * it is buried as it is (`scripts/bury_invalid.ts`, the poller's rule).
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { AckBook, type AckEntry } from "./ack_book.ts";
import type { Logger } from "../logger.ts";
import { buryInvalidUtf8 } from "../scripts/bury_invalid.ts";
import { FETCH, type FetchResult } from "../scripts/fetch.ts";
import { BATCH_SPAN, QUEUES_FIELD } from "../scripts/held.ts";
import { recoveredCount, startingNow } from "../scripts/recovered_mark.ts";
import { RELEASE, RELEASE_NOT_NAMED } from "../scripts/release.ts";
import { REQUEUE } from "../scripts/requeue.ts";
import type { Command, RedisArg, RedisReply, ScriptCall, Transport } from "../transport/transport.ts";
import type { Blocked, BlockThen, CarriedWrite, Carrying, Fetcher, Take } from "./fetcher.ts";
import type { OutcomeWrite } from "./worker_feature.ts";
import { carrying, withCarried } from "../scripts/carrying.ts";
import { frameWrites } from "./frame_writes.ts";
import { EndOfBurst } from "../end_of_burst.ts";
import type { Script } from "../transport/script.ts";
import { TransportError } from "../transport/transport_error.ts";
import type { QueueList } from "./queues.ts";
import { type UnitOfWork, unitOfWork } from "./unit_of_work.ts";
import { pausedWait } from "./pause_wait.ts";
import { QueueStates } from "./queue_states.ts";
import { EmptyQueues } from "./empty_queues.ts";
import { MAX_COALESCED } from "./settler.ts";

/** Most carried writes in one call: as many as the settler coalesces (a bound on one script's KEYS and time). */
const MAX_CARRIED = MAX_COALESCED;

/** A finished job and its outcome write, waiting for a call. */
interface Carried {
  readonly unit: UnitOfWork;
  readonly write: CarriedWrite["write"];
  readonly mayBeRequeued: boolean;
}

const NONE: Carried[] = [];

/** Nothing taken, nothing to report. */
const NOTHING: Blocked = { units: [], alive: true, reregistered: false };

/** No acknowledgements: what a call written behind a blocking pop carries. */
const NO_ACKS: AckEntry = {
  args: () => [0, 0, 0],
  queues: new Set(),
  confirm() {},
  restore() {},
};

/** How one fetch call is made (see `ReliableFetch.#call`). */
interface CallOptions {
  /** Send every partial ack, due or not (a flush). */
  readonly all?: boolean;
  /** Send the capsule's queue names (the script asked for them to register the held hash again). */
  readonly queuesWanted?: boolean;
  /** Take only if the landing job named is adopted: a call that follows a wait (see `behind`). */
  readonly ifLanded?: boolean;
  /**
   * Written behind a blocking pop: adopt `landing`, take only if a job
   * landed, and send by `send`. `landedSuspect` says, once the wait is
   * over, whether the job that landed is a recovered one (it waits its turn,
   * so nothing taken with it starts at once).
   */
  readonly behind?: {
    readonly landing: [queueIndex: number, batch: number];
    readonly send: (call: ScriptCall<FetchResult>) => Promise<FetchResult>;
    readonly landedSuspect: () => boolean;
  };
}

/** Options for a fetch strategy. */
export interface FetcherOptions {
  transport: Transport;
  keys: Keys;
  /** The owning process's identity (names the held hashes). */
  identity: string;
  /** The capsule's name (names the held hashes). */
  capsule: string;
  queues: QueueList;
  /** Seconds a blocking fetch waits when idle (TCP only); Sidekiq's 2. */
  blockSeconds: number;
  /** Seconds the process entry lives: every fetch renews it (a fetching process is alive). */
  ttl: number;
  /** Where buried jobs whose bytes are not UTF-8 are reported. */
  logger?: Logger;
}

/**
 * Fetches and acknowledges jobs for one capsule, reliably.
 *
 * @example
 * ```ts
 * const fetcher = new ReliableFetch({ transport, keys: keys(), identity, capsule: "default",
 *   queues: parseQueues(["default"]), blockSeconds: 2, ttl: 60 });
 * const { units } = await fetcher.take(10, 10);
 * fetcher.ack(units[0], false);
 * await fetcher.flush();
 * ```
 */
export class ReliableFetch implements Fetcher {
  #options: FetcherOptions;
  #names: readonly string[];
  #index = new Map<string, number>();
  #queueKeys: string[];
  #held: string;
  #landingKeys: string[];
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
  /** The queues (indexes) a blocking fetch here has watched: only their landing lists can hold a job of ours. */
  #watched = new Set<number>();
  /** Paused and broken queues: a blocking fetch watches neither. */
  #states: QueueStates;
  /** The queues found empty a moment ago: a busy fetch of many queues leaves them out. */
  #empties: EmptyQueues;
  /** Set once the worker lets this fetcher carry outcome writes. */
  #carrying: Carrying | undefined;
  /** Finished jobs whose outcome write waits for a call, in order. */
  #carried: Carried[] = [];
  /** Calls on their way (a carried write recorded meanwhile waits for the next). */
  #calls = 0;
  /** A blocking wait is on (no call will come until it ends). */
  #blocking = false;
  /** Acks of jobs whose carried writes are in, that no call has been sent with yet. */
  #ackOwed = false;
  /** Carried writes taken by calls on their way. */
  #carriedSent = 0;
  #carryBurst = new EndOfBurst(() => this.#carriedWaiting());

  constructor(options: FetcherOptions) {
    this.#options = options;
    const k = options.keys;
    this.#names = options.queues.names;
    this.#names.forEach((q, i) => this.#index.set(q, i + 1));
    this.#empties = new EmptyQueues(options.queues);
    this.#queueKeys = this.#names.map((q) => k.queue(q));
    this.#held = k.held(options.identity, options.capsule);
    this.#landingKeys = this.#names.map((q) => k.landing(this.#held, q));
    this.#states = new QueueStates(options.logger, (q) => k.queue(q));
  }

  /** The capsule's distinct queue names. */
  get queues(): readonly string[] {
    return this.#names;
  }

  /** Each queue's weight. */
  get weights(): Readonly<Record<string, number>> {
    return this.#options.queues.weights;
  }

  /** The queue mode. */
  get mode(): string {
    return this.#options.queues.mode;
  }

  /** The held hash: one per capsule. */
  get heldKeys(): readonly string[] {
    return [this.#held];
  }

  /** The held hash jobs of `queue` are taken into. */
  heldKeyOf(queue: string): string | undefined {
    return this.#index.has(queue) ? this.#held : undefined;
  }

  /**
   * Registers the held hash (and the queues recovery must name with it), so
   * another process recovers it if this one dies. Every fetch re-registers
   * it if it was lost, so this is only the first registration.
   */
  async register(): Promise<void> {
    await this.#options.transport.pipeline([
      ["HSET", this.#held, QUEUES_FIELD, this.#names.join(",")],
      ["HSET", this.#options.keys.heldRegistry, this.#held, this.#options.identity],
    ]);
  }

  /**
   * Records a finished job; it is sent with the next fetch or flush. A job
   * that may have been put back on its queue meanwhile (hard shutdown, or
   * recovered while this process stalled) is acknowledged with its payload,
   * so the requeued copy is taken back if it has not started elsewhere.
   */
  ack(unit: UnitOfWork, mayBeRequeued: boolean): void {
    const id = Math.floor(unit.token / BATCH_SPAN);
    this.#acks.ack(this.#index.get(unit.queue)!, id, unit.token % BATCH_SPAN, unit.raw, mayBeRequeued);
  }

  /** Carries features' coalescing outcome writes in its calls (see {@link Fetcher.carries}). */
  carries(carrying: Carrying): (write: OutcomeWrite) => boolean {
    this.#carrying = carrying;
    if (this.#options.transport.keyspace !== "cluster") return () => true;
    // On a cluster one call's keys share a slot: a feature's keys outside the namespace's hash tag go on their own.
    const tagged = this.#options.keys.prefix + ":";
    const known = new WeakMap<readonly string[], boolean>();
    return (write) => {
      let ok = known.get(write.keys);
      if (ok === undefined) known.set(write.keys, ok = write.keys.every((key) => key.startsWith(tagged)));
      return ok;
    };
  }

  /** Carried writes not yet in Redis (see {@link Fetcher.unwritten}). */
  get unwritten(): number {
    return this.#carried.length + this.#carriedSent;
  }

  /** Records a finished job and its outcome write (see {@link Fetcher.carry}). */
  carry(unit: UnitOfWork, item: CarriedWrite): void {
    this.#carried.push({ unit, write: item.write, mayBeRequeued: item.mayBeRequeued });
    this.#carryBurst.note();
  }

  /**
   * A burst of carried writes (or of their acks) is over: unless a call is
   * on its way (it takes them, or the next does), have one go. Acks alone
   * wait for the next fetch, as every ack does, unless a blocking wait
   * would keep them.
   */
  #carriedWaiting(): void {
    if (this.#calls > 0) return;
    if (this.#blocking) this.#flushCarried();
    else if (this.#carried.length) this.#carrying?.wanted();
  }

  /** During a blocking wait, carried writes and their acks go in a call of their own (not up to blockSeconds later). */
  #flushCarried(): void {
    if (this.#carried.length === 0 && !this.#ackOwed) return;
    this.flush().catch((error) => this.#options.logger?.error("writing carried outcomes", { error: String(error) }));
  }

  /**
   * The carried writes the next call takes: up to {@link MAX_CARRIED} of the
   * first one's script, in order (another script's wait for a later call).
   */
  #takeCarried(): Carried[] {
    if (this.#carried.length === 0) return NONE;
    const script = this.#carried[0].write.script;
    if (this.#carried.length <= MAX_CARRIED && this.#carried.every((c) => c.write.script === script)) {
      const all = this.#carried;
      this.#carried = [];
      return all;
    }
    const taken: Carried[] = [];
    const rest: Carried[] = [];
    for (const c of this.#carried) (c.write.script === script && taken.length < MAX_CARRIED ? taken : rest).push(c);
    this.#carried = rest;
    return taken;
  }

  /**
   * What becomes of carried writes once their call is over: written, each
   * job is acknowledged (with a later call; by its payload if the call found
   * this process's jobs may have been recovered, which puts them back on
   * their queues); failed in a way a resend may fix, they wait for the next
   * call, first; failed for good (a key of the wrong type, say), each is
   * written the usual way, job by job.
   */
  #carriedDone(taken: readonly Carried[], outcome: { error: unknown } | { recovered: boolean }): void {
    if (taken.length === 0) return;
    if ("recovered" in outcome) {
      for (const c of taken) this.ack(c.unit, c.mayBeRequeued || outcome.recovered);
      this.#ackOwed = true;
      return;
    }
    const { error } = outcome;
    if (!(error instanceof TransportError) || error.kind === "command" || error.kind === "wrongtype") {
      const carrying = this.#carrying!;
      for (const c of taken) {
        carrying.uncarried(c.unit, c.write).then(
          (outcome) => void (outcome === "ack" && this.ack(c.unit, c.mayBeRequeued)),
          (failure) => this.#options.logger?.error("writing an outcome", { error: String(failure) }),
        );
      }
      return;
    }
    this.#carried.unshift(...taken);
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
    if (unit.token <= this.#sentMark) return Promise.resolve();
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
    return this.#call(max, startNow);
  }

  /**
   * One fetch script call. `behind` makes it the call written behind a
   * blocking pop: it adopts `behind.landing` and takes only if a job landed
   * there, and carries nothing else (no acks, releases, unlocks, marks or
   * outcome writes: they would wait out the block with it).
   */
  async #call(max: number, startNow: number, options: CallOptions = {}): Promise<Take> {
    const { all = false, queuesWanted = false, behind } = options;
    const ifLanded = options.ifLanded === true || behind !== undefined;
    max = Math.min(max, BATCH_SPAN);
    const batch = this.#next;
    if (max > 0) this.#next++;
    const acks = behind ? NO_ACKS : this.#acks.take(all);
    const owed = !behind && this.#ackOwed;
    if (!behind) this.#ackOwed = false;
    const landing = behind ? behind.landing : this.#landing;
    const unlocks = behind ? [] : this.#unlocks;
    const released = behind ? [] : this.#released;
    // A call that releases a lost batch (whose queue it cannot know) names every queue.
    const named = this.#named(max > 0 && released.length === 0, { acked: acks.queues, landing: landing?.[0] });
    const position = new Map(named.map((qi, p) => [qi, p + 1]));
    const mark = !behind && this.#mark > this.#sentMark ? this.#mark : 0;
    const k = this.#options.keys;
    const argv: RedisArg[] = [
      this.#options.identity,
      this.#options.ttl,
      ifLanded ? -max : max,
      batch,
      Math.min(startNow, max),
      mark,
      landing ? position.get(landing[0])! : 0,
      landing?.[1] ?? 0,
      Date.now() / 1000,
      unlocks.length,
      k.queue(""),
      queuesWanted ? this.#names.join(",") : "",
      ...unlocks.map(([, value]) => value),
      released.length,
      ...released,
      ...acks.args((qi) => position.get(qi)!),
    ];
    const sent = { released, unlocks };
    if (!behind) {
      this.#released = [];
      this.#unlocks = [];
      this.#landing = undefined;
    }
    // The call's acks, releases, unlocks and landing go with the next call instead (each applies once).
    const restore = () => {
      acks.restore();
      this.#ackOwed ||= owed;
      this.#released.unshift(...sent.released);
      this.#unlocks.unshift(...sent.unlocks);
      this.#landing ??= landing;
    };
    let result;
    const started = Date.now();
    const keys = [
      k.process(this.#options.identity),
      k.heldRegistry,
      k.dead,
      this.#held,
      k.paused,
      landing ? this.#landingKeys[landing[0] - 1] : this.#held,
      ...named.map((qi) => this.#queueKeys[qi - 1]),
      ...sent.unlocks.map(([key]) => key),
    ];
    const taken = behind ? NONE : this.#takeCarried();
    // A call behind a wait takes no carried writes and may wait as long as the wait: not one on its way for them
    // (#carriedWaiting would leave them to it).
    const counted = behind ? 0 : 1;
    this.#calls += counted;
    this.#carriedSent += taken.length;
    try {
      result = behind
        ? await behind.send({ script: FETCH, keys, args: argv })
        : taken.length === 0
        ? await this.#options.transport.script(FETCH, keys, argv)
        : await this.#options.transport.script(
          carrying(FETCH, taken[0].write.script as Script<unknown>),
          ...withCarried(keys, argv, frameWrites(taken.map((c) => c.write))),
        );
    } catch (error) {
      // Not done, or done with the reply lost: acks are sent again (they
      // are idempotent), and whatever this request may have taken is released.
      restore();
      if (max > 0) this.#released.push(batch);
      this.#carriedDone(taken, { error });
      throw error;
    } finally {
      this.#calls -= counted;
      this.#carriedSent -= taken.length;
    }
    // The writes are in Redis: their jobs are acknowledged with a later call. (After a failure, the writes wait for
    // the next call, which the feeder makes after its pause: no call of their own, so a Redis that is down costs no
    // tight loop.) A process found presumed dead, re-registered, or whose held hash was recovered may have had these
    // jobs put back on their queues: each is acknowledged by its payload, which takes a waiting copy back.
    this.#carriedDone(taken, { recovered: !result.alive || result.reregistered || result.queuesWanted });
    if (this.#carried.length || this.#ackOwed) this.#carryBurst.note();
    if (result.queuesWanted && !queuesWanted) {
      // Nothing was done: the same call again (under a new batch id), this time with the capsule's queue names.
      restore();
      const starting = behind?.landedSuspect() ? 0 : startNow;
      return this.#call(max, starting, { all, queuesWanted: true, ifLanded });
    }
    acks.confirm();
    // A call that took nothing looked at no queue (a flush, or one behind a wait that ended empty): only paused is news.
    this.#noteQueues(named, result, { sentAt: started, looked: max > 0 && (!ifLanded || result.adopted) });
    if (mark) this.#sentMark = mark;
    // Run before: what that run took is held but was never seen here. Give it back.
    if (result.replayed) this.#released.push(batch);
    if (!result.alive) return { units: [], alive: false, reregistered: false };
    // Recovered while stalled: what was held is back on its queues.
    if (result.reregistered) this.#acks.forget();
    if (result.jobs.length === 0) return { units: [], alive: true, reregistered: result.reregistered };
    const qi = named[result.queueIndex];
    const queue = this.#names[qi - 1];
    this.#acks.track(qi, batch, result.jobs.length, result.pieces);
    // The script recorded these as started.
    const startedHere = batch * BATCH_SPAN + startingNow(result.jobs, behind?.landedSuspect() ? 0 : startNow) - 1;
    if (startedHere >= batch * BATCH_SPAN && startedHere > this.#sentMark) this.#sentMark = startedHere;
    const units = result.jobs.map((raw, i) => unitOfWork(queue, raw, batch * BATCH_SPAN + i));
    // Bytes that are not UTF-8 (U+FFFD in the text) are buried as they are; a failed check gives the batch back.
    const { kept, buried } = await buryInvalidUtf8(this.#options.transport, [this.#held, k.dead], batch, units).catch(
      (error) => {
        this.#released.push(batch);
        this.#acks.putBack(batch, units.length);
        throw error;
      },
    );
    for (const unit of buried) this.ack(unit, false);
    if (buried.length) {
      this.#options.logger?.error("jobs not valid UTF-8 buried as they are", { queue, count: buried.length });
    }
    return { units: kept, alive: true, reregistered: result.reregistered };
  }

  /**
   * The queues (1-based indexes) a call names, in the order to try them
   * (see {@link EmptyQueues}): a busy capsule of 1,000 queues pays for the
   * few that have work, not for the rest (`skipEmpty`; false names them
   * all). A call that acknowledges a requeued copy, or adopts a landed job,
   * names that queue too.
   */
  #named(skipEmpty: boolean, also: { acked: ReadonlySet<number>; landing: number | undefined }): number[] {
    const named = this.#empties.named(skipEmpty, (i) => also.acked.has(i + 1) || i + 1 === also.landing);
    return named.map((q) => this.#index.get(q)!);
  }

  /** Takes in what a call found about the queues it named: paused, broken, empty. */
  #noteQueues(named: readonly number[], result: FetchResult, call: { sentAt: number; looked: boolean }): void {
    const names = named.map((qi) => this.#names[qi - 1]);
    const paused = result.paused.map((p) => names[p]);
    if (!call.looked) {
      this.#states.note(names, { paused });
      return;
    }
    this.#empties.noted(names, { empty: result.empty, taken: result.queueIndex, sentAt: call.sentAt });
    this.#states.note(names, { paused, broken: result.broken.map((p) => names[p]) });
  }

  /**
   * Waits once (up to `blockSeconds`) for a job on one of the queues, in turn,
   * and takes it; with `then.take`, and a transport that can write a script
   * behind a blocking command, the call that adopts it is written behind the
   * wait and takes up to that many more with it (the rest of a burst: one
   * round trip where two were). `signal` cuts the wait short; once this
   * settles nothing more can be taken by it.
   */
  async block(signal: AbortSignal, then?: BlockThen): Promise<Blocked> {
    if (signal.aborted) return NOTHING;
    const order = this.#options.queues.order();
    // BLMOVE watches one list: rotate through the queues (in this fetch's
    // weighted order) so every queue is watched in turn; the batch fetch
    // before each block checks all of them. The job lands in a transit list
    // under a token assigned now, and a call adopts it into the held hash.
    const watchable = this.#states.watchable(order);
    if (watchable.length === 0) {
      // Every queue is paused: wait as a block would, and ask again (the next fetch says when one is resumed).
      await pausedWait(this.#options.blockSeconds, signal);
      return NOTHING;
    }
    const queue = watchable[this.#rotation++ % watchable.length];
    const qi = this.#index.get(queue)!;
    this.#watched.add(qi);
    const batch = this.#next++;
    const transport = this.#options.transport;
    const wait: Command = [
      "BLMOVE",
      this.#queueKeys[qi - 1],
      this.#landingKeys[qi - 1],
      "RIGHT",
      "LEFT",
      this.#options.blockSeconds,
    ];
    const more = Math.min(then?.take ?? 0, BATCH_SPAN);
    // Without a call behind the wait, the landing list is named to the next
    // call only once the command is over: a call made meanwhile (a suspect's
    // flush) would find it still empty, and the job landing after it would
    // be adopted by no one. The call behind the wait runs after it on the
    // server, so it can name it from the start.
    // (Assigned in a callback too: typed so the checks below are not narrowed away.)
    let raw = null as RedisReply;
    let behind: Promise<Take> | undefined;
    this.#blocking = true;
    this.#flushCarried();
    try {
      // Once this settles the command is over on the server; a job that won
      // the race against an abort is returned, and ours like any other.
      if (more > 0 && transport.blockThen) {
        let waited = false;
        behind = this.#call(more, Math.min(then!.startNow, more), {
          behind: {
            landing: [qi, batch],
            landedSuspect: () => typeof raw === "string" && recoveredCount(raw) !== undefined,
            send: async (call) => {
              const replies = await transport.blockThen!(wait, call, { signal });
              waited = true;
              raw = replies.reply;
              return await replies.after;
            },
          },
        });
        // The call behind it failing is not the wait failing: its job is taken all the same (below).
        await behind.catch((error) => {
          if (!waited) throw error;
        });
      } else {
        raw = await transport.block(wait, { signal });
      }
    } catch (error) {
      // Reply lost: a job may have landed that nobody runs. Adopt it and
      // give it back with the next call.
      this.#landing = [qi, batch];
      this.#released.push(batch);
      throw error;
    } finally {
      this.#blocking = false;
    }
    let took: Take = NOTHING;
    let failure: unknown;
    // Failed: #call gave back what it may have taken and left the landing list to the next call.
    if (behind) await behind.then((take) => (took = take), (error) => (failure = error));
    // Cut short before anything was sent (quiet): the call never ran, and nothing is wrong.
    if (typeof raw !== "string" && failure instanceof TransportError && !failure.maybeApplied) failure = undefined;
    if (typeof raw !== "string") return failure === undefined ? took : { ...took, failure };
    if (!behind) this.#landing = [qi, batch];
    if (this.#carried.length) this.#carryBurst.note();
    if (raw.includes("\uFFFD")) {
      // Maybe not UTF-8: back through its queue with the next call, to be checked in a batch.
      this.#released.push(batch);
      return failure === undefined ? took : { ...took, failure };
    }
    this.#acks.track(qi, batch, 1);
    const landed = unitOfWork(queue, raw, batch * BATCH_SPAN);
    return { units: [landed, ...took.units], alive: took.alive, reregistered: took.reregistered, failure };
  }

  /** Sends pending acks and marks on their own (at quiet, stop, or when nothing else will). */
  async flush(): Promise<void> {
    // Carried writes first (up to MAX_CARRIED a round), then (next round) the acks of their jobs; a round that
    // fails throws. Bounded by the work there was: a state no call clears cannot loop.
    const rounds = 2 + this.#carried.length;
    for (let round = 0; round < rounds; round++) {
      const idle = this.#acks.pending === 0 && this.#released.length === 0 &&
        this.#unlocks.length === 0 && !this.#landing &&
        this.#mark <= this.#sentMark && this.#carried.length === 0;
      if (idle) return;
      await this.#call(0, 0, { all: true });
    }
  }

  /**
   * Puts jobs back at the front of their queues, in their order. With
   * reliable fetch only jobs still held go back (never one already
   * acknowledged or recovered). Returns how many went back.
   */
  async requeue(units: readonly UnitOfWork[]): Promise<number> {
    if (units.length === 0) return 0;
    const landing = this.#landing;
    const argv: RedisArg[] = [landing?.[0] ?? 0, landing?.[1] ?? 0, this.#options.keys.queue("")];
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
    const n = await this.#options.transport.script(REQUEUE, [
      this.#held,
      landing ? this.#landingKeys[landing[0] - 1] : this.#held,
      ...this.#queueKeys,
    ], argv);
    this.#landing = undefined;
    // Put back (or no longer held anyway): settled, as far as this process goes.
    for (const [id, indexes] of groups) this.#acks.putBack(id, indexes.length);
    return n;
  }

  /**
   * At a clean stop: sends pending acks, then gives back whatever the held
   * hash still holds and drops its registration, in one call. Returns how
   * many jobs went back.
   */
  async release(): Promise<number> {
    await this.flush().catch(() => {}); // the release below returns what an unsent ack would have removed
    // Named: the queues of the batches this process knows it holds and those it watched (a capsule of 1,000 queues
    // would otherwise name 2,000 keys at every stop). A batch of another queue (a lost reply's) makes the script
    // refuse, writing nothing: then every queue is named.
    const some = new Set([...this.#acks.heldQueues(), ...this.#watched]);
    if (this.#landing) some.add(this.#landing[0]);
    if (some.size < this.#names.length) {
      try {
        return await this.#release([...some].sort((a, b) => a - b));
      } catch (error) {
        if (!String((error as Error)?.message).includes(RELEASE_NOT_NAMED)) throw error;
      }
    }
    return await this.#release(this.#names.map((_, i) => i + 1));
  }

  #release(named: readonly number[]): Promise<number> {
    const k = this.#options.keys;
    return this.#options.transport.script(
      RELEASE,
      [
        this.#held,
        k.heldRegistry,
        ...named.map((qi) => this.#queueKeys[qi - 1]),
        ...named.map((qi) => this.#landingKeys[qi - 1]),
      ],
      [k.queue("")],
    );
  }
}
