/**
 * Job events as Server-Sent Events: `GET /<queue>` streams the queue's
 * events (`jobEvents()` must write them) to a browser's `EventSource` or
 * any SSE client, each with its stream ID as the SSE `id`, so a reconnect
 * (`Last-Event-ID`) goes on where it left off. Over TCP one blocked
 * `XREAD` per open stream; over HTTP (Upstash, on the edge) a poll with a
 * back-off, and a stream ends after `maxMs` for the client to reconnect
 * (every request is billed and an edge response has a time limit).
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { Client } from "../../client.ts";
import { ConfigError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import { silentLogger } from "../../logger.ts";
import type { Logger } from "../../logger.ts";
import { isQueueName } from "../../queue_name.ts";
import { logErrors } from "../../server/identity.ts";
import { wholeNumber } from "../../server/whole_number.ts";
import type { Transport } from "../../transport/transport.ts";
import { checkCursor, queueEvents } from "./event_reader.ts";
import type { JobEvent } from "./job_event.ts";
import { type CronAuth, verifyBearer } from "../../web/bearer_auth.ts";

/** Options for {@link eventRoutes}. */
export interface EventRoutesOptions<E extends object = Record<string, unknown>> {
  /** The transport, or a function of the env bindings returning it (cache it: it is called per request). */
  transport: Transport | ((env: E) => Transport);
  /**
   * Required: a bearer secret (`Authorization: Bearer <secret>`, for server
   * clients) or a verifier given the request and the env bindings (a
   * browser's `EventSource` sends cookies, not headers).
   */
  auth: CronAuth<E>;
  /** The queues that may be streamed; default any. Others answer 404. */
  queues?: readonly string[];
  /** The key prefix (namespace) the workers use. */
  prefix?: string;
  /** The longest one response streams, ms; default 300,000 (the client then reconnects). */
  maxMs?: number;
  /** A comment line this often keeps proxies from closing an idle stream, ms; default 15,000. */
  pingMs?: number;
  /** HTTP transports: the longest pause between two polls, ms; default 5,000. */
  pollMaxMs?: number;
  logger?: Logger;
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/** An event name as it may be sent on an `event:` line (Redis may hold anything). */
const EVENT_NAME = /^[a-z][a-z-]{0,39}$/;

/**
 * Builds the SSE routes as a hono sub-app: mount it with
 * `app.route("/events", eventRoutes({...}))`; `GET /events/<queue>`
 * (optionally `?after=<event id>`) answers `text/event-stream`, each
 * message's `event` the event's name (`completed`, `progress`, ...), its
 * `data` the event as JSON, its `id` the stream ID. 401 without auth, 404
 * for a queue not allowed, 400 for a bad cursor.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { eventRoutes } from "edgekiq/web";
 * const app = new Hono();
 * app.route("/events", eventRoutes({ transport, queues: ["reports"], auth: (req) => isSignedIn(req) }));
 * // in the browser:
 * // new EventSource("/events/reports").addEventListener("completed", (m) => show(JSON.parse(m.data)));
 * ```
 */
export function eventRoutes<E extends object = Record<string, unknown>>(
  options: EventRoutesOptions<E>,
): Hono<{ Bindings: E }> {
  const { auth, transport } = options ?? ({} as EventRoutesOptions<E>);
  if (typeof auth === "string" ? auth === "" : typeof auth !== "function") {
    throw new ConfigError(
      `Cannot build event routes as 'auth' must be a non-empty secret or a verifier function: current value is ${
        describeValue(auth)
      }`,
    );
  }
  if (!transport) throw new ConfigError("Cannot build event routes as 'transport' is required");
  const allowed = options.queues === undefined ? undefined : new Set(options.queues);
  if (allowed && ![...allowed].every(isQueueName)) {
    throw new ConfigError(
      `Cannot build event routes as 'queues' must name queues: current value is ${describeValue(options.queues)}`,
    );
  }
  const action = "build event routes";
  const maxMs = wholeNumber(options.maxMs ?? 300_000, { action, name: "maxMs", min: 1, max: 86_400_000 });
  const pingMs = wholeNumber(options.pingMs ?? 15_000, { action, name: "pingMs", min: 1, max: 86_400_000 });
  const report = options.onError ?? logErrors(options.logger ?? silentLogger);
  const clients = new WeakMap<Transport, Client>();
  const clientOf = (t: Transport) => {
    let client = clients.get(t);
    if (!client) clients.set(t, client = new Client({ transport: t, prefix: options.prefix }));
    return client;
  };

  const app = new Hono<{ Bindings: E }>();
  app.use("*", async (c, next) => {
    let ok: boolean;
    try {
      ok = typeof auth === "string" ? await verifyBearer(c.req.raw, auth) : await auth(c.req.raw, c.env);
    } catch (error) {
      report(error, { context: `event routes auth ${c.req.path}` });
      return c.json({ error: "internal error" }, 500);
    }
    if (ok !== true) return c.json({ error: "unauthorized" }, 401, { "WWW-Authenticate": 'Bearer realm="edgekiq"' });
    await next();
  });
  app.get("/:queue", (c: Context<{ Bindings: E }>) => {
    const queue = c.req.param("queue");
    if (!isQueueName(queue) || (allowed && !allowed.has(queue))) return c.json({ error: "no such queue" }, 404);
    let from: string;
    try {
      from = checkCursor(c.req.header("last-event-id") ?? c.req.query("after") ?? "$", "stream events");
    } catch (error) {
      return c.json({ error: (error as Error).message }, 400);
    }
    const client = clientOf(typeof transport === "function" ? transport(c.env) : transport);
    return streamSSE(c, async (stream) => {
      const done = new AbortController();
      stream.onAbort(() => done.abort());
      const end = setTimeout(() => done.abort(), maxMs);
      const ping = setInterval(() => void stream.write(": ping\n\n").catch(() => done.abort()), pingMs);
      const events = queueEvents(client, queue, {
        from,
        signal: done.signal,
        blockMs: Math.min(pingMs, 5000),
        pollMaxMs: options.pollMaxMs,
        onError: (error) => report(error, { context: `event stream ${queue}` }),
      });
      try {
        await stream.writeSSE({ event: "ready", data: JSON.stringify({ queue }), retry: 3000 });
        for await (const event of events) {
          if (done.signal.aborted) break;
          await stream.writeSSE({
            event: EVENT_NAME.test(event.event) ? event.event : "message",
            data: JSON.stringify(eventData(event)),
            id: event.id,
          });
        }
      } finally {
        clearTimeout(end);
        clearInterval(ping);
        events.close();
      }
    });
  });
  return app;
}

/** An event as sent: everything but its ID, which is the message's `id`. */
function eventData({ id: _id, ...rest }: JobEvent): Omit<JobEvent, "id"> {
  return rest;
}
