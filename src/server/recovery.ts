/**
 * Orphan recovery for reliable fetch: find private lists whose owner's
 * heartbeat has expired and give their jobs back. A job recovered too often
 * (it keeps killing its process) goes to the dead set instead.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { RECOVER } from "../scripts/recover.ts";
import type { Transport } from "../transport/transport.ts";

/** What one recovery pass did. */
export interface RecoveryResult {
  /** Jobs put back on their queues. */
  requeued: number;
  /** Raw jobs sent to the dead set as poison pills. */
  poisoned: string[];
}

/** Options for {@link recoverOrphans}. */
export interface RecoveryOptions {
  transport: Transport;
  keys: Keys;
  /** This process's identity; its own lists are never touched. */
  self?: string;
  /** Recoveries of one job before it is buried; default 3. */
  maxRecoveries?: number;
}

/**
 * One recovery pass: one HGETALL of the registry, one pipeline of EXISTS for
 * other owners, then one script per orphaned list.
 *
 * @example
 * ```ts
 * const { requeued, poisoned } = await recoverOrphans({ transport, keys: keys() });
 * ```
 */
export async function recoverOrphans(options: RecoveryOptions): Promise<RecoveryResult> {
  const { transport, keys: k } = options;
  const flat = (await transport.call("HGETALL", k.inflightRegistry)) as string[] | null;
  const result: RecoveryResult = { requeued: 0, poisoned: [] };
  if (!flat || flat.length === 0) return result;
  const lists: Array<[list: string, owner: string]> = [];
  for (let i = 0; i < flat.length; i += 2) if (flat[i + 1] !== options.self) lists.push([flat[i], flat[i + 1]]);
  if (lists.length === 0) return result;
  const owners = [...new Set(lists.map(([, owner]) => owner))];
  const alive = await transport.pipeline(owners.map((o) => ["EXISTS", k.process(o)] as const));
  const dead = new Set(owners.filter((_, i) => alive[i] === 0));
  for (const [list, owner] of lists) {
    if (!dead.has(owner)) continue;
    const queue = queueOf(k, list, owner);
    const r = await transport.script(RECOVER, [
      list,
      k.queue(queue),
      k.inflightRegistry,
      k.process(owner),
      k.recoveries,
      k.dead,
    ], [list, options.maxRecoveries ?? 3, Date.now() / 1000]);
    result.requeued += r.requeued;
    result.poisoned.push(...r.poisoned);
  }
  return result;
}

function queueOf(k: Keys, list: string, owner: string): string {
  const prefix = k.inflight(owner, "");
  return list.startsWith(prefix) ? list.slice(prefix.length) : list.slice(list.lastIndexOf("|") + 1);
}
