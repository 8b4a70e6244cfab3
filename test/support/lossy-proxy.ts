/**
 * A TCP proxy in front of a redis-server that can lose a reply: armed with
 * `dropNextReply()`, it lets the next request through to Redis (which runs
 * it), then swallows the reply and cuts that client's connection, as a
 * network failure between the two would. This is the fault a transport must
 * not answer with a blind resend.
 *
 * Served with node:net, which Node, Bun and Deno all provide.
 *
 * @module
 */
import { createServer, Socket } from "node:net";

/** A running proxy. */
export interface LossyProxy {
  /** `redis://127.0.0.1:<port>`: connect the transport under test here. */
  url: string;
  /** Loses the next reply any connection receives, and cuts that connection. */
  dropNextReply(): void;
  /** Replies lost so far. */
  readonly dropped: number;
  /** Closes the proxy and every connection through it. */
  stop(): Promise<void>;
}

/**
 * Starts a proxy on a free loopback port in front of `redisPort`.
 *
 * @example
 * ```ts
 * const proxy = await startLossyProxy({ redisPort: server.port });
 * const transport = ioredisTransport({ url: proxy.url });
 * proxy.dropNextReply();
 * await transport.call("LPUSH", "q", "x"); // rejects: the reply was lost, the push was applied
 * ```
 */
export async function startLossyProxy(options: { redisPort: number }): Promise<LossyProxy> {
  let armed = false;
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(options.redisPort, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (data) => upstream.write(data));
    upstream.on("data", (data) => {
      if (armed) {
        armed = false;
        dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    dropNextReply() {
      armed = true;
    },
    get dropped() {
      return dropped;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
