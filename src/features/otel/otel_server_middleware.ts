/**
 * The consumer half of edgekiq's OpenTelemetry tracing: a span per perform,
 * linked to the push that created the job, ended whatever happens to it.
 *
 * @module
 */
import { context, type Link, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { currentJob } from "../../current_job.ts";
import { Discard } from "../../control.ts";
import type { ServerMiddleware } from "../../server_middleware.ts";
import { extractTrace } from "./carrier.ts";
import { jobAttributes, type OtelOptions, thrown, tracerFrom } from "./options.ts";

/**
 * A server middleware that runs each perform inside a consumer span
 * (`<Class> process`) linked to the push span the payload carries; every
 * retry is a new span linked to that same first push. An error is recorded
 * on the span and rethrown; a `Discard` is an event, not an error.
 *
 * The span ends when the job ends, on every path. If the worker's hard
 * shutdown abandons a job that ignores its `signal` (and `currentJob` is on,
 * the default), the span ends then, marked interrupted, instead of staying
 * open for the life of the process.
 *
 * @example
 * ```ts
 * createWorker({ transport, jobs, middleware: [otelServerMiddleware()] });
 * ```
 */
export function otelServerMiddleware(options: OtelOptions = {}): ServerMiddleware {
  const tracer = tracerFrom(options);
  const child = (options.propagation ?? "child") === "child";
  return async (_job, payload, queue, next) => {
    const pushed = extractTrace(payload, options.propagator);
    const links: Link[] = pushed ? [{ context: pushed }] : [];
    const attributes = jobAttributes(payload, queue, "process");
    const parent = pushed && child ? trace.setSpanContext(context.active(), pushed) : context.active();
    const span = tracer.startSpan(`${attributes["messaging.sidekiq.job_class"]} process`, {
      kind: SpanKind.CONSUMER,
      attributes,
      links,
      root: !child,
    }, parent);
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      span.end();
    };
    const signal = currentJob()?.signal;
    const interrupted = (): void => {
      span.setAttribute("edgekiq.interrupted", true);
      span.setStatus({ code: SpanStatusCode.ERROR, message: "interrupted by shutdown" });
      end();
    };
    signal?.addEventListener("abort", interrupted, { once: true });
    try {
      await context.with(trace.setSpan(parent, span), next);
    } catch (error) {
      if (error instanceof Discard) span.addEvent("discarded", { reason: error.message });
      else if (!ended) {
        const [exception, message] = thrown(error);
        span.recordException(exception);
        span.setStatus({ code: SpanStatusCode.ERROR, message });
      }
      throw error;
    } finally {
      signal?.removeEventListener("abort", interrupted);
      end();
    }
  };
}
