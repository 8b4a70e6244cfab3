/**
 * Every job running right now, across processes (Sidekiq's `WorkSet`,
 * `Sidekiq::Workers` before 7), read from each process's `<identity>:work`
 * hash.
 *
 * @module
 */
import type { Client } from "../client.ts";
import { toEpochMs } from "../payload.ts";
import type { Command, RedisReply } from "../transport/transport.ts";
import { JobRecord } from "./job_record.ts";
import { arr, num, pairs, str } from "../transport/reply_readers.ts";

/** One running job. */
export interface Work {
  /** The identity of the process running it. */
  process: string;
  /** The slot (Sidekiq's thread id; edgekiq's `capsule:slot`). */
  slot: string;
  /** The queue it came from. */
  queue: string;
  /** When it started. */
  runAt: Date;
  /** The job. */
  payload: JobRecord;
  /** Why it was asked to stop on its own (a cancel), while it has not stopped yet (edgekiq's `stopping` field). */
  stopping?: string;
  /** The latest value the job gave `ctx.progress()` (edgekiq's workers; written with each heartbeat). */
  progress?: unknown;
}

/**
 * The jobs in flight. Each work entry's `payload` may be a raw JSON string
 * (edgekiq, Sidekiq 7+) or an object (older Sidekiq); both are read.
 *
 * @example
 * ```ts
 * for (const work of await new Workers(client).list()) {
 *   console.log(work.process, work.queue, work.payload.klass, work.runAt);
 * }
 * ```
 */
export class Workers implements AsyncIterable<Work> {
  #client: Client;

  /**
   * Reads running jobs through `client`.
   *
   * @param client The client whose transport and key prefix to use.
   */
  constructor(client: Client) {
    this.#client = client;
  }

  /**
   * Every running job of every live process, oldest first: SMEMBERS, then
   * one pipeline of HGET info + HGETALL of the work hash per process, under
   * both Sidekiq 7's `:work` and Sidekiq 6's `:workers` names (edgekiq writes
   * both; a slot seen twice is listed once).
   *
   * @example
   * ```ts
   * const stuck = (await workers.list()).filter((w) => Date.now() - w.runAt.getTime() > 3600_000);
   * ```
   */
  async list(): Promise<Work[]> {
    const k = this.#client.keys;
    const identities = await this.#members();
    if (identities.length === 0) return [];
    const commands: Command[] = [];
    for (const id of identities) {
      commands.push(["HGET", k.process(id), "info"], ["HGETALL", k.work(id)], ["HGETALL", k.legacyWork(id)]);
    }
    const replies = await this.#client.transport.pipeline(commands);
    const out: Work[] = [];
    identities.forEach((process, i) => {
      if (replies[3 * i] === null) return; // the process is gone
      out.push(...processWork(process, replies[3 * i + 1], replies[3 * i + 2]));
    });
    return out.sort((a, b) => a.runAt.getTime() - b.runAt.getTime());
  }

  /** Iterates {@link Workers.list}. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Work, void, undefined> {
    yield* await this.list();
  }

  /**
   * How many jobs are running: the sum of every process's `busy`.
   *
   * @example
   * ```ts
   * await new Workers(client).size(); // 7
   * ```
   */
  async size(): Promise<number> {
    const k = this.#client.keys;
    const identities = await this.#members();
    if (identities.length === 0) return 0;
    const replies = await this.#client.transport.pipeline(identities.map((id) => ["HGET", k.process(id), "busy"]));
    return replies.reduce<number>((sum, busy) => sum + num(busy), 0);
  }

  async #members(): Promise<string[]> {
    const reply = await this.#client.transport.call("SMEMBERS", this.#client.keys.processes);
    return arr(reply).map((m) => str(m) ?? "").filter((m) => m !== "").sort();
  }
}

/**
 * One process's running jobs from its `HGETALL <identity>:work` and
 * `HGETALL <identity>:workers` replies, each slot once. Exported so a
 * reader that batches many processes' reads (the dashboard) parses them
 * the same way.
 *
 * @example
 * ```ts
 * const jobs = processWork(identity, await t.call("HGETALL", `${identity}:work`), null);
 * ```
 */
export function processWork(process: string, work: RedisReply, legacyWork: RedisReply): Work[] {
  const out: Work[] = [];
  const seen = new Set<string>();
  for (const [slot, value] of [...pairs(work), ...pairs(legacyWork)]) {
    if (seen.has(slot)) continue;
    seen.add(slot);
    const entry = toWork(process, slot, str(value));
    if (entry) out.push(entry);
  }
  return out;
}

function toWork(process: string, slot: string, json: string | null): Work | null {
  if (!json) return null;
  let hash: unknown;
  try {
    hash = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof hash !== "object" || hash === null || Array.isArray(hash)) return null;
  const { queue, payload, run_at: runAt, stopping, progress } = hash as Record<string, unknown>;
  const q = typeof queue === "string" ? queue : undefined;
  const record = typeof payload === "string"
    ? new JobRecord(payload, q)
    : typeof payload === "object" && payload !== null && !Array.isArray(payload)
    ? new JobRecord(payload as Record<string, unknown>, q)
    : new JobRecord("", q);
  const work: Work = {
    process,
    slot,
    queue: q ?? record.queue ?? "",
    runAt: new Date(typeof runAt === "number" && Number.isFinite(runAt) ? toEpochMs(runAt) : 0),
    payload: record,
    ...(typeof stopping === "string" ? { stopping } : {}),
  };
  if (progress !== undefined) work.progress = progress;
  return work;
}
