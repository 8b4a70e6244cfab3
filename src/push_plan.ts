/**
 * Writing a push: serialised payloads grouped by destination (each queue,
 * the `schedule` set), cut into batches, each batch one MULTI (Sidekiq's
 * `atomic_push`: `SADD queues` + `LPUSH queue:<q>`, or `ZADD schedule`), so
 * a queue never has its SADD without its LPUSH and a batch lands whole or
 * not at all. Jobs a middleware guarded (`write_guard.ts`) are grouped by
 * their guards and written by those guards' script instead, one call per batch, which is
 * just as atomic. A failed batch stops the push and rejects with a
 * {@link PushError} listing which jids landed.
 *
 * @module
 */
import { TransportError } from "./transport/transport_error.ts";
import type { Keys } from "./keys.ts";
import { PushError } from "./push_error.ts";
import { sanitize } from "./sanitize.ts";
import type { Command, RedisArg, Transport } from "./transport/transport.ts";
import { guardedPush } from "./guarded_push.ts";
import type { GuardedWrite, WriteGuard } from "./write_guard.ts";
import type { PushVerdict } from "./push_result.ts";

/** One MULTI (or one guard script call) and the jids it writes. */
interface Batch {
  jids: string[];
  send(transport: Transport): Promise<GuardedWrite[] | unknown>;
  /** Whether `send` resolves to one verdict per jid (a guard script). */
  guarded: boolean;
}

/** Guarded jobs with the same guards: one script (see `guarded_push.ts`). */
interface GuardGroup {
  /** The jobs' guards, sorted by name (the script's identity). */
  guards: readonly WriteGuard[];
  /** Per job: its queue key, then each guard's keys. */
  keys: string[];
  /** Per job: queue name, jid, payload, run time, then each guard's args. */
  args: RedisArg[];
  jids: string[];
}

/** Options for {@link PushPlan.write}. */
export interface PushWriteOptions {
  /** Key names. */
  keys: Keys;
  /** Jobs per MULTI. */
  batchSize: number;
  /** The job class, for the error message. */
  className: string;
  /**
   * The namespace of each batch no guard writes, asked once per batch (a
   * sharded client's next shard); default `keys`. Guarded batches stay in
   * `keys`: their guards' keys were named there.
   */
  spread?: () => Keys;
}

/**
 * Payloads waiting to be written, by destination.
 *
 * @example
 * ```ts
 * const plan = new PushPlan();
 * plan.enqueue("default", json, jid);
 * plan.schedule(Date.now() + 60_000, laterJson, laterJid);
 * await plan.write(transport, { keys: keys(), batchSize: 1000, className: "HardJob" });
 * ```
 */
export class PushPlan {
  #queues = new Map<string, { payloads: string[]; jids: string[] }>();
  /** ZADD arguments: score (epoch seconds), payload, ... */
  #scheduled: (string | number)[] = [];
  #scheduledJids: string[] = [];
  #guarded = new Map<string, GuardGroup>();

  /** Adds a payload for `queue`, to be pushed behind those added before it. */
  enqueue(queue: string, payload: string, jid: string): void {
    const group = this.#queues.get(queue);
    if (group) {
      group.payloads.push(payload);
      group.jids.push(jid);
    } else this.#queues.set(queue, { payloads: [payload], jids: [jid] });
  }

  /** Adds a payload to run at `atMs` (epoch milliseconds). */
  schedule(atMs: number, payload: string, jid: string): void {
    this.#scheduled.push(atMs / 1000, payload);
    this.#scheduledJids.push(jid);
  }

  /**
   * Adds a payload written by its guards' script (see `write_guard.ts`):
   * to `queue` at `queueKey`, or to `schedule` at `atMs` (epoch ms).
   */
  guarded(
    guards: readonly WriteGuard[],
    job: { queue: string; queueKey: string; atMs: number | undefined; json: string; jid: string },
  ): void {
    const sorted = [...guards].sort((a, b) => (a.fragment.name < b.fragment.name ? -1 : 1));
    const groupId = sorted.map((g) => g.fragment.name).join("+");
    let group = this.#guarded.get(groupId);
    if (!group) this.#guarded.set(groupId, group = { guards: sorted, keys: [], args: [], jids: [] });
    group.keys.push(job.queueKey);
    group.args.push(job.queue, job.jid, job.json, job.atMs === undefined ? "" : job.atMs / 1000);
    for (const guard of sorted) {
      group.keys.push(...guard.keys);
      group.args.push(...guard.args);
    }
    group.jids.push(job.jid);
  }

