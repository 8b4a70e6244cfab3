/**
 * The trace context a job carries: W3C Trace Context's `traceparent` and
 * `tracestate`, as top-level payload fields. Ruby Sidekiq keeps unknown
 * fields untouched, and opentelemetry-ruby's Sidekiq instrumentation writes
 * and reads these same two fields, so a trace crosses between Ruby and
 * edgekiq in either direction.
 *
 * @module
 */
import {
  type Context,
  context,
  createTraceState,
  isSpanContextValid,
  type SpanContext,
  type TextMapPropagator,
  trace,
} from "@opentelemetry/api";
import type { JobPayload } from "../../payload.ts";

/**
 * W3C Trace Context's `traceparent`: version 00 is exactly these 55
 * characters; a later version may carry more, after a `-` (read its first
 * four fields, as the spec says); version `ff` is invalid.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\s\S]*)?$/;

/** Reads only string fields: a payload is data from anywhere. */
const getter = {
  get: (carrier: JobPayload, key: string): string | undefined => {
    const value = carrier[key];
    return typeof value === "string" ? value : undefined;
  },
  keys: (carrier: JobPayload): string[] => Object.keys(carrier),
};

const setter = {
  set: (carrier: JobPayload, key: string, value: string): void => {
    carrier[key] = value;
  },
};

/**
 * Writes `span` into the payload: `traceparent` (and `tracestate` when the
 * span has one), or whatever `propagator` writes.
 *
 * @example
 * ```ts
 * injectTrace(payload, span.spanContext()); // payload.traceparent = "00-<trace>-<span>-01"
 * ```
 */
export function injectTrace(payload: JobPayload, span: SpanContext, propagator?: TextMapPropagator): void {
  if (propagator) {
    propagator.inject(trace.setSpanContext(context.active(), span), payload, setter);
    return;
  }
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, "0");
  payload.traceparent = `00-${span.traceId}-${span.spanId}-${flags}`;
  const state = span.traceState?.serialize();
  if (state) payload.tracestate = state;
}

/**
 * The span context a payload carries, or undefined when it carries none (or
 * a malformed one, which is ignored rather than failing the job).
 *
 * @example
 * ```ts
 * const pushed = extractTrace(payload); // { traceId, spanId, traceFlags, isRemote: true }
 * ```
 */
export function extractTrace(payload: JobPayload, propagator?: TextMapPropagator): SpanContext | undefined {
  let span: SpanContext | undefined;
  if (propagator) {
    span = trace.getSpanContext(propagator.extract(context.active() as Context, payload, getter));
  } else {
    const match = TRACEPARENT.exec(getter.get(payload, "traceparent") ?? "");
    if (!match || match[1] === "ff" || (match[1] === "00" && match[5] !== undefined)) return undefined;
    const state = getter.get(payload, "tracestate");
    span = {
      traceId: match[2],
      spanId: match[3],
      traceFlags: parseInt(match[4], 16),
      isRemote: true,
      traceState: state ? createTraceState(state) : undefined,
    };
  }
  return span && isSpanContextValid(span) ? span : undefined;
}

/**
 * Whether a payload already carries a trace context: a scheduled or retried
 * job being moved to its queue, which keeps the context of its first push.
 *
 * @example
 * ```ts
 * if (carriesTrace(payload)) return next();
 * ```
 */
export function carriesTrace(payload: JobPayload): boolean {
  return typeof payload.traceparent === "string";
}
