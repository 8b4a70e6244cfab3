/**
 * Every batch, as Sidekiq Pro's `Sidekiq::BatchSet` lists them: newest
 * first (by expiry, which counts from each batch's last registration),
 * paged, each with its status; and one batch's children.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import type { Command } from "../../transport/redis_values.ts";
import { pairs, scanReply } from "../../transport/reply_readers.ts";
import { checkBid } from "./bid.ts";
import { type BatchStatus, parseStatus, readStatus, statusCommands } from "./batch_status.ts";

/** Children listed per batch at most (a dashboard page's bound). */
const MAX_CHILDREN = 1000;
/** ZSCAN calls one listing of children makes at most (about 20,000 batches looked at). */
const MAX_SCAN_STEPS = 20;

/**
 * The batches in Redis.
 *
 * @example
 * ```ts
 * const set = new BatchSet(client);
 * console.log(await set.size());
 * for (const status of await set.page({ page: 1, count: 25 })) console.log(status.bid, status.pending);
 * ```
 */
export class BatchSet {
  #client: Client<object>;

  constructor(client: Client<object>) {
    this.#client = client;
  }

  /** How many batches have not expired. */
  async size(): Promise<number> {
    return Number(await this.#client.transport.call("ZCOUNT", this.#client.keys.batches, Date.now(), "+inf"));
  }

  /** One page of batches, newest first (`page` from 1), each with its status (two round trips). */
  async page(options: { page?: number; count?: number } = {}): Promise<BatchStatus[]> {
    const count = Math.max(1, Math.min(100, Math.floor(options.count ?? 25)));
    const page = Math.max(1, Math.floor(options.page ?? 1));
    const { transport, keys } = this.#client;
    const bids = (await transport.call(
      "ZREVRANGEBYSCORE",
      keys.batches,
      "+inf",
      Date.now(),
      "LIMIT",
      (page - 1) * count,
      count,
    )) as string[];
    if (bids.length === 0) return [];
    const commands: Command[] = bids.flatMap((bid) => statusCommands(keys, bid));
    const replies = await transport.pipeline(commands);
    const out: BatchStatus[] = [];
    bids.forEach((bid, i) => {
      const status = parseStatus(bid, replies.slice(3 * i, 3 * i + 3));
      if (status) out.push(status);
    });
    return out;
  }

  /** One batch's status; undefined if it does not exist. */
  get(bid: string): Promise<BatchStatus | undefined> {
    return readStatus(this.#client, checkBid(bid, "read a batch"));
  }

  /**
   * The ids of a batch's direct child batches: up to 1,000, found among the
   * first 20,000 or so batches (a child's id starts with its parent's).
   */
  async children(bid: string): Promise<string[]> {
    checkBid(bid, "list a batch's children");
    const { transport, keys } = this.#client;
    const out: string[] = [];
    let cursor = "0";
    let steps = 0;
    do {
      const [next, found] = scanReply(
        await transport.call("ZSCAN", keys.batches, cursor, "MATCH", `${bid}.*`, "COUNT", 1000),
      );
      for (const [member] of pairs(found)) if (!member.slice(bid.length + 1).includes(".")) out.push(member);
      cursor = next;
    } while (cursor !== "0" && out.length < MAX_CHILDREN && ++steps < MAX_SCAN_STEPS);
    return out.slice(0, MAX_CHILDREN);
  }
}
