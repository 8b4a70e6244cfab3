/**
 * Reading a queue's job events from anywhere: `readEvents` reads one batch
 * after a cursor (one command: what an edge function or a cron calls, or a
 * browser's poll), and `queueEvents` follows the stream as an async
 * iterator, with `XREAD BLOCK` on TCP transports (one waiting connection,
 * woken by the next event) and polling with a back-off over HTTP (each
 * request is billed; nothing is sent once the iterator is closed). Both
 * follow any stream through {@link followStream}, which `waitFor`'s reader
 * of the `results` stream uses too.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import { ConfigError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import { isQueueName, QUEUE_NAME_RULE } from "../../queue_name.ts";
import { pausedWait } from "../../server/pause_wait.ts";
import { wholeNumber } from "../../server/whole_number.ts";
import { anySignal } from "../../transport/adapter.ts";
import type { RedisReply, Transport } from "../../transport/transport.ts";
import { decodeEvent, decodeEvents, type JobEvent } from "./job_event.ts";

/** What {@link readEvents} read: the events, and the cursor to read on from. */
export interface EventBatch {
  readonly events: JobEvent[];
  /** The last event's ID, or the cursor given when there was none: pass it as `after` next time. */
  readonly cursor: string;
}

/** Options for {@link readEvents}. */
export interface ReadEventsOptions {
  /**
   * Read events after this ID (a previous batch's `cursor`, an SSE
   * `Last-Event-ID`); `"0"` (the default) from the oldest kept, `"$"` none:
   * only the current last ID comes back, as the cursor to follow from.
   */
  after?: string;
  /** At most this many events; default 100, at most 10,000. */
  count?: number;
}

/**
 * Reads one batch of a queue's events after a cursor. One command.
 *
 * @example
 * ```ts
 * let cursor = "$";
 * ({ cursor } = await readEvents(client, "reports", { after: cursor }));
 * // later (a cron, the next request):
 * const { events, cursor: next } = await readEvents(client, "reports", { after: cursor });
 * for (const e of events) console.log(e.event, e.jid, e.result);
 * ```
 */
export async function readEvents(client: Client, queue: string, options: ReadEventsOptions = {}): Promise<EventBatch> {
  const action = "read events";
  checkQueue(queue, action);
  const after = checkCursor(options.after ?? "0", action);
  const count = wholeNumber(options.count ?? 100, { action, name: "count", min: 1, max: 10_000 });
  const key = client.keys.events(queue);
  if (after === "$") return { events: [], cursor: await lastIdNow(client.transport, key) };
  const reply = await client.transport.call("XRANGE", key, `(${after}`, "+", "COUNT", count);
  return { events: decodeEvents(queue, reply), cursor: lastId(reply) ?? after };
}

/** Options for {@link queueEvents}. */
export interface QueueEventsOptions {
  /** Where to start: `"$"` (the default) for events from now on, `"0"` for every event kept, or an event ID. */
  from?: string;
  /** Ends the iteration (as `close()` does). */
  signal?: AbortSignal;
  /** TCP: longest a single `XREAD BLOCK` waits before asking again, ms; default 5,000. */
  blockMs?: number;
  /** HTTP: the longest pause between two polls when no events come, ms; default 5,000 (the first is 100). */
  pollMaxMs?: number;
  /** Events per read; default 100. */
  count?: number;
  /**
   * Told of a failed read; the iterator then waits (1 s, doubling to 30 s)
   * and reads again. Without it the iterator throws the error.
   */
  onError?: (error: unknown) => void;
}

/** An open event follower: iterate it, and close it when done. */
export interface QueueEvents extends AsyncIterableIterator<JobEvent> {
  /** Stops following: a read in progress is abandoned and the iteration ends. */
  close(): void;
}

/**
 * Follows a queue's events (BullMQ's `QueueEvents`), oldest first, from
 * now (or from `from`). A reader that falls more than the stream's
 * `maxLen` behind misses the oldest it had not read; events are at least
 * once (a write resent after a lost reply may repeat one).
 *
 * @example
 * ```ts
 * const events = queueEvents(client, "reports");
 * for await (const e of events) {
 *   if (e.event === "completed") console.log(e.jid, "done:", e.result);
 *   if (e.event === "progress") console.log(e.jid, e.progress);
 * }
 * // elsewhere: events.close();
 * ```
 */
export function queueEvents(client: Client, queue: string, options: QueueEventsOptions = {}): QueueEvents {
  const action = "follow events";
  checkQueue(queue, action);
  const from = checkCursor(options.from ?? "$", action);
  const closer = new AbortController();
  const signal = options.signal ? anySignal(options.signal, closer.signal) : closer.signal;
  const entries = followStream(client.transport, client.keys.events(queue), {
    from,
    signal,
    count: wholeNumber(options.count ?? 100, { action, name: "count", min: 1, max: 10_000 }),
    blockMs: wholeNumber(options.blockMs ?? 5000, { action, name: "blockMs", min: 1, max: 600_000 }),
    pollMaxMs: wholeNumber(options.pollMaxMs ?? 5000, { action, name: "pollMaxMs", min: 1, max: 600_000 }),
    onError: options.onError,
  });
  async function* events(): AsyncGenerator<JobEvent, void, undefined> {
    for await (const entry of entries) {
      const event = decodeEvent(queue, entry);
      if (event) yield event;
    }
  }
  const iterator = events();
  return Object.assign(iterator, {
    close() {
      closer.abort(new DOMException("closed", "AbortError"));
      void iterator.return(undefined);
    },
  }) as QueueEvents;
}

