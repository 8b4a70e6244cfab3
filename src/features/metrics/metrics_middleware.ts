/**
 * Execution metrics as a server middleware, for wiring a
 * {@link MetricsTracker} into a worker through its `middleware` option.
 *
 * @module
 */
import { Discard } from "../../control.ts";
import type { ServerMiddleware } from "../../server_middleware.ts";
import { type MetricsTracker } from "./tracker.ts";
import { displayClass } from "../../activejob.ts";

/**
 * A server middleware that times each job and records it in `tracker`, as
 * Sidekiq's `Metrics::Middleware`: a run always, a failure when the job
 * throws, its milliseconds when it succeeds. A `Discard` is not a failure
 * (the job ended as it meant to). Put it first in the chain to time the
 * other middleware too, as Sidekiq does.
 *
 * @example
 * ```ts
 * const tracker = new MetricsTracker();
 * createWorker({ transport, jobs, middleware: [metricsMiddleware(tracker)] });
 * setInterval(() => tracker.flush(transport, keys()), 10_000);
 * ```
 */
export function metricsMiddleware(tracker: MetricsTracker): ServerMiddleware {
  return async (_job, payload, _queue, next) => {
    const started = performance.now();
    let failed = true;
    try {
      await next();
      failed = false;
    } catch (error) {
      if (error instanceof Discard) failed = false;
      throw error;
    } finally {
      tracker.record(displayClass(payload), performance.now() - started, failed);
    }
  };
}
