/**
 * The `edgekiq` command's host glue: argv, files, module loading, terminal
 * detection and Redis clients, for Node, Bun and Deno. It names their
 * globals, so it is one of the few files outside `src/runtime/` that core
 * purity allows (as the transport adapters are): it sits beside the CLI it
 * serves because it imports the CLI's types and the adapters, and the
 * runtime layer must not import upward. The program itself is
 * `src/cli/main.ts`, which stays web-standard.
 *
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { connect as tcpConnect } from "node:net";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CliHost, Listening, Terminal } from "./cli_host.ts";
import type { Transport } from "../transport/transport.ts";
import { currentRuntime } from "../runtime/detect.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;

/**
 * The host the CLI runs on.
 *
 * @example
 * ```ts
 * const code = await runCli(cliHost());
 * ```
 */
export function cliHost(): CliHost {
  const runtime = currentRuntime();
  const deno = runtime.key === "deno" ? g.Deno : undefined;
  const proc = g.process;
  return {
    argv: deno ? [...deno.args] : proc.argv.slice(2),
    runtime,
    runtimeVersion: deno
      ? `deno ${deno.version.deno}`
      : runtime.key === "bun"
      ? `bun ${g.Bun.version}`
      : `node ${proc.versions.node}`,
    stdoutIsTTY: deno ? deno.stdout.isTerminal() : Boolean(proc.stdout?.isTTY),
    cwd: () => (deno ? deno.cwd() : proc.cwd()),
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    exists: (path) => stat(resolve(path)).then(() => true, () => false),
    readText: (path) => readFile(resolve(path), "utf8"),
    importModule: (path) => import(pathToFileURL(resolve(path)).href),
    async connect(choice): Promise<Transport> {
      switch (choice.kind) {
        case "upstash":
          return (await import("../transport/adapters/upstash/upstash_transport.ts")).upstashTransport({
            url: choice.url,
            token: choice.token!,
          });
        case "bun":
          return (await import("../transport/adapters/bun/bun_transport.ts")).bunTransport({ url: choice.url });
        case "cluster": {
          // One seed is enough: the cluster client discovers the other nodes from it. Its credentials and TLS
          // apply to every node.
          const url = new URL(choice.url);
          return (await import("../transport/adapters/cluster/cluster_transport.ts")).clusterTransport({
            nodes: [{ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 6379) }],
            redisOptions: {
              ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
              ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
              ...(url.protocol === "rediss-cluster:" ? { tls: {} } : {}),
            },
          });
        }
        default:
          return (await import("../transport/adapters/ioredis/ioredis_transport.ts")).ioredisTransport({
            url: choice.url,
          });
      }
    },
    probe: (url) => probeTcp(url),
    serve: (fetch, options) => serveHttp(runtime.key, fetch, options),
    terminal: () => terminalOf(runtime.key),
  };
}

/**
 * Serves HTTP with the runtime's own server: Bun.serve, Deno.serve, or
 * @hono/node-server on Node (an optional peer: imported only here).
 */
async function serveHttp(
  key: string,
  fetch: (request: Request) => Response | Promise<Response>,
  { hostname, port }: { hostname: string; port: number },
): Promise<Listening> {
  if (key === "bun") {
    const server = g.Bun.serve({ fetch, hostname, port });
    return { port: server.port, close: async () => void (await server.stop(true)) };
  }
  if (key === "deno") {
    const server = g.Deno.serve({ hostname, port, onListen() {} }, fetch);
    return { port: server.addr.port, close: () => server.shutdown() };
  }
  const { serve } = await import("@hono/node-server");
  return await new Promise<Listening>((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, (info) =>
      resolve({
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => done());
          }),
      }));
    server.once("error", reject);
  });
}

/** Output sequences: alternate screen and hidden cursor on, and off again. */
const TAKE_OVER = "\x1b[?1049h\x1b[?25l\x1b[2J";
const GIVE_BACK = "\x1b[0m\x1b[?25h\x1b[?1049l";

