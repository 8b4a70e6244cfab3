/**
 * One entry of `schedule`, `retry` or `dead` (Sidekiq's `SortedEntry`): a
 * job record with its score, and the actions the Web UI offers on it.
 *
 * @module
 */
import { PayloadError } from "../errors.ts";
import { parsePayload } from "../payload.ts";
import { JobRecord } from "./job_record.ts";
import type { Client } from "../client.ts";

/**
 * What an entry needs of the set it belongs to (a `JobSet`: `ScheduledSet`,
 * `RetrySet` or `DeadSet`).
 */
export interface EntrySet {
  readonly key: string;
  readonly client: Client;
  deleteByValue(value: string): Promise<boolean>;
  enqueueEntries(entries: readonly SortedEntry[], options?: { retry?: boolean }): Promise<boolean[]>;
  killEntries(entries: readonly SortedEntry[]): Promise<boolean[]>;
}
import { invalid } from "./arguments.ts";

/**
 * A job in a sorted set, scored by when it runs (schedule, retry) or died
 * (dead). Every action removes the exact raw member first and acts only if
 * that removal happened, so racing callers move an entry at most once.
 *
 * @example
 * ```ts
 * const entry = await new RetrySet(client).findJob(jid);
 * if (entry) {
 *   console.log(entry.at, entry.errorMessage);
 *   await entry.retry(); // back to its queue now
 * }
 * ```
 */
export class SortedEntry extends JobRecord {
  #set: EntrySet;
  #score: number;

  /**
   * Wraps one raw member of a job set with its score.
   *
   * @param set The set the entry was read from.
   * @param score Its score: epoch seconds.
   * @param value The raw member string.
   */
  constructor(set: EntrySet, score: number, value: string) {
    super(value);
    this.#set = set;
    this.#score = score;
  }

  /** The set the entry belongs to. */
  get parent(): EntrySet {
    return this.#set;
  }

  /** The score: epoch seconds (a float). */
  get score(): number {
    return this.#score;
  }

  /** The score as a Date: when the job runs, or when it died. */
  get at(): Date {
    return new Date(this.#score * 1000);
  }

  /**
   * Removes the entry. Resolves to whether it was still there.
   *
   * @example
   * ```ts
   * await entry.delete(); // true
   * ```
   */
  delete(): Promise<boolean> {
    return this.#set.deleteByValue(this.value);
  }

  /**
   * Moves the entry to its queue now (Sidekiq's `add_to_queue`), through the
   * client middleware and with a fresh `enqueued_at`. Resolves to false if
   * the entry was already gone (someone else moved or deleted it).
   *
   * @example
   * ```ts
   * const job = await new ScheduledSet(client).findJob(jid);
   * await job?.addToQueue(); // run it now rather than later
   * ```
   */
  async addToQueue(): Promise<boolean> {
    this.#check("add job to queue");
    const [moved] = await this.#set.enqueueEntries([this]);
    return moved;
  }

  /**
   * Retries the job now: like {@link SortedEntry.addToQueue}, but first
   * decrements `retry_count` as Sidekiq's `retry` does, so this manual retry
   * does not count as one of the job's retries when it next fails.
   *
   * @example
   * ```ts
   * await entry.retry();
   * ```
   */
  async retry(): Promise<boolean> {
    this.#check("retry job");
    const [moved] = await this.#set.enqueueEntries([this], { retry: true });
    return moved;
  }

  /**
   * Moves the entry to the dead set (trimmed by age and size), atomically,
   * then runs the set's death handlers. Resolves to false if it was gone.
   *
   * @example
   * ```ts
   * await entry.kill();
   * ```
   */
  async kill(): Promise<boolean> {
    const [moved] = await this.#set.killEntries([this]);
    return moved;
  }

  /**
   * Moves the entry to a new time (ZADD XX: only if still in the set).
   * Resolves to whether it was still there.
   *
   * @example
   * ```ts
   * await entry.reschedule(new Date(Date.now() + 3600_000)); // in an hour
   * ```
   */
  async reschedule(at: Date | number): Promise<boolean> {
    const s = at instanceof Date ? at.getTime() / 1000 : at;
    if (typeof s !== "number" || !Number.isFinite(s)) {
      throw invalid("reschedule job", "at", "a Date or epoch seconds", at);
    }
    const key = this.#set.key;
    const [, score] = await this.#set.client.transport.pipeline([["ZADD", key, "XX", s, this.value], [
      "ZSCORE",
      key,
      this.value,
    ]], { atomic: true });
    return score !== null;
  }

  #check(action: string): void {
    try {
      parsePayload(this.value);
    } catch (error) {
      throw new PayloadError(
        `Cannot ${action} ${this.jid ?? ""}`.trimEnd() +
          ` as ${(error as Error).message.replace(/^Cannot read job as /, "")}`,
        { cause: error },
      );
    }
  }
}
