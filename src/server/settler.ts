/**
 * Settling a job: making its decided outcome durable before it may be
 * acknowledged. The outcome was decided and serialised once (`retry.ts`);
 * here it is written, and written again while Redis fails transiently, as
 * the same bytes through a script that applies once (`scripts/settle.ts`),
 * so no failure and no lost reply can walk a job through its retries or
 * give it two retry entries. Features' outcome writes go first (they apply
 * once by contract); the job stays held until everything is written.
 *
 * @module
 */
import { deadTrim, type DeathHandler } from "../dead_set_rules.ts";
import type { Keys } from "../keys.ts";
import type { JobPayload } from "../payload.ts";
import { SETTLE } from "../scripts/settle.ts";
import { BATCH_SPAN } from "../scripts/held.ts";
import type { Command, Transport } from "../transport/transport.ts";
import type { Script } from "../transport/script.ts";
import { TransportError } from "../transport/transport_error.ts";
import type { UnitOfWork } from "./unit_of_work.ts";
import type { OutcomeWrite } from "./worker_feature.ts";
import { frameWrites } from "./frame_writes.ts";
import { EndOfBurst } from "../end_of_burst.ts";

/**
 * What to do with a unit once it has been processed: acknowledge it, put it
 * back on its queue (cut off by hard shutdown), or leave it held (its
 * outcome could not be written before hard shutdown; the release at stop or
 * recovery gives it back).
 */
export type UnitOutcome = "ack" | "requeue" | "abandon";

/** A write Redis refuses in a way no retry can fix (a key of the wrong type), with Redis's error. */
export interface Unwritable {
  readonly unwritable: unknown;
}

/** An entry a job's outcome writes: to `retry`, `dead` or `schedule`, scored in epoch seconds. */
export interface SettleEntry {
  readonly target: "retry" | "dead" | "schedule";
  readonly score: number;
  readonly json: string;
}

/** Everything a {@link Settler} needs. */
export interface SettlerOptions {
  transport: Transport;
  keys: Keys;
  /** The held hash a unit of `queue` was fetched into; undefined with basic fetch. */
  heldKey: (queue: string) => string | undefined;
  /** Fires at hard shutdown: writing gives up ("abandon"). */
  signal: AbortSignal;
  deathHandlers: readonly DeathHandler[];
  onError: (error: unknown, context: Record<string, unknown>) => void;
}

/** Longest pause between attempts to write an outcome, ms. */
const MAX_WRITE_BACKOFF_MS = 5000;

/**
 * Most coalesced writes in one call (a bound on one script's KEYS and running time); the reliable fetch carries as many
 * in one of its calls.
 */
export const MAX_COALESCED = 500;

/** Coalesced writes of one script waiting for the call on its way to return. */
interface Lane {
  busy: boolean;
  waiting: Waiting[];
}

/** A coalesced write waiting for its call, and whom to tell how it went. */
interface Waiting {
  readonly write: OutcomeWrite;
  readonly done: (outcome: UnitOutcome | Unwritable) => void;
}

/**
 * Writes outcomes durably, once.
 *
 * @example
 * ```ts
 * const settler = new Settler({ transport, keys: keys(), heldKey, signal, deathHandlers: [], onError });
 * await settler.settle(unit, { target: "retry", score: at, json }, "writing retry"); // "ack"
 * ```
 */
export class Settler {
  #options: SettlerOptions;
  #lanes = new Map<Script<unknown>, Lane>();
  /** The writes waiting go once this burst of work is over (or a slot about to wait sends them: `flush`). */
  #burst = new EndOfBurst(() => this.#send());

  constructor(options: SettlerOptions) {
    this.#options = options;
  }

  /**
   * Writes `entry` for `unit` and marks it done, in one step that applies
   * once. A transient failure (connection, failover, OOM) is retried with
   * backoff for as long as the process runs; the job stays held and owned.
   * One that can never succeed (a key of the wrong type) resolves to
   * {@link Unwritable} for the caller to bury the job instead.
   */
  settle(unit: UnitOfWork, entry: SettleEntry, what: string): Promise<UnitOutcome | Unwritable> {
    const { transport, keys } = this.#options;
    const key = keys[entry.target];
    const trim = entry.target === "dead" ? deadTrim(entry.score) : [];
    const held = this.#options.heldKey(unit.queue);
    const write = held === undefined
      // Basic fetch holds nothing: the same bytes again are the same member, at most one entry.
      ? () => transport.pipeline(plainWrite(key, entry, trim), { atomic: true })
      : () =>
        transport.script(SETTLE, [held, keys.queue(unit.queue), key], [
          Math.floor(unit.token / BATCH_SPAN),
          unit.token % BATCH_SPAN,
          unit.raw,
          entry.score,
          entry.json,
          ...trim,
        ]);
    return this.#durably(write, { context: what, queue: unit.queue });
  }

  /**
   * Features' outcome writes, each applied once by contract, all sent
   * together; a coalescing write shares its call with the same script's
   * writes of other jobs finishing at the same moment, and its lane retries
   * that call (a job's lone coalesced write, the usual case, costs no retry
   * frame of its own).
   */
  writeFeatures(unit: UnitOfWork, writes: readonly OutcomeWrite[]): Promise<UnitOutcome | Unwritable> {
    if (writes.length === 1 && writes[0].coalesce) return this.#coalesced(writes[0]);
    return this.#writeAll(unit, writes);
  }

