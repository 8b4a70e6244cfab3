/**
 * Sidekiq's JobRetry: what happens to a job whose `perform` threw.
 *
 * - `retry: false`: death handlers run, the job is dropped.
 * - otherwise the payload gains `error_message` (<= 10,000 chars),
 *   `error_class`, `retry_count` and `failed_at` / `retried_at`, and goes to
 *   the `retry` set after `count**4 + 15 + rand(10) * (count + 1)` seconds,
 *   or what the job's `retryIn` says (seconds, `"discard"`, `"kill"`);
 * - past `retry` attempts (default 25) or `retry_for` seconds it is
 *   exhausted: `retriesExhausted` may discard it, else it goes to `dead`
 *   (unless `dead: false`) and death handlers run.
 *
 * The write is awaited before the job is acknowledged: if Redis refuses it,
 * the job stays held (the processor retries the write) and, if the process
 * dies meanwhile, recovery finds it (Sidekiq #4141).
 *
 * @module
 */
import { buryPayloads, type DeathHandler } from "../dead_set_rules.ts";
import type { AnyJob } from "../job.ts";
import type { Keys } from "../keys.ts";
import type { Logger } from "../logger.ts";
import { type JobPayload, serializePayload, type TimeFormat, toEpochMs, wireTime } from "../payload.ts";
import type { Transport } from "../transport/transport.ts";
import { RECOVERED_FIELD } from "../scripts/recover.ts";
import { backtraceLines, compressBacktrace } from "./backtrace.ts";

export type { DeathHandler } from "../dead_set_rules.ts";

/** Sidekiq's default retry count. */
export const DEFAULT_MAX_RETRIES = 25;

/** The longest retry delay honoured, seconds (ten years): a larger one would be a score that never comes due. */
export const MAX_RETRY_DELAY_SECONDS = 10 * 365 * 24 * 60 * 60;

/** What became of a failed job. */
export type RetryOutcome = "retry" | "dead" | "discarded" | "dropped";

/** Everything {@link JobRetry} needs. */
export interface JobRetryOptions {
  transport: Transport;
  keys: Keys;
  timeFormat: TimeFormat;
  logger: Logger;
  deathHandlers: readonly DeathHandler[];
  /** Reports errors thrown by hooks and handlers. */
  onError: (error: unknown, context: Record<string, unknown>) => void;
  /** Replaceable for tests: a number in [0, 1). */
  random?: () => number;
}

/**
 * Applies Sidekiq's retry rules to a failed job.
 *
 * @example
 * ```ts
 * const retrier = new JobRetry({ transport, keys: keys(), timeFormat: "seconds", logger, deathHandlers: [], onError });
 * await retrier.handle(job, payload, "default", error); // "retry"
 * ```
 */
export class JobRetry {
  #o: JobRetryOptions;
  #random: () => number;

  constructor(options: JobRetryOptions) {
    this.#o = options;
    this.#random = options.random ?? Math.random;
  }

