/**
 * Serves a fetch handler (a hono app's `fetch`) over node:http on a free
 * loopback port, for tests that need a real HTTP server (the browser
 * tests). Node, Bun and Deno all provide node:http.
 *
 * @module
 */
import { createServer, type IncomingMessage } from "node:http";

/** A running server. */
export interface Served {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Closes the server and its connections. */
  stop(): Promise<void>;
}

function toRequest(req: IncomingMessage, body: ArrayBuffer | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of [value].flat()) headers.append(name, one);
  }
  const host = req.headers.host ?? "127.0.0.1";
  return new Request(`http://${host}${req.url}`, { method: req.method, headers, body });
}

/**
 * Starts serving `fetch`.
 *
 * @example
 * ```ts
 * const served = await serve((req) => app.fetch(req));
 * await fetch(`${served.url}/jobs`);
 * await served.stop();
 * ```
 */
export async function serve(fetch: (request: Request) => Response | Promise<Response>, port = 0): Promise<Served> {
  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const bytes = Buffer.concat(chunks);
      const body = hasBody
        ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
        : undefined;
      const response = await fetch(toRequest(req, body));
      const headers: Record<string, string | string[]> = {};
      response.headers.forEach((value, name) => {
        headers[name] = name === "set-cookie" ? [...((headers[name] as string[]) ?? []), value] : value;
      });
      res.writeHead(response.status, headers);
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    async stop() {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
