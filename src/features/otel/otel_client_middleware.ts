/**
 * The producer half of edgekiq's OpenTelemetry tracing: a span per push,
 * written into the payload for the consumer half to link to.
 *
 * @module
 */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ClientMiddleware } from "../../client_middleware.ts";
import { carriesTrace, injectTrace } from "./carrier.ts";
import { jobAttributes, type OtelOptions, thrown, tracerFrom } from "./options.ts";

/**
 * A client middleware that starts a producer span (`<Class> publish`) for
 * each push, as a child of whatever span is active, and writes its context
 * into the payload (`traceparent`, `tracestate`). A payload that already
 * carries one (a scheduled or retrying job moved to its queue) keeps it and
 * gets no second span, so every attempt links back to the first push.
 *
 * The span covers the client middleware after it; the payload is written to
 * Redis once the whole chain has returned.
 *
 * @example
 * ```ts
 * const client = createClient({ transport, middleware: [otelClientMiddleware()] });
 * ```
 */
export function otelClientMiddleware(options: OtelOptions = {}): ClientMiddleware {
  const tracer = tracerFrom(options);
  return async (payload, ctx, next) => {
    if (carriesTrace(payload)) return next();
    const attributes = jobAttributes(payload, ctx.queue, "send");
    const span = tracer.startSpan(`${attributes["messaging.sidekiq.job_class"]} publish`, {
      kind: SpanKind.PRODUCER,
      attributes,
    });
    try {
      injectTrace(payload, span.spanContext(), options.propagator);
      await context.with(trace.setSpan(context.active(), span), next);
    } catch (error) {
      const [exception, message] = thrown(error);
      span.recordException(exception);
      span.setStatus({ code: SpanStatusCode.ERROR, message });
      throw error;
    } finally {
      span.end();
    }
  };
}
