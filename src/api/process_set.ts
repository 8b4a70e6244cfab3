/**
 * The set of live worker processes (Sidekiq's `ProcessSet`), read from the
 * `processes` set and each process's heartbeat hash.
 *
 * @module
 */
import type { Client } from "../client.ts";
import type { RedisReply } from "../transport/transport.ts";
import { Process, type ProcessData } from "./sidekiq_process.ts";
import { invalid } from "./arguments.ts";
import { arr, num, str } from "../transport/reply_readers.ts";

/** The hash fields a heartbeat writes, in the order {@link ProcessSet} reads (HMGET) and {@link toData} parses them. */
export const FIELDS = ["info", "busy", "beat", "quiet", "rss", "rtt_us", "concurrency"] as const;

/**
 * The processes registered in `processes` whose heartbeat hash still
 * exists. Reads them all in two round trips.
 *
 * @example
 * ```ts
 * const processes = new ProcessSet(client);
 * await processes.cleanup(); // forget processes that stopped beating
 * for await (const p of processes) console.log(p.identity, p.busy);
 * ```
 */
export class ProcessSet implements AsyncIterable<Process> {
  #client: Client;
  /** Each shard's processes, on a sharded namespace's client (a worker registers once per shard). */
  #shards: readonly ProcessSet[] | undefined;

  /**
   * Reads processes through `client`.
   *
   * @param client The client whose transport and key prefix to use.
   */
  constructor(client: Client) {
    this.#client = client;
    const shards = client.shards;
    if (shards.length > 1) this.#shards = shards.map((shard) => new ProcessSet(shard));
  }

  /**
   * Every live process, sorted by identity: SMEMBERS, then one pipeline of
   * HMGETs. Entries whose hash has expired are skipped.
   *
   * @example
   * ```ts
   * const busy = (await processes.list()).reduce((n, p) => n + p.busy, 0);
   * ```
   */
  async list(): Promise<Process[]> {
    if (this.#shards) {
      const all = (await Promise.all(this.#shards.map((set) => set.list()))).flat();
      return all.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
    }
    const identities = await this.#members();
    if (identities.length === 0) return [];
    const k = this.#client.keys;
    const replies = await this.#client.transport.pipeline(identities.map((id) => ["HMGET", k.process(id), ...FIELDS]));
    const out: Process[] = [];
    identities.forEach((identity, i) => {
      const data = toData(replies[i]);
      if (data) out.push(new Process(this.#client, identity, data));
    });
    return out;
  }

  /** Iterates {@link ProcessSet.list}. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Process, void, undefined> {
    yield* await this.list();
  }

  /**
   * One process by identity, or `null` if it is not alive.
   *
   * @example
   * ```ts
   * await (await processes.find("web.1:12345:0a1b2c3d4e5f"))?.quiet();
   * ```
   */
  async find(identity: string): Promise<Process | null> {
    if (typeof identity !== "string" || identity === "") {
      throw invalid("find process", "identity", "a non-empty string", identity);
    }
    if (this.#shards) {
      for (const set of this.#shards) {
        const found = await set.find(identity);
        if (found) return found;
      }
      return null;
    }
    const reply = await this.#client.transport.call("HMGET", this.#client.keys.process(identity), ...FIELDS);
    const data = toData(reply);
    return data ? new Process(this.#client, identity, data) : null;
  }

  /**
   * Members of `processes` (SCARD), alive or not.
   *
   * @example
   * ```ts
   * await processes.size(); // 2
   * ```
   */
  async size(): Promise<number> {
    if (this.#shards) return (await Promise.all(this.#shards.map((set) => set.size()))).reduce((a, b) => a + b, 0);
    return num(await this.#client.transport.call("SCARD", this.#client.keys.processes));
  }

  /**
   * Removes from `processes` every identity whose hash has no `info` (its
   * heartbeat expired: the process died). Resolves to how many it removed.
   *
   * @example
   * ```ts
   * await new ProcessSet(client).cleanup(); // 1
   * ```
   */
  async cleanup(): Promise<number> {
    if (this.#shards) return (await Promise.all(this.#shards.map((set) => set.cleanup()))).reduce((a, b) => a + b, 0);
    const identities = await this.#members();
    if (identities.length === 0) return 0;
    const k = this.#client.keys;
    const infos = await this.#client.transport.pipeline(identities.map((id) => ["HGET", k.process(id), "info"]));
    const dead = identities.filter((_, i) => infos[i] === null);
    if (dead.length === 0) return 0;
    return num(await this.#client.transport.call("SREM", k.processes, ...dead));
  }

  async #members(): Promise<string[]> {
    const reply = await this.#client.transport.call("SMEMBERS", this.#client.keys.processes);
    return arr(reply).map((m) => str(m) ?? "").filter((m) => m !== "").sort();
  }
}

/**
 * Parses one process's `HMGET <identity> ...FIELDS` reply; `null` when its
 * heartbeat has expired (no `info`). Exported so a reader that batches
 * many processes' HMGETs (the dashboard) parses them the same way.
 *
 * @example
 * ```ts
 * const data = toData(await transport.call("HMGET", identity, ...FIELDS));
 * ```
 */
export function toData(reply: RedisReply): ProcessData | null {
  const [info, busy, beat, quiet, rss, rttUs, concurrency] = arr(reply);
  const json = str(info);
  if (json === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = {};
  }
  return {
    info: typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? parsed as Record<string, unknown>
      : {},
    busy: num(busy),
    beat: num(beat),
    quiet: str(quiet) === "true",
    rss: num(rss),
    rttUs: num(rttUs),
    concurrency: concurrency === null || concurrency === undefined ? undefined : num(concurrency),
  };
}
