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
 * The decision is made once (`decide`) and written by `settler.ts` before
 * the job is acknowledged: if Redis refuses the write, the job stays held
 * (the same bytes are written again) and, if the process dies meanwhile,
 * recovery finds it (Sidekiq #4141).
 *
 * @module
 */
import type { AnyJob } from "../job.ts";
import { type JobPayload, serializePayload, type TimeFormat, toEpochMs, wireTime } from "../payload.ts";
import { clearRecovered } from "../scripts/recovered_mark.ts";
import { backtraceLines, compressBacktrace } from "./backtrace_codec.ts";

/** Sidekiq's default retry count. */
export const DEFAULT_MAX_RETRIES = 25;

/** The longest retry delay honoured, seconds (ten years): a larger one would be a score that never comes due. */
export const MAX_RETRY_DELAY_SECONDS = 10 * 365 * 24 * 60 * 60;

/**
 * What becomes of a failed job, decided once: the payload is updated and
 * serialised here, hooks run here, so writing it (and writing it again
 * after a lost reply) writes the same bytes and runs nothing twice.
 * - `retry`: to the `retry` set at `at` (epoch seconds);
 * - `dead`: to the `dead` set;
 * - `dropped`: nowhere (`retry: false`, or `dead: false` once exhausted);
 * - `discarded`: nowhere (`retryIn` or `retriesExhausted` said "discard").
 * Death handlers run after a `dead` or `dropped` job's outcome is durable.
 */
export type RetryDecision =
  | { readonly kind: "retry"; readonly json: string; readonly at: number; readonly payload: JobPayload }
  | { readonly kind: "dead"; readonly json: string; readonly payload: JobPayload }
  | { readonly kind: "dropped" | "discarded"; readonly payload: JobPayload };

/** Everything {@link JobRetry} needs. */
export interface JobRetryOptions {
  timeFormat: TimeFormat;
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
 * const retrier = new JobRetry({ timeFormat: "seconds", onError });
 * const decision = await retrier.decide(job, payload, "default", error); // { kind: "retry", json, at }
 * ```
 */
export class JobRetry {
  #options: JobRetryOptions;
  #random: () => number;

  constructor(options: JobRetryOptions) {
    this.#options = options;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Decides what becomes of one failure: updates the payload (error fields,
   * `retry_count`, times), runs `retryIn` and `retriesExhausted`, and
   * serialises the result. Writes nothing.
   */
  async decide(job: AnyJob | undefined, payload: JobPayload, queue: string, error: unknown): Promise<RetryDecision> {
    if (!payload.retry && payload.retry !== 0) return { kind: "dropped", payload };
    const format = this.#options.timeFormat;
    const max = typeof payload.retry === "number" ? payload.retry : DEFAULT_MAX_RETRIES;
    const nowMs = Date.now();
    payload.queue = payload.retry_queue ?? queue;
    payload.error_message = errorMessage(error);
    payload.error_class = errorClass(error);
    // It failed in its own right: a crash count or a postponement no longer applies.
    clearRecovered(payload);
    delete payload.edgekiq_postponed;
    let count: number;
    // Another producer may have written nonsense: a count that is not a
    // sane whole number starts over, rather than scoring the retry at
    // infinity (it would never run).
    if (Number.isSafeInteger(payload.retry_count) && payload.retry_count! >= 0) {
      payload.retried_at = wireTime(nowMs, format);
      count = payload.retry_count = (payload.retry_count as number) + 1;
    } else {
      payload.failed_at = wireTime(nowMs, format);
      count = payload.retry_count = 0;
    }
    if (payload.backtrace) {
      const lines = backtraceLines(error);
      const kept = payload.backtrace === true ? lines : lines.slice(0, Number(payload.backtrace));
      payload.error_backtrace = await compressBacktrace(kept);
    }
    if (typeof payload.failed_at !== "number" || !Number.isFinite(payload.failed_at) || payload.failed_at <= 0) {
      // retry_for counts from failed_at: without a readable one it would retry forever.
      payload.failed_at = wireTime(nowMs, format);
    }
    const retryFor = typeof payload.retry_for === "number" && Number.isFinite(payload.retry_for)
      ? payload.retry_for
      : undefined;
    const exhausted = retryFor !== undefined
      ? toEpochMs(payload.failed_at ?? wireTime(nowMs, format)) + retryFor * 1000 < nowMs
      : count >= max;
    if (exhausted) return this.exhausted(job, payload, error);

    const verdict = this.#delay(job, count, error, payload);
    if (verdict === "discard") return { kind: "discarded", payload };
    if (verdict === "kill") return this.exhausted(job, payload, error);
    const at = nowMs / 1000 + Math.min(verdict, MAX_RETRY_DELAY_SECONDS);
    return { kind: "retry", json: serializePayload(payload, format), at, payload };
  }

  /**
   * A job out of retries (or killed by `retryIn`): runs `retriesExhausted`
   * (which may discard it), then it is dead, unless `dead: false` drops it.
   */
  async exhausted(job: AnyJob | undefined, payload: JobPayload, error: unknown): Promise<RetryDecision> {
    let verdict: unknown;
    try {
      verdict = await job?.options.retriesExhausted?.(payload, error);
    } catch (hookError) {
      this.#options.onError(hookError, { context: "retriesExhausted", jid: payload.jid });
    }
    if (verdict === "discard") return { kind: "discarded", payload };
    if (payload.dead === false) return { kind: "dropped", payload };
    return { kind: "dead", json: serializePayload(payload, this.#options.timeFormat), payload };
  }

  #delay(job: AnyJob | undefined, count: number, error: unknown, payload: JobPayload): number | "discard" | "kill" {
    const hook = job?.options.retryIn;
    if (hook) {
      try {
        const rv = hook(count, error, payload);
        if (rv === "discard" || rv === "kill") return rv;
        if (typeof rv === "number" && Number.isFinite(rv) && rv >= 0) return rv;
      } catch (hookError) {
        this.#options.onError(hookError, { context: "retryIn", jid: payload.jid });
      }
    }
    return count ** 4 + 15 + Math.floor(this.#random() * 10) * (count + 1);
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
