/**
 * Cancelling a job by jid: one call that reaches every kind of job.
 *
 * - It writes Sidekiq 8's iterable cancel (`it-<jid>` field `cancelled`, the
 *   same field with the same value as Ruby's `cancel!`), so an iterable job,
 *   edgekiq's or Ruby's, stops at its next state flush, runs `onCancel` and
 *   finishes.
 * - It adds the jid to `edgekiq:cancelled`, the set the cancel feature
 *   (`jobCancellation()`) reads with each heartbeat: a running job's
 *   `ctx.stopping` aborts on whichever process runs it, and a queued,
 *   scheduled or retrying copy is skipped when it is fetched.
 *
 * Both in one script, so a cancel is never half-written; the first cancel's
 * time stands, and sending it again changes nothing.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import type { Keys } from "../keys.ts";
import { describeValue } from "../describe_value.ts";
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply, Transport } from "../transport/transport.ts";

/** How long a cancel is remembered, seconds: Sidekiq's iterable `STATE_TTL`, one month. */
export const CANCEL_TTL = 30 * 24 * 60 * 60;

/** The most cancels kept in `edgekiq:cancelled` (the newest; every worker with the feature holds them in memory). */
export const MAX_CANCELS = 10_000;

/**
 * KEYS: `it-<jid>`, `edgekiq:cancelled`.
 * ARGV: jid, now (epoch seconds, an integer), TTL seconds, now (epoch ms), the most cancels kept.
 *
 * HSETNX `cancelled` now and EXPIRE 30 days unless the hash has a TTL
 * (Ruby's `cancel!`, as a TTL check so Redis 6 runs it). A jid not yet in
 * the set is added with a score above every other (now, or the highest
 * plus one), so a worker that read up to a score misses none added later;
 * cancels older than the TTL and beyond the newest `max` are dropped, and the
 * set itself expires a TTL after its last cancel.
 * Returns the `cancelled` field (the first cancel's epoch seconds).
 */
export const CANCEL_JOB = defineScript<number | null>({
  name: "cancelJob",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["it-<jid>", "edgekiq:cancelled"],
  argv: ["jid", "nowSeconds", "ttl", "nowMs", "max"],
  lua: `
redis.call("HSETNX", KEYS[1], "cancelled", ARGV[2])
if redis.call("TTL", KEYS[1]) == -1 then redis.call("EXPIRE", KEYS[1], ARGV[3]) end
if not redis.call("ZSCORE", KEYS[2], ARGV[1]) then
  local now = tonumber(ARGV[4])
  local score = now
  local top = redis.call("ZRANGE", KEYS[2], -1, -1, "WITHSCORES")
  if top[2] and tonumber(top[2]) >= score then score = tonumber(top[2]) + 1 end
  redis.call("ZADD", KEYS[2], score, ARGV[1])
  redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", "(" .. (now - tonumber(ARGV[3]) * 1000))
  redis.call("ZREMRANGEBYRANK", KEYS[2], 0, -(tonumber(ARGV[5]) + 1))
  redis.call("EXPIRE", KEYS[2], ARGV[3])
end
return redis.call("HGET", KEYS[1], "cancelled")
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    redis.call("HSETNX", keys[0], "cancelled", argv[1]);
    if (redis.call("TTL", keys[0]) === -1) redis.call("EXPIRE", keys[0], argv[2]);
    if (redis.call("ZSCORE", keys[1], argv[0]) === null) {
      const now = Number(argv[3]);
      let score = now;
      const top = redis.call("ZRANGE", keys[1], -1, -1, "WITHSCORES") as string[];
      if (top.length === 2 && Number(top[1]) >= score) score = Number(top[1]) + 1;
      redis.call("ZADD", keys[1], score, argv[0]);
      redis.call("ZREMRANGEBYSCORE", keys[1], "-inf", `(${now - Number(argv[2]) * 1000}`);
      redis.call("ZREMRANGEBYRANK", keys[1], 0, -(Number(argv[4]) + 1));
      redis.call("EXPIRE", keys[1], argv[2]);
    }
    return redis.call("HGET", keys[0], "cancelled");
  },
  decode(reply: RedisReply): number | null {
    const n = Number(reply);
    return reply === null || !Number.isFinite(n) ? null : n;
  },
});

/**
 * Cancels the job `jid`, wherever it is:
 * - running on a worker with `jobCancellation()`: its `ctx.stopping` aborts
 *   within one heartbeat (10 s over TCP, 20 s over HTTP), and whatever it
 *   throws then ends it as discarded, not as a failure;
 * - waiting (queued, scheduled, retrying): skipped, as discarded, when a
 *   worker or drain with `jobCancellation()` fetches it;
 * - an iterable job (edgekiq's or Ruby Sidekiq 8's, with or without the
 *   feature): it sees the cancel when it starts or resumes and at its next
 *   state flush (every `flushInterval`, 5 s by default), stops at that item,
 *   runs `onCancel` and finishes.
 *
 * Cancellation is asynchronous and cannot be undone. Resolves to the time of
 * the (first) cancel, in epoch seconds. Takes a `Client` (or anything with
 * its `transport` and `keys`); Ruby's `Sidekiq::Client.new.cancel!(jid)`
 * reaches edgekiq's iterable jobs the same way, but only this call reaches
 * the others.
 *
 * @example
 * ```ts
 * const jid = await client.push(Export, [42]);
 * await cancelJob(client, jid!);
 * ```
 */
export async function cancelJob(client: { transport: Transport; keys: Keys }, jid: string): Promise<number> {
  if (typeof jid !== "string" || jid === "") {
    throw new ConfigError(
      `Cannot cancel job as 'jid' must be a non-empty string: current value is ${describeValue(jid)}`,
    );
  }
  const nowMs = Date.now();
  const now = Math.floor(nowMs / 1000);
  const keys = [client.keys.iteration(jid), client.keys.cancelled];
  return await client.transport.script(CANCEL_JOB, keys, [jid, now, CANCEL_TTL, nowMs, MAX_CANCELS]) ?? now;
}
