/**
 * Batches and flows (`edgekiq/batches`): Sidekiq Pro's batches (a set of jobs with `complete`,
 * `success` and `death` callbacks, nested batches, reopen from inside a job)
 * and BullMQ's flows (a parent job that runs once its children have
 * succeeded and reads their return values), on one counting model whose
 * callbacks fire exactly once under concurrency and SIGKILL. A feature: the
 * engine knows nothing of batches. See docs/batches.md.
 *
 * Everything of the feature lives in this folder: the counting model
 * (`counting.ts`, Lua and its twin), its scripts (`outcome_script.ts`,
 * `open_script.ts`, `push_guard.ts`, `control_scripts.ts`), the batch handle
 * and its scope (`batch.ts`), callbacks (`callbacks.ts`), flows (`flow.ts`),
 * the feature itself (`batch_jobs.ts`), the admin API (`batch_set.ts`,
 * `batch_status.ts`) and the dashboard (`batches_dashboard.ts`, its `.tsx` pages and the job page's section).
 *
 * @example
 * ```ts
 * import { createClient, createWorker } from "edgekiq";
import { batchJobs } from "edgekiq/batches";
 * import type { FlowNode } from "edgekiq/batches";
 *
 * const batches = batchJobs();
 * const client = createClient({ transport, features: [batches] });
 * const batch = batches.open(client, { description: "Nightly import", callbacks: { success: [ImportDone, [42]] } });
 * await batch.add(async (b) => {
 *   await b.pushBulk(ImportRow, rows.map((row) => [row.id]));
 * });
 * createWorker({ transport, jobs: [ImportRow, ImportDone], features: [batches] });
 * ```
 *
 * @module
 */
export { batchJobs } from "./batch_jobs.ts";
export type { BatchJobContext, BatchJobs, BatchJobsOptions } from "./batch_jobs.ts";
export { Batch, BatchScope } from "./batch.ts";
export type { BatchOptions } from "./batch.ts";
export type { BatchCallbacks, BatchEvent, CallbackPushOptions, JobSpecTuple } from "./callbacks.ts";
export type { Flow, FlowChild, FlowNode, FlowOptions, FlowPolicy } from "./flow.ts";
export type { BatchPushOptions } from "./options.ts";
export { BatchSet } from "./batch_set.ts";
export type { BatchFailure, BatchStatus, CallbackState, CallbackStatus } from "./batch_status.ts";
