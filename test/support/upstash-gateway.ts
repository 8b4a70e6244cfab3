/**
 * A test-only gateway speaking Upstash's REST protocol in front of a real
 * redis-server, so `@upstash/redis` itself is what the tests drive:
 * `POST /` with a JSON command array, `POST /pipeline`, `POST /multi-exec`,
 * bearer-token auth, `Upstash-Encoding: base64`, and `{error}` with status
 * 400. It counts commands, as Upstash would bill them.
 *
 * Faults on demand: `delayMs` holds every reply back (after Redis ran the
 * command), and `dropNextReply()` runs the next request and then cuts its
 * connection without answering, as a reset between Upstash and the client
 * would.
 *
 * Served with node:http, which Node, Bun and Deno all provide, through a
 * ten-line adapter to `app.fetch` (no @hono/node-server needed).
 *
 * @module
 */
import { createServer } from "node:http";
import { Hono } from "hono";
import { Redis } from "ioredis";

/** A running gateway. */
export interface UpstashGateway {
  /** `http://127.0.0.1:<port>`: the REST URL to give @upstash/redis. */
  url: string;
  /** Commands received (a pipeline of k counts k; a script counts 1). */
  readonly commands: number;
  /** Milliseconds every reply is held back after Redis answered (0: none). */
  delayMs: number;
  /** Runs the next request, then closes its connection without a reply. */
  dropNextReply(): void;
  /** Closes the HTTP server and its Redis connection. */
  stop(): Promise<void>;
}

type Reply = string | number | null | Reply[];

/**
 * `Upstash-Encoding: base64`: every string, at any depth, becomes the base64
 * of its UTF-8 bytes; numbers and null stay. @upstash/redis decodes every
 * string it gets (it passes a bare top-level "OK" through, and "T0s=" decodes
 * to "OK" too), so encoding all of them is the one safe choice: an "OK"
 * element left raw inside an array would be decoded into garbage.
 */
function encode(value: Reply, base64: boolean): Reply {
  if (!base64) return value;
  if (typeof value === "string") return Buffer.from(value, "utf8").toString("base64");
  if (Array.isArray(value)) return value.map((v) => encode(v, true));
  return value;
}

/** A command from a JSON body: clients may send numbers; Redis wants strings. */
function parse(body: unknown): [string, ...string[]] {
  if (!Array.isArray(body) || body.length === 0) throw new Error("ERR command must be a non-empty JSON array");
  return body.map(String) as [string, ...string[]];
}

/**
 * Starts the gateway on a free loopback port in front of `redisUrl`.
 *
 * @example
 * ```ts
 * const gateway = await startUpstashGateway({ redisUrl: server.url, token: "t0k3n" });
 * const transport = upstashTransport({ url: gateway.url, token: "t0k3n" });
 * await gateway.stop();
 * ```
 */
export async function startUpstashGateway(options: { redisUrl: string; token: string }): Promise<UpstashGateway> {
  const redis = new Redis(options.redisUrl, { protocol: 2, maxRetriesPerRequest: 1 });
  redis.on("error", () => {}); // failures reach the client as {error}
  let commands = 0;
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (c.req.header("authorization") !== `Bearer ${options.token}`) return c.json({ error: "Unauthorized" }, 401);
    await next();
  });
  const one = async (body: unknown): Promise<{ result: Reply } | { error: string }> => {
    commands++;
    try {
      const cmd = parse(body);
      return { result: (await redis.call(cmd[0], ...cmd.slice(1))) as Reply };
    } catch (error) {
      return { error: (error as Error).message };
    }
  };
  app.post("/", async (c) => {
    const base64 = c.req.header("upstash-encoding") === "base64";
    const r = await one(await c.req.json());
    return "error" in r ? c.json(r, 400) : c.json({ result: encode(r.result, base64) });
  });
  app.post("/pipeline", async (c) => {
    const base64 = c.req.header("upstash-encoding") === "base64";
    const body = ((await c.req.json()) as unknown[]).map(parse);
    const p = redis.pipeline();
    for (const cmd of body) p.call(cmd[0], ...cmd.slice(1));
    commands += body.length;
    const results = (await p.exec()) ?? [];
    return c.json(results.map(([e, v]) => (e ? { error: e.message } : { result: encode(v as Reply, base64) })));
  });
  app.post("/multi-exec", async (c) => {
    const base64 = c.req.header("upstash-encoding") === "base64";
    const body = ((await c.req.json()) as unknown[]).map(parse);
    const m = redis.multi();
    for (const cmd of body) m.call(cmd[0], ...cmd.slice(1));
    commands += body.length;
    try {
      const results = (await m.exec()) ?? [];
      return c.json(results.map(([e, v]) => (e ? { error: e.message } : { result: encode(v as Reply, base64) })));
    } catch (error) {
      // A refused transaction, in the words Redis uses when EXEC itself
      // finds the reason (e.g. OOM): "EXECABORT ... because of: <reason>".
      const previous = (error as { previousErrors?: Error[] }).previousErrors ?? [];
      const message = previous.length > 0
        ? `EXECABORT Transaction discarded because of: ${previous[0].message}`
        : (error as Error).message;
      return c.json({ error: message }, 400);
    }
  });

  let delayMs = 0;
  let drop = false;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const dropThis = drop;
    drop = false;
    const response = await app.fetch(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers: req.headers as Record<string, string>,
        body: req.method === "GET" ? undefined : Buffer.concat(chunks),
      }),
    );
    if (dropThis) {
      req.socket.destroy();
      return;
    }
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (req.socket.destroyed) return; // the client gave up waiting
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get commands() {
      return commands;
    },
    get delayMs() {
      return delayMs;
    },
    set delayMs(ms: number) {
      delayMs = ms;
    },
    dropNextReply() {
      drop = true;
    },
    async stop() {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}