/** Options for {@link followStream}. */
export interface FollowOptions {
  /** `"$"` (from now: looked up at once, as an ID), or the ID to read after. */
  readonly from: string;
  /** Ends the following; a blocked read is aborted. */
  readonly signal: AbortSignal;
  readonly count: number;
  /** TCP: one `XREAD BLOCK`'s longest wait, ms. */
  readonly blockMs: number;
  /** HTTP: the longest pause between polls that find nothing, ms (the first is 100). */
  readonly pollMaxMs: number;
  /** Told of a failed read, which is tried again after 1 s, doubling to 30 s; without it, the error is thrown. */
  readonly onError?: (error: unknown) => void;
}

/**
 * Follows a stream's entries (`[id, fields]`, as XREAD gives them), oldest
 * first: `XREAD BLOCK` on a blocking transport, a poll with a back-off on
 * HTTP. `"$"` is looked up when this is called, not at the first read, so
 * an entry written between the call and the loop's first read (a job
 * pushed right after) is not missed, and a block that ends empty never
 * skips what came meanwhile.
 *
 * @example
 * ```ts
 * for await (const [id, fields] of followStream(transport, keys.results, { from: "$", signal, count: 100, blockMs: 5000, pollMaxMs: 2000 })) {}
 * ```
 */
export function followStream(
  transport: Transport,
  key: string,
  options: FollowOptions,
): AsyncGenerator<RedisReply, void, undefined> {
  const { signal, count } = options;
  let start: Promise<string> | undefined = options.from === "$"
    ? lastIdNow(transport, key)
    : Promise.resolve(options.from);
  start.catch(() => {}); // surfaced by the first read

  async function* follow(): AsyncGenerator<RedisReply, void, undefined> {
    let cursor: string | undefined;
    let pause = 0;
    let failing = 0;
    while (!signal.aborted) {
      let reply: RedisReply;
      try {
        if (cursor === undefined) {
          cursor = await (start ?? lastIdNow(transport, key));
          continue;
        }
        reply = transport.blocking
          ? await transport.block(["XREAD", "COUNT", count, "BLOCK", options.blockMs, "STREAMS", key, cursor], {
            signal,
          })
          : await transport.call("XREAD", "COUNT", count, "STREAMS", key, cursor);
        failing = 0;
      } catch (error) {
        start = undefined;
        if (signal.aborted) return;
        if (!options.onError) throw error;
        options.onError(error);
        await pausedWait(Math.min(30, 2 ** failing++), signal);
        continue;
      }
      const entries = streamEntries(reply, key);
      cursor = lastId(entries) ?? cursor;
      for (const entry of entries) {
        if (signal.aborted) return;
        yield entry;
      }
      if (transport.blocking) continue;
      // Over HTTP: ask again at once while entries come, else back off (each request is billed).
      pause = entries.length > 0 ? 0 : Math.min(options.pollMaxMs, pause ? pause * 2 : 100);
      if (pause) await pausedWait(pause / 1000, signal);
    }
  }
  return follow();
}

/**
 * The stream's last ID now (one XREVRANGE), or `0-0` when it is empty: a
 * cursor from which a reader sees everything written after this call.
 *
 * @example
 * ```ts
 * const from = await lastIdNow(transport, keys.results); // "1700000000000-4"
 * ```
 */
export function lastIdNow(transport: Transport, key: string): Promise<string> {
  return transport.call("XREVRANGE", key, "+", "-", "COUNT", 1).then((reply) => lastId(reply) ?? "0-0");
}

/** The entries of one stream in an XREAD reply (`[[key, entries]]`), or [] for none. */
function streamEntries(reply: RedisReply, key: string): RedisReply[] {
  if (!Array.isArray(reply)) return [];
  for (const stream of reply) {
    if (Array.isArray(stream) && stream[0] === key && Array.isArray(stream[1])) return stream[1];
  }
  return [];
}

/** The ID of the last entry of an XRANGE/XREVRANGE-shaped reply (the first, for XREVRANGE COUNT 1). */
function lastId(entries: RedisReply): string | undefined {
  if (!Array.isArray(entries) || entries.length === 0) return undefined;
  const last = entries[entries.length - 1];
  return Array.isArray(last) && typeof last[0] === "string" ? last[0] : undefined;
}

/**
 * Checks a queue name for an event reader.
 *
 * @example
 * ```ts
 * checkQueue("reports", "read events"); // fine; "a b" throws a ConfigError
 * ```
 */
export function checkQueue(queue: unknown, action: string): void {
  if (!isQueueName(queue)) {
    throw new ConfigError(
      `Cannot ${action} as the queue must be ${QUEUE_NAME_RULE}: current value is ${describeValue(queue)}`,
    );
  }
}

/**
 * Checks a cursor: `"$"`, `"0"`, or a stream ID (`<ms>` or `<ms>-<seq>`).
 *
 * @example
 * ```ts
 * checkCursor("1700000000000-3", "read events"); // "1700000000000-3"
 * ```
 */
export function checkCursor(cursor: unknown, action: string): string {
  if (typeof cursor !== "string" || !(cursor === "$" || /^\d{1,16}(-\d{1,16})?$/.test(cursor))) {
    throw new ConfigError(
      `Cannot ${action} as the cursor must be "$", "0" or an event ID like "1700000000000-0": current value is ${
        describeValue(cursor)
      }`,
    );
  }
  return cursor;
}
