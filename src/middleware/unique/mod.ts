/**
 * Unique jobs: at most one copy of a job queued or running per class, queue
 * and args, with a lock taken in the same atomic call as the push and
 * released at `until` (never outliving `for`). Client and server
 * middleware; the engine knows nothing of it. See docs/unique.md.
 *
 * @example
 * ```ts
 * import { createClient, createWorker, defineJob, uniqueJobs } from "edgekiq";
 *
 * const unique = uniqueJobs();
 * const SyncUser = defineJob({ name: "SyncUser", unique: { for: 600 }, perform(_ctx, id: number) {} });
 * const client = createClient({ transport, middleware: [unique.client] });
 * await client.push(SyncUser, [42]); // a jid; pushed again before it succeeds: null
 * createWorker({ transport, jobs: [SyncUser], middleware: [unique.server], deathHandlers: [unique.onDeath] });
 * ```
 *
 * @module
 */
export { uniqueJobs } from "./middleware.ts";
export type { UniqueJobs } from "./middleware.ts";
export type { UniqueConflict, UniqueOptions, UniqueUntil } from "../../unique/options.ts";
export { UNIQUE_FIELD } from "../../unique/mark.ts";
export type { UniqueMark } from "../../unique/mark.ts";