  /**
   * Writes every batch, in order, one MULTI each. Queue order across
   * batches must hold: a transport that keeps call order gets the next batch
   * while Redis applies the last one; others (MULTIs on separate
   * connections, HTTP) one batch at a time. On a failure nothing more is
   * sent, the batch already on its way (if any) is waited for, and the call
   * rejects with a {@link PushError}. Resolves to the guards' verdicts by
   * jid (jobs not guarded were all pushed), collected in `verdicts`, which
   * also holds those of the batches that landed when the call rejects.
   */
  async write(
    transport: Transport,
    options: PushWriteOptions,
    verdicts: Map<string, PushVerdict> = new Map(),
  ): Promise<Map<string, PushVerdict>> {
    const batches = this.#batches(options);
    const landed: string[] = [];
    const failed: string[] = [];
    let maybeApplied = false;
    let firstError: unknown;
    let failedAt = -1;
    const settle = async (index: number, sent: Promise<unknown>): Promise<void> => {
      try {
        const reply = await sent;
        const { jids, guarded } = batches[index];
        if (!guarded) {
          for (const jid of jids) landed.push(jid);
          return;
        }
        const writes = reply as GuardedWrite[];
        jids.forEach((jid, i) => {
          const verdict = writes[i] ?? { status: "duplicate", existing: undefined };
          verdicts.set(jid, verdict);
          // Only what this push wrote is in Redis under its jid.
          if (verdict.status === "pushed" || verdict.status === "replaced") landed.push(jid);
        });
      } catch (error) {
        for (const jid of batches[index].jids) failed.push(jid);
        maybeApplied ||= mayHaveApplied(error);
        if (firstError === undefined) {
          firstError = error;
          failedAt = index;
        }
      }
    };
    let next = 0;
    let inFlight: { index: number; sent: Promise<unknown> } | undefined;
    while (next < batches.length && firstError === undefined) {
      const index = next++;
      const sent = batches[index].send(transport);
      if (!transport.ordered) {
        await settle(index, sent);
        continue;
      }
      // Awaited once the next batch is out; never left unobserved.
      sent.catch(() => {});
      if (inFlight) await settle(inFlight.index, inFlight.sent);
      inFlight = { index, sent };
    }
    if (inFlight) await settle(inFlight.index, inFlight.sent);
    if (firstError === undefined) return verdicts;
    const notSent = batches.slice(next).flatMap((batch) => batch.jids);
    const reason = sanitize(firstError instanceof Error ? firstError.message : String(firstError), 200);
    throw new PushError(
      `Cannot push all jobs of ${sanitize(options.className, 100)} as batch ${
        failedAt + 1
      } of ${batches.length} failed (${reason}): ${landed.length} landed, ${failed.length} failed${
        maybeApplied ? " (their reply was lost: they may have been written)" : ""
      }, ${notSent.length} not sent`,
      { landed, failed, maybeApplied, notSent },
      { cause: firstError },
    );
  }

  #batches({ keys, batchSize, spread }: PushWriteOptions): Batch[] {
    const batches: Batch[] = [];
    const multi = (commands: Command[], jids: string[]): Batch => ({
      jids,
      send: (transport) => transport.pipeline(commands, { atomic: true }),
      guarded: false,
    });
    for (const [queue, { payloads, jids }] of this.#queues) {
      for (let i = 0; i < payloads.length; i += batchSize) {
        const k = spread?.() ?? keys;
        batches.push(multi(
          [["SADD", k.queues, queue], ["LPUSH", k.queue(queue), ...payloads.slice(i, i + batchSize)]],
          jids.slice(i, i + batchSize),
        ));
      }
    }
    for (let i = 0; i < this.#scheduledJids.length; i += batchSize) {
      batches.push(multi(
        [["ZADD", (spread?.() ?? keys).schedule, ...this.#scheduled.slice(2 * i, 2 * (i + batchSize))]],
        this.#scheduledJids.slice(i, i + batchSize),
      ));
    }
    for (const { guards, keys: jobKeys, args: jobArgs, jids } of this.#guarded.values()) {
      const script = guardedPush(guards.map((g) => g.fragment));
      const k = 1 + guards.reduce((n, g) => n + g.keys.length, 0);
      const a = 4 + guards.reduce((n, g) => n + g.args.length, 0);
      for (let i = 0; i < jids.length; i += batchSize) {
        const batchKeys = [keys.queues, keys.schedule, ...jobKeys.slice(k * i, k * (i + batchSize))];
        const batchArgs = jobArgs.slice(a * i, a * (i + batchSize));
        batches.push({
          jids: jids.slice(i, i + batchSize),
          send: (transport) => transport.script(script, batchKeys, batchArgs),
          guarded: true,
        });
      }
    }
    return batches;
  }
}

/**
 * Whether a failed MULTI may still have been applied. Transports mark a lost
 * reply with `maybeApplied`; without the mark, only a connection failure
 * leaves the outcome open (Redis refusing a command or aborting the
 * transaction writes nothing of it), and an error that is not a
 * TransportError at all is taken as unknown.
 */
function mayHaveApplied(error: unknown): boolean {
  const flag = (error as { maybeApplied?: boolean } | null)?.maybeApplied;
  if (typeof flag === "boolean") return flag;
  return error instanceof TransportError ? error.kind === "connection" : true;
}
