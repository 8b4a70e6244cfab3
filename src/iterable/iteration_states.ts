/**
 * Reading iterable jobs' saved state by jid: Sidekiq 8.1's
 * `Sidekiq::IterableJobQuery`, which its Busy and Retries pages use to show
 * `cursor=...; exec=...; rt=...s` beside a job.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import type { Transport } from "../transport/transport.ts";
import { type IterationState, parseState } from "./state.ts";

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
