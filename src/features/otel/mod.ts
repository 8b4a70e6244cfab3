/**
 * OpenTelemetry tracing for edgekiq (`edgekiq/otel`): a producer span at
 * push, the trace context carried in the job (`traceparent`, which Ruby
 * Sidekiq passes through untouched and opentelemetry-ruby reads), and a
 * consumer span per perform linked to it. `@opentelemetry/api` is an
 * optional peer dependency, loaded only by this entry point.
 *
 * @example
 * ```ts
 * import { otelTracing } from "edgekiq/otel";
 *
 * const tracing = otelTracing(); // uses the global tracer provider your SDK set up
 * const client = createClient({ transport, features: [tracing] });
 * const worker = createWorker({ transport, jobs, features: [tracing] });
 * ```
 *
 * @module
 */
import type { ClientMiddleware } from "../../client_middleware.ts";
import type { ServerMiddleware } from "../../server_middleware.ts";
import type { Feature } from "../feature.ts";
import { otelClientMiddleware } from "./otel_client_middleware.ts";
import type { OtelOptions } from "./options.ts";
import { otelServerMiddleware } from "./otel_server_middleware.ts";

export { otelClientMiddleware } from "./otel_client_middleware.ts";
export { otelServerMiddleware } from "./otel_server_middleware.ts";
export { extractTrace, injectTrace } from "./carrier.ts";
export type { OtelOptions } from "./options.ts";

/**
 * Both halves with the same options: `client` for every client that pushes
 * (and the worker's own client, which moves scheduled and retried jobs),
 * `server` for the worker.
 *
 * @example
 * ```ts
 * const { client, server } = otelMiddleware({ propagation: "link" });
 * ```
 */
export function otelMiddleware(options: OtelOptions = {}): { client: ClientMiddleware; server: ServerMiddleware } {
  return { client: otelClientMiddleware(options), server: otelServerMiddleware(options) };
}

/** The tracing feature: both halves, for `features`. */
export interface OtelTracing extends Feature {
  readonly name: "otel";
  readonly client: ClientMiddleware;
  readonly server: ServerMiddleware;
}

/**
 * Tracing as a feature: pass it to every client and worker
 * (`features: [otelTracing()]`); the worker's own client, which moves
 * scheduled and retried jobs, gets the client half too.
 *
 * @example
 * ```ts
 * const tracing = otelTracing({ propagation: "link" });
 * createWorker({ transport, jobs, features: [tracing] });
 * ```
 */
export function otelTracing(options: OtelOptions = {}): OtelTracing {
  const { client, server } = otelMiddleware(options);
  // Spans travel in each payload: nothing is shared across a sharded namespace.
  return Object.freeze({ name: "otel", client, server, perShard: true } as const);
}
