/**
 * Orphan recovery for reliable fetch: find held hashes whose owner's entry
 * has expired and give their jobs back. A job that was running in too many
 * processes that died (it keeps killing its process) goes to the dead set.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { RECOVER } from "../scripts/recover.ts";
import { deadTrim } from "../dead_set_rules.ts";
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
 * other owners, then one script per orphaned hash (or 0.1 private list).
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
    const now = Date.now();
    const r = await transport.script(RECOVER, [
      list,
      k.landing(list),
      k.queue(queue),
      k.inflightRegistry,
      k.process(owner),
      k.dead,
    ], [
      options.maxRecoveries ?? 3,
      now / 1000,
      Math.round(now),
      ...deadTrim(now / 1000),
    ]);
    result.requeued += r.requeued;
    result.poisoned.push(...r.poisoned);
  }
  return result;
}

function queueOf(k: Keys, key: string, owner: string): string {
  const held = k.parseHeld(key);
  if (held) return held.queue;
  // An 0.1 private list: `edgekiq:inflight:<identity>|<queue>`.
  const prefix = k.legacyInflight(owner, "");
  return key.startsWith(prefix) ? key.slice(prefix.length) : key.slice(key.lastIndexOf("|") + 1);
}