  /** Handles one failure; resolves once the outcome is durable in Redis. */
  async handle(job: AnyJob | undefined, payload: JobPayload, queue: string, error: unknown): Promise<RetryOutcome> {
    if (!payload.retry && payload.retry !== 0) {
      await this.#runDeathHandlers(payload, error);
      return "dropped";
    }
    const max = typeof payload.retry === "number" ? payload.retry : DEFAULT_MAX_RETRIES;
    const nowMs = Date.now();
    payload.queue = payload.retry_queue ?? queue;
    payload.error_message = errorMessage(error);
    payload.error_class = errorClass(error);
    // It failed in its own right: a crash count or a postponement no longer applies.
    delete payload[RECOVERED_FIELD];
    delete payload.edgekiq_postponed;
    let count: number;
    // Another producer may have written nonsense: a count that is not a
    // sane whole number starts over, rather than scoring the retry at
    // infinity (it would never run).
    if (Number.isSafeInteger(payload.retry_count) && payload.retry_count! >= 0) {
      payload.retried_at = wireTime(nowMs, this.#o.timeFormat);
      count = payload.retry_count = (payload.retry_count as number) + 1;
    } else {
      payload.failed_at = wireTime(nowMs, this.#o.timeFormat);
      count = payload.retry_count = 0;
    }
    if (payload.backtrace) {
      const lines = backtraceLines(error);
      const kept = payload.backtrace === true ? lines : lines.slice(0, Number(payload.backtrace));
      payload.error_backtrace = await compressBacktrace(kept);
    }
    if (typeof payload.failed_at !== "number" || !Number.isFinite(payload.failed_at) || payload.failed_at <= 0) {
      // retry_for counts from failed_at: without a readable one it would retry forever.
      payload.failed_at = wireTime(nowMs, this.#o.timeFormat);
    }
    const retryFor = typeof payload.retry_for === "number" && Number.isFinite(payload.retry_for)
      ? payload.retry_for
      : undefined;
    const exhausted = retryFor !== undefined
      ? toEpochMs(payload.failed_at ?? wireTime(nowMs, this.#o.timeFormat)) + retryFor * 1000 < nowMs
      : count >= max;
    if (exhausted) return this.exhausted(job, payload, error);

    const verdict = this.#delay(job, count, error, payload);
    if (verdict === "discard") return "discarded";
    if (verdict === "kill") return this.exhausted(job, payload, error);
    const at = nowMs / 1000 + Math.min(verdict, MAX_RETRY_DELAY_SECONDS);
    await this.#o.transport.call("ZADD", this.#o.keys.retry, at, serializePayload(payload, this.#o.timeFormat));
    return "retry";
  }

  /**
   * Runs `retriesExhausted`, writes the job to the dead set (unless
   * discarded or `dead: false`), then runs the death handlers.
   */
  async exhausted(job: AnyJob | undefined, payload: JobPayload, error: unknown): Promise<RetryOutcome> {
    let verdict: unknown;
    try {
      verdict = await job?.options.retriesExhausted?.(payload, error);
    } catch (hookError) {
      this.#o.onError(hookError, { context: "retriesExhausted", jid: payload.jid });
    }
    if (verdict === "discard") return "discarded";
    if (payload.dead !== false) await buryPayloads(this.#o, [serializePayload(payload, this.#o.timeFormat)]);
    await this.#runDeathHandlers(payload, error);
    return payload.dead === false ? "dropped" : "dead";
  }

  #delay(job: AnyJob | undefined, count: number, error: unknown, payload: JobPayload): number | "discard" | "kill" {
    const hook = job?.options.retryIn;
    if (hook) {
      try {
        const rv = hook(count, error, payload);
        if (rv === "discard" || rv === "kill") return rv;
        if (typeof rv === "number" && Number.isFinite(rv) && rv >= 0) return rv;
      } catch (hookError) {
        this.#o.onError(hookError, { context: "retryIn", jid: payload.jid });
      }
    }
    return count ** 4 + 15 + Math.floor(this.#random() * 10) * (count + 1);
  }

  async #runDeathHandlers(payload: JobPayload, error: unknown): Promise<void> {
    for (const handler of this.#o.deathHandlers) {
      try {
        await handler(payload, error);
      } catch (handlerError) {
        this.#o.onError(handlerError, { context: "death handler", jid: payload.jid });
      }
    }
  }
}

/**
 * The error message as stored: at most 10,000 characters.
 *
 * @example
 * ```ts
 * errorMessage(new Error("boom")); // "boom"
 * ```
 */
export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 10_000);
}

/**
 * The error's class name as stored (`error_class`).
 *
 * @example
 * ```ts
 * errorClass(new TypeError("x")); // "TypeError"
 * ```
 */
export function errorClass(error: unknown): string {
  if (error instanceof Error) {
    return error.name && error.name !== "Error" ? error.name : error.constructor?.name || "Error";
  }
  return typeof error;
}