/**
 * Standard input and output as a {@link Terminal}, when both are one. Node
 * and Bun through `process`; Deno through `Deno.stdin`/`Deno.stdout` and a
 * SIGWINCH listener for resizes.
 */
function terminalOf(key: string): Terminal | undefined {
  const encoder = new TextEncoder();
  if (key === "deno") {
    const deno = g.Deno;
    if (!deno.stdin.isTerminal() || !deno.stdout.isTerminal()) return undefined;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    let onResize: (() => void) | undefined;
    let started = false;
    const write = (text: string) => {
      const bytes = encoder.encode(text);
      for (let at = 0; at < bytes.length;) at += deno.stdout.writeSync(bytes.subarray(at));
    };
    return {
      size: () => deno.consoleSize(),
      write,
      start(handlers) {
        started = true;
        deno.stdin.setRaw(true);
        write(TAKE_OVER);
        onResize = handlers.onResize;
        deno.addSignalListener("SIGWINCH", onResize);
        reader = deno.stdin.readable.getReader();
        const decoder = new TextDecoder();
        void (async () => {
          try {
            for (;;) {
              const { done, value } = await reader!.read();
              if (done) return;
              handlers.onInput(decoder.decode(value, { stream: true }));
            }
          } catch { /* cancelled by stop() */ }
        })();
      },
      stop() {
        if (!started) return;
        started = false;
        if (onResize) deno.removeSignalListener("SIGWINCH", onResize);
        void reader?.cancel().catch(() => {});
        write(GIVE_BACK);
        deno.stdin.setRaw(false);
      },
    };
  }
  const proc = g.process;
  if (!proc.stdin?.isTTY || !proc.stdout?.isTTY) return undefined;
  let input: ((data: string) => void) | undefined;
  let resize: (() => void) | undefined;
  return {
    size: () => ({ columns: proc.stdout.columns ?? 80, rows: proc.stdout.rows ?? 24 }),
    write: (text) => void proc.stdout.write(text),
    start(handlers) {
      input = handlers.onInput;
      resize = handlers.onResize;
      proc.stdin.setRawMode(true);
      proc.stdin.setEncoding("utf8");
      proc.stdin.on("data", input);
      proc.stdin.resume();
      proc.stdout.on("resize", resize);
      proc.stdout.write(TAKE_OVER);
    },
    stop() {
      if (!input) return;
      proc.stdin.off("data", input);
      proc.stdout.off("resize", resize);
      input = resize = undefined;
      proc.stdout.write(GIVE_BACK);
      proc.stdin.setRawMode(false);
      proc.stdin.pause();
    },
  };
}

/** Connects to a Redis URL's host:port and says why that failed (3 s at most), or undefined. */
function probeTcp(url: string): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  const host = hostname.replace(/^\[|\]$/g, "") || "127.0.0.1";
  const target = { host, port: Number(port || 6379) };
  return new Promise((resolve) => {
    const socket = tcpConnect(target);
    const done = (result: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(`connect ETIMEDOUT ${host}:${target.port} (no answer within 3 s)`), 3000);
    socket.once("connect", () => done(undefined));
    socket.once("error", (error: Error) => done(error.message));
  });
}

/**
 * Ends the command. After a clean run everything is closed and the process
 * ends by itself; if a stray handle (a user's open socket, say) keeps it
 * alive, say so after 5 s and go.
 *
 * @example
 * ```ts
 * finishCli(await runCli(cliHost()));
 * ```
 */
export function finishCli(code: number): void {
  const runtime = currentRuntime();
  if (code !== 0) return runtime.exit(code);
  const timer = setTimeout(() => {
    runtime.writeErr("edgekiq: something kept the process alive after shutdown; exiting");
    runtime.exit(0);
  }, 5000);
  if (runtime.key === "deno") g.Deno.unrefTimer(timer);
  else timer.unref?.();
}
