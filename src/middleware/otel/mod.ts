/**
 * OpenTelemetry tracing for edgekiq (`edgekiq/otel`): a producer span at
 * push, the trace context carried in the job (`traceparent`, which Ruby
 * Sidekiq passes through untouched and opentelemetry-ruby reads), and a
 * consumer span per perform linked to it. `@opentelemetry/api` is an
 * optional peer dependency, loaded only by this entry point.
 *
 * @example
 * ```ts
 * import { otelMiddleware } from "@edgekiq/edgekiq/otel";
 *
 * const otel = otelMiddleware(); // uses the global tracer provider your SDK set up
 * const client = createClient({ transport, middleware: [otel.client] });
 * const worker = createWorker({ transport, jobs, middleware: [otel.server], clientMiddleware: [otel.client] });
 * ```
 *
 * @module
 */
import type { ClientMiddleware } from "../../client_middleware.ts";
import type { ServerMiddleware } from "../../server_middleware.ts";
import { otelClientMiddleware } from "./client.ts";
import type { OtelOptions } from "./options.ts";
import { otelServerMiddleware } from "./server.ts";

export { otelClientMiddleware } from "./client.ts";
export { otelServerMiddleware } from "./server.ts";
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
