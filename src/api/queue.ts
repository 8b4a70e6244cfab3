/**
 * A queue as Sidekiq's API sees it (`Sidekiq::Queue`): list, size, latency,
 * paging, find, delete and clear. On a sharded namespace's client
 * (`shards`) a queue is its list in every shard: sizes summed, the longest
 * latency, pages and iteration shard by shard (order is kept within a shard),
 * and pause, resume and clear applied to every shard.
 *
 * @module
 */
import type { Client } from "../client.ts";
import { clearEntries, removeEntries } from "./moves.ts";
import { enqueuedLatency, JobRecord } from "./job_record.ts";
import { checkJid, checkPage, invalid } from "./arguments.ts";
import { arr, num, str } from "../transport/reply_readers.ts";

/** Jobs read per LRANGE when iterating. */
const PAGE_SIZE = 50;

/**
 * One queue: the `queue:<name>` list and its entry in `queues`.
 *
 * @example
 * ```ts
 * const queue = new Queue(client, "default");
 * await queue.size();    // 3
 * await queue.latency(); // 1.25 (seconds the oldest job has waited)
 * for await (const job of queue) if (job.klass === "HardJob") await queue.delete(job);
 * ```
 */
export class Queue implements AsyncIterable<JobRecord> {
  #client: Client;
  #name: string;
  /** The queue in each shard, on a sharded namespace's client; undefined otherwise. */
  #shards: readonly Queue[] | undefined;

  /**
   * Opens a queue by name.
   *
   * @param client The client whose transport and key prefix to use.
   * @param name The queue name; `"default"` when omitted.
   */
  constructor(client: Client, name: string = "default") {
    if (typeof name !== "string" || name === "") throw invalid("open queue", "name", "a non-empty string", name);
    this.#client = client;
    this.#name = name;
    const shards = client.shards;
    if (shards.length > 1) this.#shards = shards.map((shard) => new Queue(shard, name));
  }

  /**
   * Every known queue (the `queues` set), sorted by name.
   *
   * @example
   * ```ts
   * const names = (await Queue.all(client)).map((q) => q.name); // ["critical", "default"]
   * ```
   */
  static async all(client: Client): Promise<Queue[]> {
    if (client.shards.length > 1) {
      const names = new Set(
        (await Promise.all(client.shards.map((shard) => Queue.all(shard)))).flat().map((q) => q.name),
      );
      return [...names].sort().map((n) => new Queue(client, n));
    }
    const names = arr(await client.transport.call("SMEMBERS", client.keys.queues)).map((n) => str(n) ?? "");
    return names.filter((n) => n !== "").sort().map((n) => new Queue(client, n));
  }

  /** The queue name. */
  get name(): string {
    return this.#name;
  }

