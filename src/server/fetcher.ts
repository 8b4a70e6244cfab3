/**
 * The fetcher: the Redis side of one capsule's fetching, as Sidekiq's fetch
 * strategies are. Two implement it: {@link ReliableFetch} (the default: a
 * job stays in Redis, held by this process, until its outcome is durable)
 * and `BasicFetch` (Sidekiq OSS's pop: a crash mid-job loses the job). The
 * {@link Feeder} drives it; neither keeps a job itself.
 *
 * @module
 */
import type { UnitOfWork } from "./unit_of_work.ts";
import type { OutcomeWrite } from "./worker_feature.ts";
import type { UnitOutcome } from "./settler.ts";

/** A finished job whose one coalescing outcome write a fetcher carries (see {@link Fetcher.carry}). */
export interface CarriedWrite {
  readonly write: OutcomeWrite;
  /** Acknowledge it by its payload (it may have been put back meanwhile). */
  readonly mayBeRequeued: boolean;
}

/** How a fetcher that carries writes reaches the rest of the worker. */
export interface Carrying {
  /**
   * A carried write that failed in a way no resend fixes (a key of the wrong
   * type) is written the usual way instead, job by job, so only a bad
   * write's job is buried: resolves to what to do with the job then.
   */
  uncarried(unit: UnitOfWork, write: OutcomeWrite): Promise<UnitOutcome>;
  /** Carried writes wait and no call is on its way: have one go soon (a fetch that tops up, say). */
  wanted(): void;
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

/** What {@link Fetcher.block} may take besides the job that ends the wait. */
export interface BlockThen {
  /** Up to how many more jobs. */
  readonly take: number;
  /** How many of them start at once (see {@link Fetcher.take}). */
  readonly startNow: number;
}

/** What {@link Fetcher.block} took. */
export interface Blocked extends Take {
  /** A failure after the wait took its job (the job is in `units` all the same): report it, pause. */
  readonly failure?: unknown;
}

/**
 * A fetch strategy.
 *
 * @example
 * ```ts
 * const fetcher: Fetcher = reliable ? new ReliableFetch(options) : new BasicFetch(options);
 * const { units } = await fetcher.take(10, 10);
 * ```
 */
export interface Fetcher {
  /** The capsule's distinct queue names. */
  readonly queues: readonly string[];
  /** Each queue's weight. */
  readonly weights: Readonly<Record<string, number>>;
  /** The queue mode (`strict`, `weighted`, `random`). */
  readonly mode: string;
  /** The keys this strategy holds jobs under (reliable fetch's held hashes; none for basic). */
  readonly heldKeys: readonly string[];
  /** The key a unit of `queue` is held under, for a script that settles it; undefined with basic fetch. */
  heldKeyOf(queue: string): string | undefined;
  /** Registers what this process holds, so another recovers it if this one dies. */
  register(): Promise<void>;
  /** Sends pending acks and takes up to `max` jobs; the first `startNow` start at once (poison-pill counting). */
  take(max: number, startNow?: number): Promise<Take>;
  /**
   * Waits once (abortably) for a job on one of the queues, and takes it;
   * with `then.take`, takes up to that many more with it where it can in
   * the same round trip (the rest of a burst), the first `then.startNow`
   * of them starting at once. Resolves as a take does (the job that ended
   * the wait first); `failure` is what went wrong after the wait took its
   * job, which is delivered all the same.
   */
  block(signal: AbortSignal, then?: BlockThen): Promise<Blocked>;
  /** Records a finished job, sent with the next call; `mayBeRequeued` acknowledges it by its payload. */
  ack(unit: UnitOfWork, mayBeRequeued: boolean): void;
  /**
   * Carries features' coalescing outcome writes in its calls from now on
   * (reliable fetch does; basic fetch holds nothing to acknowledge): returns
   * which writes it can carry (on a cluster, those whose keys share its slot).
   */
  carries?(carrying: Carrying): (write: OutcomeWrite) => boolean;
  /**
   * Records a finished job whose outcome is `item.write`: the write goes with
   * the next call (or, soon, one of its own), and the job's acknowledgement
   * with a call after the one that wrote it answered.
   */
  carry?(unit: UnitOfWork, item: CarriedWrite): void;
  /**
   * Carried writes not yet in Redis, those on their way included: until
   * they are, the queues are not known to be empty (a batch's last success
   * pushes its callback).
   */
  readonly unwritten?: number;
  /** Records that a job started (jobs start in token order). */
  started(unit: UnitOfWork): void;
  /** Writes that a recovered job started, before it runs. */
  writeStart(unit: UnitOfWork): Promise<void>;
  /** Deletes `key` if it still holds `value`, with the next call. */
  releaseLater(key: string, value: string): void;
  /** Sends what is pending (acks, releases, marks) on its own. */
  flush(): Promise<void>;
  /** Puts jobs back at the front of their queues; resolves to how many went back. */
  requeue(units: readonly UnitOfWork[]): Promise<number>;
  /** At a clean stop: gives back whatever is still held and unregisters; resolves to how many went back. */
  release(): Promise<number>;
}
