/**
 * The dead set's rules, shared by the engine (a job out of retries, a bad
 * payload) and the admin API (`DeadSet#kill`, `entry.kill()`): what it keeps
 * (Sidekiq's `dead_max_jobs` and `dead_timeout_in_seconds`), how a job is
 * buried (ZADD scored by the time of death, then trimmed by age and size, in
 * one MULTI), and the shape of a death handler. It sits below both layers so
 * neither reaches into the other.
 *
 * @module
 */
import type { Keys } from "./keys.ts";
import type { JobPayload } from "./payload.ts";
import type { Command, Transport } from "./transport/transport.ts";

/** Called when a job dies (exhausted, killed, or failed with `retry: false`). */
export type DeathHandler = (job: JobPayload, error: unknown) => void | Promise<void>;

/** The dead set keeps at most this many jobs (Sidekiq's `dead_max_jobs`)... */
export const DEAD_MAX_JOBS = 10_000;
/** ...for at most this long, in seconds: six months (Sidekiq's `dead_timeout_in_seconds`). */
export const DEAD_TIMEOUT_SECONDS = 180 * 24 * 60 * 60;

/**
 * The trim that follows every burial, as arguments: the oldest score kept
 * and the rank (negative, from the end) past which entries go. For scripts
 * that bury and trim in one step.
 *
 * @example
 * ```ts
 * const [cutoff, rank] = deadTrim(Date.now() / 1000);
 * // ZREMRANGEBYSCORE dead -inf <cutoff>; ZREMRANGEBYRANK dead 0 <rank>
 * ```
 */
export function deadTrim(nowSeconds: number): [cutoff: number, rank: number] {
  return [nowSeconds - DEAD_TIMEOUT_SECONDS, -(DEAD_MAX_JOBS + 1)];
}

/**
 * The MULTI that buries raw jobs: ZADD to `dead` scored `nowSeconds`, then
 * trim by age and size, as Sidekiq's `DeadSet#kill`.
 *
 * @example
 * ```ts
 * await transport.pipeline(buryCommands(keys(), [raw], Date.now() / 1000), { atomic: true });
 * ```
 */
export function buryCommands(k: Keys, raws: readonly string[], nowSeconds: number): Command[] {
  const zadd: (string | number)[] = [];
  for (const raw of raws) zadd.push(nowSeconds, raw);
  const [cutoff, rank] = deadTrim(nowSeconds);
  return [
    ["ZADD", k.dead, ...zadd],
    ["ZREMRANGEBYSCORE", k.dead, "-inf", cutoff],
    ["ZREMRANGEBYRANK", k.dead, 0, rank],
  ];
}

/**
 * Buries raw jobs now, in one MULTI ({@link buryCommands}). `target` is
 * anything with a transport and key names: a `Client`, or the engine's
 * dependencies.
 *
 * @example
 * ```ts
 * await buryPayloads(client, [raw]);
 * ```
 */
export async function buryPayloads(
  target: { readonly transport: Transport; readonly keys: Keys },
  raws: readonly string[],
): Promise<void> {
  if (raws.length === 0) return;
  await target.transport.pipeline(buryCommands(target.keys, raws, Date.now() / 1000), { atomic: true });
}
