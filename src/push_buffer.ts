/**
 * Reliable push (Sidekiq Pro's `reliable_push`): when Redis cannot be
 * reached, a client with `reliablePush` keeps the jobs it could not write in
 * a bounded in-memory buffer, answers with their jids, and writes them in
 * order once Redis answers again: on its own retry timer (100 ms doubling
 * to 5 s), or when asked (`flushBuffered`). While jobs wait, a new push
 * goes behind them at once, without a round trip, so the order holds and a
 * push does not wait on a Redis that is away.
 *
 * Nothing is written twice: every write of such a client carries the
 * pushed-mark guard (`pushed_mark_guard.ts`), so a resend of a push whose
 * reply was lost finds its mark and writes nothing, even if the job already
 * ran. Nothing is dropped while the process lives: a job leaves the buffer
 * only once Redis confirmed it, or refused it for good (a queue key of the
 * wrong type: `onDropped` gets it). What it cannot do: a process that dies
 * with jobs in the buffer loses them (it is memory), and a Redis that loses
 * its data loses the marks with the jobs.
 *
 * @module
 */
import { ConfigError } from "./errors.ts";
import { describeValue } from "./describe_value.ts";
import type { Keys } from "./keys.ts";
import { PushBufferFullError, PushError } from "./push_error.ts";
import { PushPlan } from "./push_plan.ts";
import { BUFFERED, type PushVerdict } from "./push_result.ts";
import { PUSHED_MARK_GUARD } from "./pushed_mark_guard.ts";
import { sanitize } from "./sanitize.ts";
import type { Transport } from "./transport/transport.ts";
import { TransportError } from "./transport/transport_error.ts";
import type { WriteGuard } from "./write_guard.ts";

/** Options for a client's `reliablePush`. */
export interface ReliablePushOptions {
  /** Jobs the buffer holds at most (default 1,000); a push that would pass it rejects with `PushBufferFullError`. */
  maxJobs?: number;
  /**
   * Told of jobs the buffer gave up on because Redis refused them for good
   * (a queue key of the wrong type, a script error): their payloads, to keep
   * elsewhere. Transient failures (connection, failover, out of memory) never
   * drop a job.
   */
  onDropped?: (error: unknown, jobs: readonly BufferedJob[]) => void;
}

/** A job in the reliable-push buffer. */
export interface BufferedJob {
  readonly jid: string;
  readonly queue: string;
  /** When it runs (epoch ms); undefined: now. */
  readonly at: number | undefined;
  /** The payload, as it will be written. */
  readonly payload: string;
}

/** A job ready to write, with the guards its client middleware attached. */
export interface PlannedJob {
  readonly queue: string;
  readonly queueKey: string;
  readonly atMs: number | undefined;
  readonly json: string;
  readonly jid: string;
  readonly guards: readonly WriteGuard[];
}

interface Entry extends PlannedJob {
  /** This client's push sequence: the mark's score. */
  readonly seq: number;
}

/** How long a client's marks outlive its last push (it is gone by then, or writes again). */
const MARKS_TTL_MS = 7 * 24 * 3600 * 1000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;

/**
 * The buffer and the writes of one reliable-push client.
 *
 * @example
 * ```ts
 * const buffer = new PushBuffer(transport, keys(), { maxJobs: 100 }, 1000);
 * const verdicts = await buffer.write(jobs, "HardJob"); // buffered ones: { status: "buffered" }
 * ```
 */
export class PushBuffer {
  #transport: Transport;
  #keys: Keys;
  #maxJobs: number;
  #batchSize: number;
  #onDropped: ReliablePushOptions["onDropped"];
  /** Drawn on first use: an edge runtime refuses random values at module scope, where clients are made. */
  #marks: string | undefined;
  #entries: Entry[] = [];
  #seq = 0;
  /** First sequence of each write in flight (a count per value), so their marks are kept. */
  #inFlight = new Map<number, number>();
  #flushing: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #attempts = 0;
  #lastError: unknown;

