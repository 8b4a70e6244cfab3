/**
 * Deploy marks (Sidekiq's `lib/sidekiq/deploy.rb`): a label in the day's
 * `YYYYMMDD-marks` hash, keyed by the minute, which metrics charts draw as
 * a line. Sidekiq's Web UI and edgekiq's `Metrics` both read them.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import { DEPLOY_LOCK_TTL, iso8601, MARK_TTL, utcDay } from "./buckets.ts";
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { invalid } from "../../api/arguments.ts";

/**
 * KEYS: `deploylock-<label>`, `<YYYYMMDD>-marks`. ARGV: the minute's ISO
 * stamp, the label, the lock's TTL, the marks' TTL. Takes the label's lock
 * (SET NX EX) and, only if it got it, adds the mark unless the minute has
 * one (HSETNX) and refreshes the hash's TTL, as Sidekiq's `mark!` does in a
 * SET then a MULTI. Returns 1 if it took the lock, else 0. The lock is
 * written last: a marks hash Redis refuses (another type) must not leave the
 * label locked with no mark.
 */
export const DEPLOY_MARK = defineScript<boolean>({
  name: "deployMark",
  keys: ["deploylock-<label>", "<YYYYMMDD>-marks"],
  argv: ["stamp", "label", "lockTtl", "marksTtl"],
  lua: `
if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
redis.call("HSETNX", KEYS[2], ARGV[1], ARGV[2])
redis.call("EXPIRE", KEYS[2], ARGV[4])
redis.call("SET", KEYS[1], ARGV[1], "EX", ARGV[3])
return 1
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    if (redis.call("EXISTS", keys[0]) === 1) return 0;
    redis.call("HSETNX", keys[1], argv[0], argv[1]);
    redis.call("EXPIRE", keys[1], argv[3]);
    redis.call("SET", keys[0], argv[0], "EX", argv[2]);
    return 1;
  },
  decode: (reply) => reply === 1,
});

const MAX_LABEL = 1000;

/**
 * Marks a deploy at `at` (default now), floored to the UTC minute, as
 * Sidekiq's `Sidekiq::Deploy.mark!(label)`. Every process of a deploy may
 * call it: the first mark of a minute wins, and the same label is locked
 * out for 60 seconds, so a fleet leaves one mark. Resolves to whether this
 * call took the label's lock. One script call; safe to resend.
 *
 * @example
 * ```ts
 * await markDeploy(client, "cafed00d fix the mailer"); // e.g. `git log -1 --format="%h %s"`
 * ```
 */
export function markDeploy(client: Client, label: string, options: { at?: Date } = {}): Promise<boolean> {
  if (typeof label !== "string" || label.trim() === "" || label.length > MAX_LABEL) {
    throw invalid("mark deploy", "label", `a non-blank string of at most ${MAX_LABEL} characters`, label);
  }
  const at = options.at ?? new Date();
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) throw invalid("mark deploy", "at", "a valid Date", at);
  const floor = new Date(at.getTime() - (((at.getTime() % 60_000) + 60_000) % 60_000));
  const stamp = iso8601(floor.getTime());
  const k = client.keys;
  return client.transport.script(DEPLOY_MARK, [k.deployLock(label), k.deployMarks(utcDay(floor))], [
    stamp,
    label,
    DEPLOY_LOCK_TTL,
    MARK_TTL,
  ]);
}
