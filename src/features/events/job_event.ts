/**
 * One job event as a reader sees it, and how it is stored: an entry of the
 * queue's stream, `edgekiq:events:<queue>`, whose ID orders it and says
 * when it was written, with flat string fields.
 *
 * | field | events | what |
 * | --- | --- | --- |
 * | `event` | all | `completed`, `retrying`, `dead`, `failed`, `discarded`, `progress` |
 * | `jid`, `class` | all | the job |
 * | `ms` | outcomes | how long `perform` took |
 * | `result` | `completed` of a job that keeps its result | what `perform` returned, as JSON |
 * | `error_class`, `error_message` | `retrying`, `dead`, `failed` | the failure |
 * | `retry_count` | `retrying`, `dead` | Sidekiq's count after this failure |
 * | `progress` | `progress` | the value given to `ctx.progress()`, as JSON |
 *
 * @module
 */
import type { RedisReply } from "../../transport/transport.ts";

/**
 * What happened to a job:
 * - `completed`: `perform` returned;
 * - `retrying`: it failed and waits in the `retry` set;
 * - `dead`: it failed for good and is in the `dead` set;
 * - `failed`: it failed for good and is kept nowhere (`retry: false`, `dead: false`);
 * - `discarded`: it threw `Discard` (or a retry hook discarded it);
 * - `progress`: it reported progress (`ctx.progress(value)`), at most once a `progressIntervalMs`.
 */
export type JobEventName = "completed" | "retrying" | "dead" | "failed" | "discarded" | "progress";

/** One job event. */
export interface JobEvent {
  /** The stream entry's ID, `<ms>-<seq>`: the cursor to read on from, and the SSE event's `id`. */
  readonly id: string;
  readonly event: JobEventName;
  /** The queue whose stream holds it (the queue the job ran from). */
  readonly queue: string;
  readonly jid: string;
  /** The job's class. */
  readonly className: string;
  /** When it was written, epoch ms (Redis's clock, from the ID). */
  readonly at: number;
  /** How long `perform` took, ms (outcomes). */
  readonly ms?: number;
  /** What `perform` returned (`completed`, of a job that keeps its result and whose result fit). */
  readonly result?: unknown;
  /** The failure (`retrying`, `dead`, `failed`). */
  readonly error?: { readonly className: string; readonly message: string };
  /** The job's `retry_count` after this failure (`retrying`, `dead`). */
  readonly retryCount?: number;
  /** The value reported (`progress`). */
  readonly progress?: unknown;
}

/** Longest error message an event carries, characters (the job's own entry keeps the whole one). */
export const EVENT_ERROR_CHARS = 1000;

/**
 * One stream entry (`[id, [field, value, ...]]`, as XRANGE and XREAD give
 * it) as a {@link JobEvent}; undefined when it is not one (no `event` or
 * `jid`). Values that do not parse are left out, never thrown.
 *
 * @example
 * ```ts
 * decodeEvent("default", ["1700000000000-0", ["event", "completed", "jid", "abc", "class", "HardJob"]]);
 * // { id: "1700000000000-0", event: "completed", queue: "default", jid: "abc", className: "HardJob", at: 1700000000000 }
 * ```
 */
export function decodeEvent(queue: string, entry: RedisReply): JobEvent | undefined {
  if (!Array.isArray(entry) || typeof entry[0] !== "string" || !Array.isArray(entry[1])) return undefined;
  const [id, flat] = entry as [string, RedisReply[]];
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[String(flat[i])] = String(flat[i + 1]);
  if (!f.event || !f.jid) return undefined;
  const event: { -readonly [K in keyof JobEvent]: JobEvent[K] } = {
    id,
    event: f.event as JobEventName,
    queue,
    jid: f.jid,
    className: f.class ?? "",
    at: Number(id.split("-")[0]),
  };
  if (f.ms !== undefined && Number.isFinite(Number(f.ms))) event.ms = Number(f.ms);
  if (f.result !== undefined) parseInto(event, "result", f.result);
  if (f.progress !== undefined) parseInto(event, "progress", f.progress);
  if (f.error_class !== undefined) event.error = { className: f.error_class, message: f.error_message ?? "" };
  if (f.retry_count !== undefined && Number.isSafeInteger(Number(f.retry_count))) {
    event.retryCount = Number(f.retry_count);
  }
  return event;
}

function parseInto(event: Record<string, unknown>, name: string, json: string): void {
  try {
    event[name] = JSON.parse(json);
  } catch { /* not JSON: left out */ }
}

/**
 * A stream's entries (an XRANGE reply) as events, oldest first, skipping
 * entries that are not events.
 *
 * @example
 * ```ts
 * decodeEvents("default", await transport.call("XRANGE", keys.events("default"), "-", "+"));
 * ```
 */
export function decodeEvents(queue: string, entries: RedisReply): JobEvent[] {
  if (!Array.isArray(entries)) return [];
  return entries.flatMap((entry) => decodeEvent(queue, entry) ?? []);
}
