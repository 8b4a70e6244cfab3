/**
 * The fetch path's rule for a queued job whose bytes are not valid UTF-8,
 * the poller's rule for due entries (`promote.ts`): it never runs, and goes
 * to the dead set byte for byte. A JavaScript string cannot hold such bytes
 * (they read back as U+FFFD), so the fetcher sends this script only for jobs
 * whose text holds U+FFFD, and the script decides by the bytes still in the
 * held hash: a job whose U+FFFD is real text runs as usual.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply, Transport } from "../transport/transport.ts";
import { HELD_LUA } from "./held.ts";
import { UTF8_LUA } from "./promote.ts";

/**
 * KEYS: the held hash, `dead`.
 * ARGV: batch id, now (epoch seconds), then the indexes (from 0) of the
 * batch's jobs to check.
 * Returns the indexes of the jobs buried (their bytes are not UTF-8); they
 * are still held: the caller acknowledges them as it does a finished job.
 */
export const BURY_INVALID_UTF8 = defineScript<number[]>({
  name: "buryInvalidUtf8",
  // Safe to send again after a lost reply: the dead set is scored by member, a second ZADD adds nothing.
  idempotent: true,
  keys: ["held hash", "dead"],
  argv: ["batch", "now", "...indexes"],
  lua: HELD_LUA + UTF8_LUA + `
local parts = loadBatch(KEYS[1], ARGV[1])
if not parts then return {} end
-- The batch's first part is its queue's name; job i is part i + 2.
local buried = {}
for i = 3, #ARGV do
  local raw = parts[tonumber(ARGV[i]) + 2]
  if raw and not validUtf8(raw) then
    redis.call("ZADD", KEYS[2], ARGV[2], raw)
    buried[#buried + 1] = tonumber(ARGV[i])
  end
end
return buried
`,
  // The memory transport holds JavaScript strings: nothing in it can be invalid UTF-8.
  twin: (_redis: ScriptRedis, _keys: string[], _argv: string[]): RedisReply => [],
  decode: (reply) => (Array.isArray(reply) ? reply.map(Number) : []),
});

/**
 * Buries the jobs of held batch `batch` whose bytes are not UTF-8, sending
 * the script only when a job's text holds U+FFFD (no command otherwise).
 * `jobs` are the batch's jobs in order (job i is index i); resolves those
 * kept and those buried.
 *
 * @example
 * ```ts
 * const { kept, buried } = await buryInvalidUtf8(transport, [held, keys.dead], 7, units);
 * ```
 */
export async function buryInvalidUtf8<T extends { readonly raw: string }>(
  transport: Transport,
  keys: readonly [held: string, dead: string],
  batch: number,
  jobs: readonly T[],
): Promise<{ kept: T[]; buried: T[] }> {
  const suspects: number[] = [];
  jobs.forEach((job, i) => job.raw.includes("\uFFFD") && suspects.push(i));
  if (suspects.length === 0) return { kept: [...jobs], buried: [] };
  const gone = new Set(await transport.script(BURY_INVALID_UTF8, keys, [batch, Date.now() / 1000, ...suspects]));
  return { kept: jobs.filter((_, i) => !gone.has(i)), buried: jobs.filter((_, i) => gone.has(i)) };
}
