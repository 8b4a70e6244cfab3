/**
 * Cancelling jobs by jid: `cancelJob(client, jid)` (the admin API, `src/api/cancel_job.ts`), `edgekiq
 * cancel <jid>` (the CLI) and the Cancel button on the dashboard's Busy
 * page, and the feature that makes workers act on it (`jobCancellation()`).
 * See docs/operations.md.
 *
 * @example
 * ```ts
 * import { cancelJob, createWorker } from "edgekiq";
 * import { jobCancellation } from "edgekiq/features";
 *
 * createWorker({ transport, jobs, features: [jobCancellation()] });
 * await cancelJob(client, jid); // its ctx.stopping aborts within one heartbeat; waiting copies are skipped
 * ```
 *
 * @module
 */
export { jobCancellation } from "./job_cancellation.ts";
export type { JobCancellation } from "./job_cancellation.ts";