  constructor(transport: Transport, keys: Keys, options: ReliablePushOptions, batchSize: number) {
    const maxJobs = options.maxJobs ?? 1000;
    if (!Number.isInteger(maxJobs) || maxJobs < 1) {
      throw new ConfigError(
        `Cannot create client as 'reliablePush.maxJobs' must be a whole number > 0: current value is ${
          describeValue(maxJobs)
        }`,
      );
    }
    if (options.onDropped !== undefined && typeof options.onDropped !== "function") {
      throw new ConfigError(
        `Cannot create client as 'reliablePush.onDropped' must be a function: current value is ${
          describeValue(options.onDropped)
        }`,
      );
    }
    this.#transport = transport;
    this.#keys = keys;
    this.#maxJobs = maxJobs;
    this.#batchSize = batchSize;
    this.#onDropped = options.onDropped;
  }

  /** Jobs waiting in the buffer. */
  get size(): number {
    return this.#entries.length;
  }

  /**
   * Writes `jobs` (in order, behind anything buffered), or buffers what
   * could not be written because Redis could not be reached. Resolves to
   * each job's verdict by jid (`buffered` for those kept).
   */
  async write(jobs: readonly PlannedJob[], className: string, batchSize: number): Promise<Map<string, PushVerdict>> {
    const first = this.#seq;
    this.#seq += jobs.length;
    const entries = jobs.map((job, i): Entry => ({ ...job, seq: first + i }));
    const verdicts = new Map<string, PushVerdict>();
    if (this.#entries.length) {
      // Behind the others, so the order holds; the flush (under way, or on
      // its timer) writes them. Not waiting for a round trip that would
      // most likely fail keeps pushes fast while Redis is away.
      const kept = this.#keep(entries, verdicts, undefined, className);
      if (!this.#flushing && this.#timer === undefined) void this.flush();
      return kept;
    }
    this.#inFlight.set(first, (this.#inFlight.get(first) ?? 0) + 1);
    try {
      await this.#send(entries, className, batchSize, verdicts);
      return verdicts;
    } catch (error) {
      if (!(error instanceof PushError) || !unreachable(error.cause)) throw error;
      const unsent = new Set([...error.failed, ...error.notSent]);
      return this.#keep(entries.filter((e) => unsent.has(e.jid)), verdicts, error, className);
    } finally {
      const n = this.#inFlight.get(first)! - 1;
      if (n) this.#inFlight.set(first, n);
      else this.#inFlight.delete(first);
    }
  }

  /**
   * Writes the buffer out, oldest first, until it is empty or Redis fails
   * again (then the retry timer is set). One flush at a time.
   */
  flush(): Promise<void> {
    return this.#flushing ??= this.#flushNow().finally(() => (this.#flushing = undefined));
  }

  /**
   * Flushes until the buffer is empty or `timeoutMs` has passed; resolves to
   * the jobs still buffered.
   */
  async drain(timeoutMs: number): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      await this.flush();
      const left = deadline - performance.now();
      if (!this.#entries.length || left <= 0) return this.#entries.length;
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, this.#backoff())));
    }
  }

