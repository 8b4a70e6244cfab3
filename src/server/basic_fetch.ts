/**
 * Basic fetch (Sidekiq OSS's `BasicFetch`): jobs are popped from their
 * queues, so a crash mid-job loses the job. Chosen with `fetch: "basic"`;
 * the default is {@link ReliableFetch}.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { COMPARE_AND_DELETE } from "../scripts/compare_and_delete.ts";
import { POP } from "../scripts/fetch.ts";
import type { Command, Transport } from "../transport/transport.ts";
import type { Blocked, Fetcher, Take } from "./fetcher.ts";
import type { QueueList } from "./queues.ts";
import type { FetcherOptions } from "./reliable_fetch.ts";
import { type UnitOfWork, unitOfWork } from "./unit_of_work.ts";
import { pausedWait } from "./pause_wait.ts";
import { QueueStates } from "./queue_states.ts";
import { EmptyQueues } from "./empty_queues.ts";

const NOTHING: Take = { units: [], alive: true, reregistered: false };

/**
 * Pops jobs for one capsule: nothing is held, so nothing is acknowledged,
 * recovered or released.
 *
 * @example
 * ```ts
 * const fetcher = new BasicFetch({ transport, keys: keys(), identity, capsule: "default",
 *   queues: parseQueues(["default"]), blockSeconds: 2, ttl: 60 });
 * const { units } = await fetcher.take(10);
 * ```
 */
export class BasicFetch implements Fetcher {
  #transport: Transport;
  #keys: Keys;
  #queues: QueueList;
  #blockSeconds: number;
  #unlocks: Array<[key: string, value: string]> = [];
  /** Paused and broken queues: a blocking pop watches neither. */
  #states: QueueStates;
  /** The queues found empty a moment ago: a busy fetch of many queues leaves them out. */
  #empties: EmptyQueues;

  constructor(options: FetcherOptions) {
    this.#transport = options.transport;
    this.#keys = options.keys;
    this.#queues = options.queues;
    this.#blockSeconds = options.blockSeconds;
    this.#states = new QueueStates(options.logger, (q) => options.keys.queue(q));
    this.#empties = new EmptyQueues(options.queues);
  }

  get queues(): readonly string[] {
    return this.#queues.names;
  }

  get weights(): Readonly<Record<string, number>> {
    return this.#queues.weights;
  }

  get mode(): string {
    return this.#queues.mode;
  }

  get heldKeys(): readonly string[] {
    return [];
  }

  heldKeyOf(): undefined {
    return undefined;
  }

  register(): Promise<void> {
    return Promise.resolve();
  }

  /** Popped jobs are gone from Redis: there is nothing to acknowledge. */
  ack(): void {}

  /** Nothing is held, so nothing counts starts. */
  started(): void {}

  writeStart(): Promise<void> {
    return Promise.resolve();
  }

  releaseLater(key: string, value: string): void {
    this.#unlocks.push([key, value]);
  }

  async take(max: number): Promise<Take> {
    // No fetch call to carry releases: they go on their own first.
    await this.flush();
    if (max === 0) return NOTHING;
    const order = this.#empties.named(true);
    const sentAt = Date.now();
    const result = await this.#transport.script(
      POP,
      [...order.map((q) => this.#keys.queue(q)), this.#keys.paused],
      [max, ...order],
    );
    this.#empties.noted(order, { empty: result.empty, taken: result.queueIndex, sentAt });
    this.#states.note(order, {
      paused: result.paused.map((i) => order[i]),
      broken: result.broken.map((i) => order[i]),
    });
    if (result.queueIndex < 0) return NOTHING;
    const queue = order[result.queueIndex];
    return { units: result.jobs.map((raw) => unitOfWork(queue, raw, 0)), alive: true, reregistered: false };
  }

  async block(signal: AbortSignal): Promise<Blocked> {
    if (signal.aborted) return NOTHING;
    const watched = this.#states.watchable(this.#queues.names).map((q) => this.#keys.queue(q));
    if (watched.length === 0) {
      await pausedWait(this.#blockSeconds, signal);
      return NOTHING;
    }
    const reply = await this.#transport.block(["BRPOP", ...watched, this.#blockSeconds], { signal });
    if (!Array.isArray(reply)) return NOTHING;
    return {
      units: [unitOfWork(this.#keys.queueName(String(reply[0])), String(reply[1]), 0)],
      alive: true,
      reregistered: false,
    };
  }

  async flush(): Promise<void> {
    if (this.#unlocks.length === 0) return;
    const unlocks = this.#unlocks;
    this.#unlocks = [];
    try {
      await this.#transport.script(COMPARE_AND_DELETE, unlocks.map(([key]) => key), unlocks.map(([, value]) => value));
    } catch (error) {
      this.#unlocks.unshift(...unlocks);
      throw error;
    }
  }

  async requeue(units: readonly UnitOfWork[]): Promise<number> {
    if (units.length === 0) return 0;
    const commands: Command[] = [];
    for (const u of [...units].reverse()) commands.push(["RPUSH", this.#keys.queue(u.queue), u.raw]);
    await this.#transport.pipeline(commands, { atomic: true });
    return units.length;
  }

  release(): Promise<number> {
    return Promise.resolve(0);
  }
}
