/**
 * What both halves of the OpenTelemetry middleware share: their options,
 * the tracer, span attributes and error reporting.
 *
 * @module
 */
import { type Attributes, type Exception, type TextMapPropagator, trace, type Tracer } from "@opentelemetry/api";
import type { JobPayload } from "../../payload.ts";
import { displayClass } from "../../activejob.ts";
import { VERSION } from "../../version.ts";

/** Options for the OpenTelemetry middleware. */
export interface OtelOptions {
  /** The tracer to use. Default: `trace.getTracer("edgekiq")` from the global tracer provider. */
  tracer?: Tracer;
  /**
   * How a perform span relates to its push. `"child"` (default): a child of
   * the push span, in the same trace, and linked to it. `"link"`: the root of
   * a new trace, linked to the push (opentelemetry-ruby's Sidekiq default),
   * for queues whose jobs run long after the request that pushed them.
   */
  propagation?: "child" | "link";
  /**
   * A propagator to write and read the payload's trace context with (for
   * example `propagation` from `@opentelemetry/api` to carry baggage too).
   * Default: W3C `traceparent`/`tracestate` fields, whatever is registered.
   */
  propagator?: TextMapPropagator;
}

/**
 * The tracer from the options, or the global provider's.
 *
 * @example
 * ```ts
 * const tracer = tracerFrom({});
 * ```
 */
export function tracerFrom(options: OtelOptions): Tracer {
  return options.tracer ?? trace.getTracer("edgekiq", VERSION);
}

/**
 * The messaging attributes of a job's span, with the class Sidekiq's own
 * instrumentation reports (`wrapped` for ActiveJob).
 *
 * @example
 * ```ts
 * jobAttributes(payload, "default", "process"); // { "messaging.system": "sidekiq", ... }
 * ```
 */
export function jobAttributes(payload: JobPayload, queue: string, operation: "send" | "process"): Attributes {
  const attributes: Attributes = {
    "messaging.system": "sidekiq",
    "messaging.operation.type": operation,
    "messaging.destination.name": queue,
    "messaging.message.id": String(payload.jid),
    "messaging.sidekiq.job_class": String(displayClass(payload)),
  };
  // Sidekiq's own field, as is: 0 on the first retry.
  if (typeof payload.retry_count === "number") attributes["messaging.sidekiq.retry_count"] = payload.retry_count;
  return attributes;
}

/**
 * Anything thrown, as OpenTelemetry records exceptions, and its message.
 *
 * @example
 * ```ts
 * const [exception, message] = thrown(new Error("boom")); // [Error, "boom"]
 * ```
 */
export function thrown(error: unknown): [Exception, string] {
  if (error instanceof Error) return [error, error.message];
  const text = typeof error === "string" ? error : (() => {
    try {
      return JSON.stringify(error) ?? String(error);
    } catch {
      return String(error);
    }
  })();
  return [text, text];
}
