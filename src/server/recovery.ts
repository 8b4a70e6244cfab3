/**
 * Orphan recovery for reliable fetch: find held hashes whose owner's entry
 * has expired and give their jobs back. A job that was running in too many
 * processes that died (it keeps killing its process) goes to the dead set.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { QUEUES_FIELD } from "../scripts/held.ts";
import { RECOVER, type RecoverResult } from "../scripts/recover.ts";
import { deadTrim } from "../dead_set_rules.ts";
import type { Transport } from "../transport/transport.ts";

/** What one recovery pass did. */
export interface RecoveryResult {
  /** Jobs put back on their queues. */
  requeued: number;
  /** Raw jobs sent to the dead set as poison pills. */
  poisoned: string[];
  /** Held hashes whose recovery failed (their jobs stay held for the next pass), with why. */
  failed: Array<{ held: string; error: unknown }>;
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
 * other owners, then one script per orphaned held hash. Each hash is
 * recovered on its own: one that fails (its queue key holds another type,
 * say) is reported and the others still go back.
 *
 * @example
 * ```ts
 * const { requeued, poisoned } = await recoverOrphans({ transport, keys: keys() });
 * ```
 */
export async function recoverOrphans(options: RecoveryOptions): Promise<RecoveryResult> {
  const { transport, keys: k } = options;
  const flat = (await transport.call("HGETALL", k.heldRegistry)) as string[] | null;
  const result: RecoveryResult = { requeued: 0, poisoned: [], failed: [] };
  if (!flat || flat.length === 0) return result;
  const lists: Array<[list: string, owner: string]> = [];
  for (let i = 0; i < flat.length; i += 2) if (flat[i + 1] !== options.self) lists.push([flat[i], flat[i + 1]]);
  if (lists.length === 0) return result;
  const owners = [...new Set(lists.map(([, owner]) => owner))];
  const alive = await transport.pipeline(owners.map((o) => ["EXISTS", k.process(o)] as const));
  const dead = new Set(owners.filter((_, i) => alive[i] === 0));
  for (const [held, owner] of lists) {
    if (!dead.has(owner)) continue;
    // Not a held hash: nothing this version wrote, and nothing it can recover.
    if (!k.parseHeld(held)) continue;
    const r = await recoverHeld(options, held, owner).catch((error: unknown) => {
      result.failed.push({ held, error });
      return undefined;
    });
    if (!r) continue;
    result.requeued += r.requeued;
    result.poisoned.push(...r.poisoned);
  }
  return result;
}

/**
 * Recovers one held hash: its queues are the ones it names (`#queues`),
 * plus any a batch names that the list lacks (the script says which, and
 * changes nothing until every one is named).
 */
async function recoverHeld(options: RecoveryOptions, held: string, owner: string): Promise<RecoverResult> {
  const { transport, keys: k } = options;
  const listed = await transport.call("HGET", held, QUEUES_FIELD);
  const names = typeof listed === "string" && listed !== "" ? listed.split(",") : [];
  // Each round names one more queue: bounded by the batches a hash can hold.
  for (let round = 0; round <= 1000; round++) {
    const now = Date.now();
    const r = await transport.script(RECOVER, [
      held,
      k.heldRegistry,
      k.process(owner),
      k.dead,
      ...names.map((q) => k.queue(q)),
      ...names.map((q) => k.landing(held, q)),
    ], [options.maxRecoveries ?? 3, now / 1000, Math.round(now), ...deadTrim(now / 1000), k.queue("")]);
    if (r.missingQueue === undefined) return r;
    names.push(r.missingQueue);
  }
  throw new Error(`Cannot recover ${held} as its batches name more than 1,000 queues`);
}