  /** Empties the buffer (after a flush in flight settles) and stops retrying; resolves to what it held. */
  async discard(): Promise<BufferedJob[]> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#entries.splice(0).map(view);
  }

  async #flushNow(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    let isolate = false;
    while (this.#entries.length) {
      // A batch is a run of jobs with the same guards (one script), at most a batch's worth.
      const head = this.#entries[0];
      const id = guardIds(head);
      const limit = isolate ? 1 : this.#batchSize;
      let n = 1;
      while (n < limit && n < this.#entries.length && guardIds(this.#entries[n]) === id) n++;
      const batch = this.#entries.slice(0, n);
      try {
        await this.#send(batch, "buffered jobs", n, new Map());
        // Pushes only ever append, and only this loop takes from the front.
        this.#entries.splice(0, n);
        this.#attempts = 0;
        isolate = false;
      } catch (error) {
        const cause = error instanceof PushError ? error.cause : error;
        if (!refusedForGood(cause)) {
          this.#lastError = cause;
          this.#retryLater();
          return;
        }
        // Find the job Redis refuses: the others of its batch go on (a resend skips what was written).
        if (n > 1) {
          isolate = true;
          continue;
        }
        this.#entries.shift();
        try {
          this.#onDropped?.(cause, [view(head)]);
        } catch { /* the caller's handler: nothing more to do with its failure here */ }
      }
    }
  }

  async #send(entries: Entry[], className: string, batchSize: number, verdicts: Map<string, PushVerdict>) {
    this.#marks ??= this.#keys.pushedMarks(randomId());
    // Marks below the oldest push not yet confirmed (in flight, buffered, this one) are of no use any more.
    let keepFrom = entries[0].seq;
    for (const seq of this.#inFlight.keys()) keepFrom = Math.min(keepFrom, seq);
    if (this.#entries.length) keepFrom = Math.min(keepFrom, this.#entries[0].seq);
    const plan = new PushPlan();
    entries.forEach((entry, i) => {
      // The trim (and the marks' expiry) once per write: on its first job.
      const args = [entry.seq, i === 0 ? keepFrom : "", MARKS_TTL_MS];
      plan.guarded([...entry.guards, { fragment: PUSHED_MARK_GUARD, keys: [this.#marks!], args }], entry);
    });
    await plan.write(this.#transport, { keys: this.#keys, batchSize, className }, verdicts);
  }

  #keep(
    entries: Entry[],
    verdicts: Map<string, PushVerdict>,
    failure: PushError | undefined,
    className: string,
  ): Map<string, PushVerdict> {
    if (this.#entries.length + entries.length > this.#maxJobs) {
      const cause = failure?.cause ?? this.#lastError;
      const reason = sanitize(cause instanceof Error ? cause.message : String(cause), 200);
      const ids = entries.map((e) => e.jid);
      throw new PushBufferFullError(
        `Cannot push job ${className} as Redis cannot be reached (${reason}) and the reliable-push buffer holds ${this.#entries.length} of at most ${this.#maxJobs} jobs: ${entries.length} more do not fit, none of them was buffered`,
        {
          landed: failure?.landed ?? [],
          failed: failure ? failure.failed : [],
          maybeApplied: failure?.maybeApplied ?? false,
          notSent: failure ? failure.notSent : ids,
        },
        { cause, limit: this.#maxJobs },
      );
    }
    if (failure) this.#lastError = failure.cause;
    for (const entry of entries) {
      this.#entries.push(entry);
      verdicts.set(entry.jid, BUFFERED);
    }
    this.#retryLater();
    return verdicts;
  }

  #backoff(): number {
    return Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** this.#attempts);
  }

  #retryLater(): void {
    if (this.#timer !== undefined || !this.#entries.length) return;
    const delay = this.#backoff() * (0.8 + 0.4 * Math.random());
    this.#attempts = Math.min(this.#attempts + 1, 10);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, delay);
  }
}

/** Redis could not be reached, or is between servers (restart, failover): worth buffering. */
function unreachable(error: unknown): boolean {
  return error instanceof TransportError && (error.kind === "connection" || error.kind === "readonly");
}

/** Redis answered that it will never take this write (anything else may pass later: keep trying). */
function refusedForGood(error: unknown): boolean {
  return error instanceof TransportError && (error.kind === "wrongtype" || error.kind === "command");
}

function guardIds(entry: PlannedJob): string {
  return entry.guards.map((g) => g.fragment.name).sort().join("+");
}

function view(entry: Entry): BufferedJob {
  return { jid: entry.jid, queue: entry.queue, at: entry.atMs, payload: entry.json };
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
