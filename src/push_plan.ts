/**
 * Writing a push: serialised payloads grouped by destination (each queue,
 * the `schedule` set), cut into batches, each batch one MULTI (Sidekiq's
 * `atomic_push`: `SADD queues` + `LPUSH queue:<q>`, or `ZADD schedule`), so
 * a queue never has its SADD without its LPUSH and a batch lands whole or
 * not at all. A failed batch stops the push and rejects with a
 * {@link PushError} listing which jids landed.
 *
 * @module
 */
import { TransportError } from "./errors.ts";
import type { Keys } from "./keys.ts";
import { PushError } from "./push_error.ts";
import { sanitize } from "./sanitize.ts";
import type { Command, Transport } from "./transport/transport.ts";

/** One MULTI and the jids it writes. */
interface Batch {
  commands: Command[];
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
   * Writes every batch, in order, one MULTI each. Queue order across
   * batches must hold: a transport that keeps call order gets the next batch
   * while Redis applies the last one; others (MULTIs on separate
   * connections, HTTP) one batch at a time. On a failure nothing more is
   * sent, the batch already on its way (if any) is waited for, and the call
   * rejects with a {@link PushError}.
   */
  async write(transport: Transport, options: PushWriteOptions): Promise<void> {
    const batches = this.#batches(options);
    const landed: string[] = [];
    const failed: string[] = [];
    let maybeApplied = false;
    let firstError: unknown;
    let failedAt = -1;
    const settle = async (index: number, sent: Promise<unknown>): Promise<void> => {
      try {
        await sent;
        for (const jid of batches[index].jids) landed.push(jid);
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
      const sent = transport.pipeline(batches[index].commands, { atomic: true });
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
    if (firstError === undefined) return;
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

  #batches({ keys, batchSize }: PushWriteOptions): Batch[] {
    const batches: Batch[] = [];
    for (const [queue, { payloads, jids }] of this.#queues) {
      for (let i = 0; i < payloads.length; i += batchSize) {
        batches.push({
          commands: [["SADD", keys.queues, queue], ["LPUSH", keys.queue(queue), ...payloads.slice(i, i + batchSize)]],
          jids: jids.slice(i, i + batchSize),
        });
      }
    }
    for (let i = 0; i < this.#scheduledJids.length; i += batchSize) {
      batches.push({
        commands: [["ZADD", keys.schedule, ...this.#scheduled.slice(2 * i, 2 * (i + batchSize))]],
        jids: this.#scheduledJids.slice(i, i + batchSize),
      });
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