  /**
   * How many jobs wait in the queue (LLEN).
   *
   * @example
   * ```ts
   * await new Queue(client, "default").size(); // 3
   * ```
   */
  async size(): Promise<number> {
    if (this.#shards) return (await Promise.all(this.#shards.map((q) => q.size()))).reduce((a, b) => a + b, 0);
    return num(await this.#client.transport.call("LLEN", this.#key()));
  }

  /**
   * Seconds the oldest job has waited, from its `enqueued_at` (float seconds
   * or Sidekiq 8 integer milliseconds); 0 for an empty queue.
   *
   * @example
   * ```ts
   * if (await queue.latency() > 60) alert("queue is backing up");
   * ```
   */
  async latency(): Promise<number> {
    if (this.#shards) return Math.max(...await Promise.all(this.#shards.map((q) => q.latency())));
    return enqueuedLatency(str(await this.#client.transport.call("LINDEX", this.#key(), -1)));
  }

  /**
   * `count` jobs from position `start`, newest first (LRANGE), or oldest
   * first (next to run) with `{ reverse: true }`.
   *
   * @example
   * ```ts
   * const firstPage = await queue.page(0, 25);
   * const nextToRun = await queue.page(0, 25, { reverse: true });
   * ```
   */
  async page(start: number = 0, count: number = PAGE_SIZE, options: { reverse?: boolean } = {}): Promise<JobRecord[]> {
    checkPage("page queue", start, count);
    if (this.#shards) {
      // Shard by shard (in reverse for oldest first): skip whole shards before `start`, then read across as many
      // as the page spans.
      const out: JobRecord[] = [];
      let skip = start;
      const shards = options.reverse ? [...this.#shards].reverse() : this.#shards;
      for (const queue of shards) {
        if (out.length >= count) break;
        const size = await queue.size();
        if (skip >= size) {
          skip -= size;
          continue;
        }
        out.push(...await queue.page(skip, count - out.length, options));
        skip = 0;
      }
      return out;
    }
    // Newest first from the head; oldest first from the tail, read the other way.
    const [first, last] = options.reverse ? [-(start + count), -(start + 1)] : [start, start + count - 1];
    const raws = arr(await this.#client.transport.call("LRANGE", this.#key(), first, last));
    const jobs = raws.map((raw) => new JobRecord(str(raw) ?? "", this.#name));
    return options.reverse ? jobs.reverse() : jobs;
  }

  /**
   * Every job, newest first, a page at a time. Like Sidekiq's `each`, jobs
   * removed while iterating (by workers or by you) do not make it skip any.
   *
   * @example
   * ```ts
   * for await (const job of queue.each()) console.log(job.jid);
   * ```
   */
  async *each(): AsyncGenerator<JobRecord, void, undefined> {
    if (this.#shards) {
      for (const queue of this.#shards) yield* queue.each();
      return;
    }
    const initial = await this.size();
    let deleted = 0;
    for (let page = 0;; page++) {
      const start = Math.max(0, page * PAGE_SIZE - deleted);
      const raws = arr(await this.#client.transport.call("LRANGE", this.#key(), start, start + PAGE_SIZE - 1));
      if (raws.length === 0) return;
      for (const raw of raws) yield new JobRecord(str(raw) ?? "", this.#name);
      deleted = initial - await this.size();
    }
  }

  /** Same as {@link Queue.each}. */
  [Symbol.asyncIterator](): AsyncGenerator<JobRecord, void, undefined> {
    return this.each();
  }

  /**
   * The job with this jid, or `null`. Walks the queue: O(n).
   *
   * @example
   * ```ts
   * const job = await queue.findJob("2f8b0c4e9a1d3b5c7e9f0a1b");
   * if (job) await queue.delete(job);
   * ```
   */
  async findJob(jid: string): Promise<JobRecord | null> {
    checkJid("find job", jid);
    for await (const record of this.each()) {
      if (record.value.includes(jid) && record.jid === jid) return record;
    }
    return null;
  }

  /**
   * Removes one job (LREM of its exact raw string). Resolves to whether it
   * was still there. Features' delete ops go with it (a unique job's lock is released).
   *
   * @example
   * ```ts
   * const [oldest] = await queue.page(0, 1);
   * await queue.delete(oldest); // true
   * ```
   */
  async delete(job: JobRecord | string): Promise<boolean> {
    const raw = job instanceof JobRecord ? job.value : job;
    if (typeof raw !== "string") throw invalid("delete job", "job", "a JobRecord or a raw job string", job);
    if (this.#shards) {
      for (const queue of this.#shards) if (await queue.delete(raw)) return true;
      return false;
    }
    const [removed] = await removeEntries(this.#client, { key: this.#key(), home: "queue" }, [raw]);
    return removed;
  }

  /**
   * Pauses the queue (Sidekiq Pro's `pause!`): every edgekiq process stops
   * taking its jobs within one fetch round trip (the check rides the fetch
   * script); jobs already running, or fetched ahead, finish. Pushes still
   * land. An idle process's blocking wait already under way on the queue
   * (at most `blockSeconds`) can still take one job pushed during it. Ruby
   * Sidekiq workers do not know of it. Resolves to whether it was running
   * before.
   *
   * @example
   * ```ts
   * await new Queue(client, "mailers").pause();
   * ```
   */
  async pause(): Promise<boolean> {
    if (this.#shards) return (await Promise.all(this.#shards.map((q) => q.pause()))).some(Boolean);
    return Number(await this.#client.transport.call("SADD", this.#client.keys.paused, this.#name)) === 1;
  }

  /**
   * Resumes a paused queue: the next fetch of every process takes its jobs
   * again. Resolves to whether it was paused.
   *
   * @example
   * ```ts
   * await new Queue(client, "mailers").resume();
   * ```
   */
  async resume(): Promise<boolean> {
    if (this.#shards) return (await Promise.all(this.#shards.map((q) => q.resume()))).some(Boolean);
    return Number(await this.#client.transport.call("SREM", this.#client.keys.paused, this.#name)) === 1;
  }

  /**
   * Whether the queue is paused.
   *
   * @example
   * ```ts
   * if (await queue.isPaused()) console.log(`${queue.name} is paused`);
   * ```
   */
  async isPaused(): Promise<boolean> {
    if (this.#shards) return (await Promise.all(this.#shards.map((q) => q.isPaused()))).some(Boolean);
    return Number(await this.#client.transport.call("SISMEMBER", this.#client.keys.paused, this.#name)) === 1;
  }

  /**
   * The names of every paused queue, in one command.
   *
   * @example
   * ```ts
   * const paused = await Queue.paused(client); // ["mailers"]
   * ```
   */
  static async paused(client: Client): Promise<string[]> {
    if (client.shards.length > 1) {
      return [...new Set((await Promise.all(client.shards.map((shard) => Queue.paused(shard)))).flat())].sort();
    }
    const reply = await client.transport.call("SMEMBERS", client.keys.paused);
    return (Array.isArray(reply) ? reply.map(String) : []).sort();
  }

  /**
   * Deletes the queue and its entry in `queues` in one script, and applies
   * the features' delete ops of the jobs it held (a unique job's lock is
   * released: read a page per round trip after the queue was detached; a
   * queue no such job was pushed to is not read).
   *
   * @example
   * ```ts
   * await new Queue(client, "low").clear();
   * ```
   */
  async clear(): Promise<boolean> {
    if (this.#shards) {
      await Promise.all(this.#shards.map((q) => q.clear()));
      return true;
    }
    await clearEntries(this.#client, { key: this.#key(), home: "queue", queue: this.#name });
    return true;
  }

  #key(): string {
    return this.#client.keys.queue(this.#name);
  }
}
