/**
 * `edgekiq/events`: job events and results (BullMQ's `QueueEvents`,
 * `waitUntilFinished` and return values). An opt-in, bounded event stream
 * per queue, written with each job's outcome (and its progress,
 * rate-limited), readable from any process, an edge function, or a browser
 * as Server-Sent Events (`eventRoutes()` in `edgekiq/web`); and kept
 * results for `waitFor`. A feature: the engine knows nothing of it. See
 * docs/events.md.
 *
 * Everything of the feature lives in this folder: its options
 * (`options.ts`), the feature (`job_events.ts`), its outcome write
 * (`event_write.ts`), the progress rate limit (`progress_throttle.ts`), the
 * event shape (`job_event.ts`), the readers (`event_reader.ts`), the wait
 * for a result (`wait_for.ts`, `result_errors.ts`); the SSE routes, which
 * need hono, are `event_routes.ts` (exported from `edgekiq/web`).
 *
 * @example
 * ```ts
 * import { createClient, createWorker, defineJob } from "@edgekiq/edgekiq";
 * import { jobEvents, queueEvents, waitFor } from "@edgekiq/edgekiq/events";
 *
 * const events = jobEvents({ queues: ["reports"] });
 * const Report = defineJob({ name: "Report", queue: "reports", keepResult: { for: 600 }, perform: () => ({ rows: 42 }) });
 * const client = createClient({ transport, features: [events] });
 * createWorker({ transport, jobs: [Report], features: [events] });
 * const jid = await client.push(Report, []);
 * await waitFor(client, jid!); // { rows: 42 }
 * for await (const e of queueEvents(client, "reports")) console.log(e.event, e.jid);
 * ```
 *
 * @module
 */
export { jobEvents } from "./job_events.ts";
export type { JobEvents, JobEventsOptions } from "./job_events.ts";
export type { EventsJobOptions, EventsPushOptions, KeepResultOptions } from "./options.ts";
export type { JobEvent, JobEventName } from "./job_event.ts";
export { queueEvents, readEvents } from "./event_reader.ts";
export type { EventBatch, QueueEvents, QueueEventsOptions, ReadEventsOptions } from "./event_reader.ts";
export { readResult, waitFor } from "./wait_for.ts";
export type { JobResult, WaitForOptions } from "./wait_for.ts";
export { JobFailedError, ResultError, WaitTimeoutError } from "./result_errors.ts";
