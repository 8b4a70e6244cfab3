/**
 * A test-only gateway speaking Upstash's REST protocol in front of a real
 * redis-server, so `@upstash/redis` itself is what the tests drive:
 * `POST /` with a JSON command array, `POST /pipeline`, `POST /multi-exec`,
 * bearer-token auth, `Upstash-Encoding: base64`, and `{error}` with status
 * 400. It counts commands, as Upstash would bill them.
 */
import { createServer } from "node:http";
import { Hono } from "hono";
import { Redis } from "ioredis";

export interface UpstashGateway {
  url: string;
  /** Commands received (a pipeline of k counts k; a script counts 1). */
  readonly commands: number;
  stop(): Promise<void>;
}

type Reply = string | number | null | Reply[];

function encode(value: Reply, base64: boolean): Reply {
  if (!base64) return value;
  if (typeof value === "string") return value === "OK" ? "OK" : Buffer.from(value, "utf8").toString("base64");
  if (Array.isArray(value)) return value.map((v) => encode(v, true));
  return value;
}

export async function startUpstashGateway(options: { redisUrl: string; token: string }): Promise<UpstashGateway> {
  const redis = new Redis(options.redisUrl, { protocol: 2, maxRetriesPerRequest: null });
  let commands = 0;
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (c.req.header("authorization") !== `Bearer ${options.token}`) return c.json({ error: "Unauthorized" }, 401);
    await next();
  });
  const one = async (cmd: string[]): Promise<{ result: Reply } | { error: string }> => {
    commands++;
    try {
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
    const body = (await c.req.json()) as string[][];
    const p = redis.pipeline();
    for (const cmd of body) p.call(cmd[0], ...cmd.slice(1));
    commands += body.length;
    const results = (await p.exec()) ?? [];
    return c.json(results.map(([e, v]) => (e ? { error: e.message } : { result: encode(v as Reply, base64) })));
  });
  app.post("/multi-exec", async (c) => {
    const base64 = c.req.header("upstash-encoding") === "base64";
    const body = (await c.req.json()) as string[][];
    const m = redis.multi();
    for (const cmd of body) m.call(cmd[0], ...cmd.slice(1));
    commands += body.length;
    try {
      const results = (await m.exec()) ?? [];
      return c.json(results.map(([e, v]) => (e ? { error: e.message } : { result: encode(v as Reply, base64) })));
    } catch (error) {
      return c.json({ error: (error as Error).message }, 400);
    }
  });

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const response = await app.fetch(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers: req.headers as Record<string, string>,
        body: req.method === "GET" ? undefined : Buffer.concat(chunks),
      }),
    );
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
    async stop() {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}