  /**
   * As {@link Settler.writeFeatures} for one coalescing write, answered by
   * calling `done` (never synchronously) instead of through a promise: a
   * batch job's success costs its slot no promise of its own.
   */
  writeCoalesced(write: OutcomeWrite, done: (outcome: UnitOutcome | Unwritable) => void): void {
    let lane = this.#lanes.get(write.script);
    if (!lane) this.#lanes.set(write.script, lane = { busy: false, waiting: [] });
    lane.waiting.push({ write, done });
    this.#burst.note();
  }

  async #writeAll(unit: UnitOfWork, writes: readonly OutcomeWrite[]): Promise<UnitOutcome | Unwritable> {
    const { transport } = this.#options;
    const alone = writes.filter((w) => !w.coalesce);
    const outcomes = await Promise.all([
      ...writes.filter((w) => w.coalesce).map((w) => this.#coalesced(w)),
      alone.length === 0 ? "ack" as const : this.#durably(
        () => Promise.all(alone.map((w) => transport.script(w.script, w.keys, w.args))),
        { context: "writing features' outcome", queue: unit.queue },
      ),
    ]);
    return outcomes.find((outcome) => outcome !== "ack") ?? "ack";
  }

  /**
   * Queues `write` for the next call of its script: sent when this burst of
   * work is over (or sooner, see `flush`), or with every write made
   * meanwhile once the call on its way returns.
   */
  #coalesced(write: OutcomeWrite): Promise<UnitOutcome | Unwritable> {
    return new Promise((done) => this.writeCoalesced(write, done));
  }

  /**
   * Sends the coalesced writes waiting for a call, in one call per script
   * (one whose call is on its way sends them when it returns). A slot calls
   * it before it waits for anything (its writes, the next job): a call then
   * carries every job finished meanwhile, not the first alone.
   */
  flush(): void {
    if (this.#burst.end()) this.#send();
  }

  #send(): void {
    for (const [script, lane] of this.#lanes) {
      if (!lane.busy && lane.waiting.length) void this.#flush(script, lane);
    }
  }

  /** One call of a lane's waiting writes, made durable; then the writes made meanwhile. */
  async #flush(script: Script<unknown>, lane: Lane): Promise<void> {
    lane.busy = true;
    const sent = lane.waiting.splice(0, MAX_COALESCED);
    const outcome = await this.#call(script, sent);
    if (typeof outcome === "object" && sent.length > 1) {
      // A write that can never apply (a key of the wrong type) must not bury the jobs it shared a call with.
      await Promise.all(sent.map(async (one) => this.#tell(one.done, await this.#call(script, [one]))));
    } else for (const { done } of sent) this.#tell(done, outcome);
    lane.busy = false;
    // Writes made while this call was on its way go with those of the jobs its reply lets go on.
    if (lane.waiting.length >= MAX_COALESCED) void this.#flush(script, lane);
    else if (lane.waiting.length) this.#burst.note();
  }

  /** Tells a write's caller how it went: a caller that throws must not keep the others of its call from hearing. */
  #tell(done: Waiting["done"], outcome: UnitOutcome | Unwritable): void {
    try {
      done(outcome);
    } catch (error) {
      this.#options.onError(error, { context: "after writing features' outcome" });
    }
  }

  /** Calls `script` with `sent`, framed, until it applies, hard shutdown, or it never can. */
  #call(script: Script<unknown>, sent: readonly Waiting[]): Promise<UnitOutcome | Unwritable> {
    const [keys, args] = frameWrites(sent.map((waiting) => waiting.write));
    return this.#durably(() => this.#options.transport.script(script, keys, args), {
      context: "writing features' outcome",
      jobs: sent.length,
    }, sent.length === 1);
  }

  /**
   * Runs `write` until it succeeds: `"ack"`; until hard shutdown:
   * `"abandon"`; or until it fails in a way no retry can fix: {@link Unwritable}
   * (reported unless `reportUnwritable` is false: the caller tries its parts).
   */
  async #durably(
    write: () => Promise<unknown>,
    context: Record<string, unknown>,
    reportUnwritable = true,
  ): Promise<UnitOutcome | Unwritable> {
    const { signal, onError } = this.#options;
    let delay = 100;
    for (;;) {
      try {
        await write();
        return "ack";
      } catch (error) {
        if (!transient(error)) {
          if (reportUnwritable) onError(error, { ...context, outcome: "the outcome can never be written" });
          return { unwritable: error };
        }
        onError(error, context);
        if (signal.aborted) return "abandon";
        await pause(delay, signal);
        delay = Math.min(delay * 2, MAX_WRITE_BACKOFF_MS);
      }
    }
  }

  /** Runs the death handlers for a job that died (once its outcome is durable). */
  async died(payload: JobPayload, error: unknown): Promise<void> {
    for (const handler of this.#options.deathHandlers) {
      try {
        await handler(payload, error);
      } catch (handlerError) {
        this.#options.onError(handlerError, { context: "death handler", jid: payload.jid });
      }
    }
  }
}

function plainWrite(key: string, entry: SettleEntry, trim: number[]): Command[] {
  const commands: Command[] = [["ZADD", key, entry.score, entry.json]];
  if (trim.length) commands.push(["ZREMRANGEBYSCORE", key, "-inf", trim[0]], ["ZREMRANGEBYRANK", key, 0, trim[1]]);
  return commands;
}

/** Whether a write may succeed if tried again. */
function transient(error: unknown): boolean {
  return error instanceof TransportError && error.kind !== "command" && error.kind !== "wrongtype";
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
