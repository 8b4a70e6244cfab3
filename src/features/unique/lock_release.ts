/**
 * Unique jobs' part in the admin API's moves (`entry_ops.ts`): a job
 * deleted, killed or cleared through the API lets its lock go in the same
 * atomic step as its removal (a compare-and-delete: a lock another copy took
 * since is left alone), so the next push of that job is accepted; a dead job
 * retried takes its lock again if it is free. Jobs without a lock cost
 * nothing beyond a substring test.
 *
 * @module
 */
import type { EntryHooks } from "../../entry_ops.ts";
import { lockOf } from "./mark.ts";

/**
 * The unique feature's entry hooks.
 *
 * @example
 * ```ts
 * UNIQUE_ENTRIES.ops(raw, "delete", { keys: keys(), from: "retry" }); // [["release", lockKey, jid]]
 * ```
 */
export const UNIQUE_ENTRIES: EntryHooks = {
  ops(raw, action, { keys, from }) {
    const lock = lockOf(raw, keys.uniqueLockPrefix);
    if (!lock) return undefined;
    if (action === "enqueue") {
      // Moved to its queue it keeps its lock; only a dead job's lock is gone (released when it died).
      return from === "dead" ? [["acquire", lock.key, lock.jid, Math.ceil(lock.mark.for * 1000)]] : undefined;
    }
    return [["release", lock.key, lock.jid]];
  },
  registry: (keys) => keys.uniqueQueues,
};
