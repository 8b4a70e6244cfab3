/**
 * Iterable jobs' saved state, read as Sidekiq 8.1's `Sidekiq::IterableJobQuery`
 * reads it: the `it-<jid>` hash its Busy and Retries pages show beside a job
 * (`cursor=...; exec=...; rt=...s`). edgekiq's iterable jobs (src/features/iterable/)
 * write it; this is the reading side, for the admin API and the dashboard.
 *
 * Fields, as `lib/sidekiq/job/iterable.rb` writes them: `ex` (executions, an
 * integer), `c` (the cursor as JSON), `rt` (seconds iterated, a Ruby Float's
 * text), `cancelled` (epoch seconds of the first `cancel!`, an integer).
 *
 * @module
 */
import type { Keys } from "../../keys.ts";
import type { RedisReply, Transport } from "../../transport/transport.ts";

/** What `it-<jid>` holds, read back. */
export interface IterationState {
  /** How many runs have started (Sidekiq's `executions`). */
  executions: number;
  /**
   * The saved cursor (`null` before the first item). When the stored text is
   * not JSON (another writer), the text itself, as Sidekiq's API shows it.
   */
  cursor: unknown;
  /** Seconds spent iterating so far. */
  runtime: number;
  /** Epoch seconds when the job was cancelled, if it was. */
  cancelled: number | undefined;
}

/**
 * Reads an HGETALL reply (flat `[field, value, ...]`) as Sidekiq's
 * `IterableJobQuery` does: undefined when the hash is empty or absent, and a
 * cursor that is not JSON kept as its text.
 *
 * @example
 * ```ts
 * parseState(["ex", "2", "c", "40", "rt", "3.5"]); // { executions: 2, cursor: 40, runtime: 3.5, cancelled: undefined }
 * ```
 */
export function parseState(flat: RedisReply): IterationState | undefined {
  return readState(flat, (text) => text);
}

/**
 * Decodes an HGETALL reply; `unreadable` decides what a cursor that is not
 * JSON becomes (its text for display, an error for a job about to resume).
 *
 * @example
 * ```ts
 * readState(flat, (text) => text);
 * ```
 */
export function readState(
  flat: RedisReply,
  unreadable: (text: string, error: unknown) => unknown,
): IterationState | undefined {
  if (!Array.isArray(flat) || flat.length === 0) return undefined;
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), String(flat[i + 1]));
  const c = fields.get("c");
  let cursor: unknown = null;
  if (c !== undefined) {
    try {
      cursor = JSON.parse(c);
    } catch (error) {
      cursor = unreadable(c, error);
    }
  }
  const cancelled = fields.get("cancelled");
  return {
    executions: Number.parseInt(fields.get("ex") ?? "0", 10) || 0,
    cursor,
    runtime: Number.parseFloat(fields.get("rt") ?? "0") || 0,
    cancelled: cancelled === undefined ? undefined : cancelledAt(cancelled) ?? undefined,
  };
}

/** The `cancelled` field as epoch seconds (null when unset). */
export function cancelledAt(reply: RedisReply): number | null {
  if (reply === null || reply === undefined) return null;
  const n = Number.parseInt(String(reply), 10);
  return Number.isFinite(n) ? n : 0;
}

/**
 * The saved state of each jid that has one, in one pipeline of HGETALLs
 * (one billed command per jid on Upstash). Jids without state are absent
 * from the map; a cursor that is not JSON is given as its text.
 *
 * @example
 * ```ts
 * const states = await iterationStates(client, running.map((w) => w.payload.jid));
 * states.get(jid)?.cursor;
 * ```
 */
export async function iterationStates(
  client: { transport: Transport; keys: Keys },
  jids: readonly string[],
): Promise<Map<string, IterationState>> {
  const unique = [...new Set(jids.filter((jid) => typeof jid === "string" && jid !== ""))];
  const states = new Map<string, IterationState>();
  if (unique.length === 0) return states;
  const replies = await client.transport.pipeline(
    unique.map((jid) => ["HGETALL", client.keys.iteration(jid)] as const),
  );
  unique.forEach((jid, i) => {
    const state = parseState(replies[i]);
    if (state) states.set(jid, state);
  });
  return states;
}
