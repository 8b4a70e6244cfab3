/**
 * Unique jobs: at most one copy of a job queued or running per class, queue
 * and args, with a lock taken in the same atomic call as the push and
 * released at `until` (never outliving `for`). A feature: the engine knows
 * nothing of it. See docs/unique.md.
 *
 * Everything of the feature lives in this folder: its options
 * (`options.ts`), its write guard (`push_guard.ts`), its middleware and
 * death handler (`unique_jobs.ts`), its part in the admin API's moves
 * (`lock_release.ts`), the lock mark a job carries (`mark.ts`) and the
 * admin API over its locks (`unique_locks.ts`, from `edgekiq/api`).
 *
 * @example
 * ```ts
 * import { createClient, createWorker, defineJob } from "edgekiq";
import { uniqueJobs } from "edgekiq/features";
 *
 * const unique = uniqueJobs();
 * const SyncUser = defineJob({ name: "SyncUser", unique: { for: 600 }, perform(_ctx, id: number) {} });
 * const client = createClient({ transport, features: [unique] });
 * await client.push(SyncUser, [42]); // a jid; pushed again before it succeeds: null
 * createWorker({ transport, jobs: [SyncUser], features: [unique] });
 * ```
 *
 * @module
 */
export { uniqueJobs } from "./unique_jobs.ts";
export type { UniqueJobs } from "./unique_jobs.ts";
export { UNIQUE_OPTION_RULES } from "./options.ts";
export type { UniqueConflict, UniqueJobOptions, UniqueOptions, UniquePushOptions, UniqueUntil } from "./options.ts";
export { UniqueLocks } from "./unique_locks.ts";
export type { CleanOrphansOptions, UniqueLock } from "./unique_locks.ts";
