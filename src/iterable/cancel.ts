/**
 * Cancelling an iterable job: Sidekiq 8's `Sidekiq::Client#cancel!(jid)`
 * (and `Job::Iterable#cancel!`), the same field with the same value, so Ruby
 * cancels edgekiq jobs and edgekiq cancels Ruby's.
 *
 * @module
 */
import { cancelledAt } from "../api/iteration_states.ts";
import { ConfigError } from "../errors.ts";
import type { Keys } from "../keys.ts";
import { describe } from "../payload.ts";
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply, Transport } from "../transport/transport.ts";
import { STATE_TTL } from "./state.ts";

/**
 * `cancel!` in one call: HSETNX `cancelled` now (epoch seconds, an integer,
 * as Ruby's `Time.now.to_i`); EXPIRE NX 30 days (a TTL check, so Redis 6 runs
 * it too); HGET `cancelled`. The first cancel's time stands; cancelling again
 * changes nothing, so the call is safe to resend.
 *
 * KEYS: `it-<jid>`.
 * ARGV: now (epoch seconds), TTL seconds.
 * Returns the `cancelled` field.
 */
export const CANCEL = defineScript<number | null>({
  name: "iterationCancel",
  keys: ["it-<jid>"],
  argv: ["now", "ttl"],
  lua: `
redis.call("HSETNX", KEYS[1], "cancelled", ARGV[1])
if redis.call("TTL", KEYS[1]) == -1 then redis.call("EXPIRE", KEYS[1], ARGV[2]) end
return redis.call("HGET", KEYS[1], "cancelled")
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    redis.call("HSETNX", keys[0], "cancelled", argv[0]);
    if (redis.call("TTL", keys[0]) === -1) redis.call("EXPIRE", keys[0], argv[1]);
    return redis.call("HGET", keys[0], "cancelled");
  },
  decode: cancelledAt,
});

/**
 * Marks the iterable job `jid` cancelled, as Sidekiq's `cancel!` does.
 * Cancellation is asynchronous: the job sees it when it starts or resumes,
 * or at its next state flush (every `flushInterval`, 5 s by default), then
 * stops at that item, runs `onCancel` and finishes without being re-pushed.
 * Resolves to the time of the (first) cancel, in epoch seconds. Takes a
 * `Client` (or anything with its `transport` and `keys`); Ruby's
 * `Sidekiq::Client.new.cancel!(jid)` does the same to edgekiq jobs.
 *
 * @example
 * ```ts
 * const jid = await Backfill.performAsync(client);
 * await cancelJob(client, jid!);
 * ```
 */
export async function cancelJob(client: { transport: Transport; keys: Keys }, jid: string): Promise<number> {
  if (typeof jid !== "string" || jid === "") {
    throw new ConfigError(`Cannot cancel job as 'jid' must be a non-empty string: current value is ${describe(jid)}`);
  }
  const now = Math.floor(Date.now() / 1000);
  return await client.transport.script(CANCEL, [client.keys.iteration(jid)], [now, STATE_TTL]) ?? now;
}
