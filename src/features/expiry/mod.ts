/**
 * Expiring jobs (Sidekiq Pro's `expires_in`): a job that has not started by
 * its expiry is dropped when fetched, counted, logged once per class per
 * interval and counted apart in the execution metrics. See
 * docs/operations.md.
 *
 * @example
 * ```ts
 * import { createClient, createWorker, defineJob } from "edgekiq";
import { expiringJobs } from "edgekiq/features";
 *
 * const expiry = expiringJobs();
 * const Digest = defineJob({ name: "Digest", expiresIn: 24 * 3600, perform(_ctx, userId: number) {} });
 * await createClient({ transport, features: [expiry] }).push(Digest, [7], { in: 3600 }); // expires in 25 h
 * createWorker({ transport, jobs: [Digest], features: [expiry] });
 * ```
 *
 * @module
 */
export { expiringJobs } from "./expiring_jobs.ts";
export type { ExpiringJobs, ExpiringJobsOptions } from "./expiring_jobs.ts";
export { EXPIRY_OPTION_RULES } from "./options.ts";
export type { ExpiryJobOptions, ExpiryPushOptions } from "./options.ts";
