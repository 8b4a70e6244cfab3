/**
 * What a job's outcome writes for job events, made durable before the job
 * is acknowledged: the event on its queue's stream (for a queue that opted
 * in) and, for a job that keeps its result, the result record and a line on
 * the `results` stream that `waitFor` readers follow. One script call.
 *
 * Sent again after a lost reply or a transient failure (the engine retries
 * outcome writes until they land), the result record is the same bytes
 * again, but the stream entries are new ones: events are at least once.
 *
 * @module
 */
import { errorClass, errorMessage } from "../../server/retry.ts";
import type { JobOutcome, JobOutcomeKind } from "../../server/worker_feature.ts";
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { EVENT_ERROR_CHARS, type JobEventName } from "./job_event.ts";

/** The event each outcome writes; `later` (RunLater) is not an end and writes none. */
export const EVENT_OF: Readonly<Partial<Record<JobOutcomeKind, JobEventName>>> = {
  succeeded: "completed",
  retry: "retrying",
  dead: "dead",
  dropped: "failed",
  discarded: "discarded",
};

/** Outcomes that end a job for good: a kept result is written for these. */
export const FINAL: ReadonlySet<JobOutcomeKind> = new Set(["succeeded", "dead", "dropped", "discarded"]);

/**
 * KEYS: the queue's event stream, the job's result key, the `results`
 * stream. ARGV: the event streams' MAXLEN (`~`), the results stream's
 * MAXLEN, the jid, seconds to keep the result (0: none), the result record,
 * whether to write the event (1/0), then the event's field/value pairs.
 * Returns 1.
 */
export const EVENT_WRITE = defineScript<number>({
  name: "eventWrite",
  keys: ["edgekiq:events:<queue>", "edgekiq:result:<jid>", "edgekiq:results"],
  argv: ["maxLen", "resultsMaxLen", "jid", "keepSeconds", "record", "writeEvent", "...fields"],
  lua: `
if ARGV[6] == "1" then
  redis.call("XADD", KEYS[1], "MAXLEN", "~", ARGV[1], "*", unpack(ARGV, 7))
end
if ARGV[4] ~= "0" then
  redis.call("SET", KEYS[2], ARGV[5], "EX", ARGV[4])
  redis.call("XADD", KEYS[3], "MAXLEN", "~", ARGV[2], "*", "jid", ARGV[3])
end
return 1
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    if (argv[5] === "1") redis.call("XADD", keys[0], "MAXLEN", "~", argv[0], "*", ...argv.slice(6));
    if (argv[3] !== "0") {
      redis.call("SET", keys[1], argv[4], "EX", argv[3]);
      redis.call("XADD", keys[2], "MAXLEN", "~", argv[1], "*", "jid", argv[2]);
    }
    return 1;
  },
  decode: () => 1,
});

/**
 * A kept result: how the job ended, and what it returned or why it failed.
 * `unkept` says why a completed job's result is not here (too large, not
 * JSON).
 */
export interface ResultRecord {
  readonly status: "completed" | "dead" | "failed" | "discarded";
  /** Epoch ms when it was written. */
  readonly at: number;
  readonly result?: unknown;
  readonly unkept?: string;
  readonly error_class?: string;
  readonly error_message?: string;
}

/**
 * The result record of a job that ended for good, as the JSON to store;
 * `unkept` is set when a completed job's result could not be kept.
 *
 * @example
 * ```ts
 * resultRecord({ kind: "succeeded", result: { url: "/a.png" }, ... }, 65_536); // '{"status":"completed","at":...,"result":{"url":"/a.png"}}'
 * ```
 */
export function resultRecord(outcome: JobOutcome, maxBytes: number, now: number = Date.now()): string {
  const status = EVENT_OF[outcome.kind] as ResultRecord["status"];
  if (outcome.kind !== "succeeded") {
    return JSON.stringify({
      status,
      at: now,
      ...(outcome.error === undefined
        ? {}
        : { error_class: errorClass(outcome.error), error_message: errorMessage(outcome.error) }),
    });
  }
  const json = resultJson(outcome.result, maxBytes);
  if (json.problem !== undefined) return JSON.stringify({ status, at: now, unkept: json.problem });
  return json.text === undefined
    ? JSON.stringify({ status, at: now })
    : `{"status":"completed","at":${now},"result":${json.text}}`;
}

/**
 * A return value as JSON within `maxBytes` (UTF-8), or why it cannot be
 * kept. `undefined` (a `perform` that returns nothing) has no text.
 *
 * @example
 * ```ts
 * resultJson({ ok: true }, 100); // { text: '{"ok":true}' }
 * resultJson("x".repeat(200), 100); // { problem: "its JSON is 202 bytes, over maxResultBytes (100)" }
 * ```
 */
export function resultJson(value: unknown, maxBytes: number): { text?: string; problem?: string } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { problem: `it is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (text === undefined) return {};
  // Most results are far below the limit: measure bytes only when characters cannot tell.
  const bytes = text.length * 3 <= maxBytes ? text.length : new TextEncoder().encode(text).length;
  if (bytes > maxBytes) return { problem: `its JSON is ${bytes} bytes, over maxResultBytes (${maxBytes})` };
  return { text };
}

/**
 * An outcome's event fields, flat (`event`, `jid`, `class`, `ms`, the
 * failure's, the result's JSON when given).
 *
 * @example
 * ```ts
 * eventFields("completed", outcome, '{"ok":true}'); // ["event", "completed", "jid", ..., "result", '{"ok":true}']
 * ```
 */
export function eventFields(event: JobEventName, outcome: JobOutcome, resultText: string | undefined): string[] {
  const { payload } = outcome;
  const fields = ["event", event, "jid", payload.jid, "class", payload.class, "ms", String(Math.round(outcome.ms))];
  if (resultText !== undefined) fields.push("result", resultText);
  if (outcome.error !== undefined && outcome.kind !== "succeeded") {
    fields.push(
      "error_class",
      errorClass(outcome.error),
      "error_message",
      errorMessage(outcome.error).slice(0, EVENT_ERROR_CHARS),
    );
  }
  if ((outcome.kind === "retry" || outcome.kind === "dead") && typeof payload.retry_count === "number") {
    fields.push("retry_count", String(payload.retry_count));
  }
  return fields;
}
