/**
 * What the CLI needs from its host runtime ({@link CliHost}): argv, files,
 * module loading, Redis clients, and for `web` and `top` an HTTP server and
 * a terminal. `src/cli/host.ts` implements it for Node, Bun and Deno; tests
 * hand in fakes. Types only, so the program stays web-standard.
 *
 * @module
 */
import type { LogLevel } from "../logger.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { Transport } from "../transport/transport.ts";

/** The Redis client families the CLI can open. */
export type TransportKind = "ioredis" | "bun" | "upstash" | "cluster";

/** How to reach Redis: which adapter, with what. */
export interface TransportChoice {
  kind: TransportKind;
  url: string;
  /** The REST token, for `upstash`. */
  token?: string;
}

/** What the CLI needs from its host runtime. */
export interface CliHost {
  /** Arguments after the script path. */
  readonly argv: readonly string[];
  readonly runtime: Runtime;
  /** e.g. `"node 22.3.0"`. */
  readonly runtimeVersion: string;
  /** Whether standard output is a terminal (plain logs) or not (JSON logs). */
  readonly stdoutIsTTY: boolean;
  /** The working directory (its base name is the default tag). */
  cwd(): string;
  /** Writes a line to standard output. */
  out(line: string): void;
  /** Writes a line to standard error. */
  err(line: string): void;
  /** Writes a worker log line (default: info and debug to stdout, warnings and errors to stderr). */
  log?(line: string, level: LogLevel): void;
  /** Whether a file exists (relative paths are from the working directory). */
  exists(path: string): Promise<boolean>;
  /** Reads a text file. */
  readText(path: string): Promise<string>;
  /** Imports a module by path. */
  importModule(path: string): Promise<Record<string, unknown>>;
  /** Opens a transport. */
  connect(choice: TransportChoice): Promise<Transport>;
  /**
   * Opens a plain TCP connection to a `redis://` URL's host and port and
   * says why it failed ("connect ECONNREFUSED 127.0.0.1:6480"), or undefined
   * if it connected: for clients whose errors do not say (Bun's).
   */
  probe?(url: string): Promise<string | undefined>;
  /**
   * Serves `fetch` over HTTP on `hostname:port` (port 0: any free one), with
   * the runtime's own server (Bun.serve, Deno.serve, or @hono/node-server on
   * Node). Rejects with a message saying why it could not listen.
   */
  serve?(
    fetch: (request: Request) => Response | Promise<Response>,
    options: { hostname: string; port: number },
  ): Promise<Listening>;
  /** The controlling terminal, when standard input and output are one (for `top`). */
  terminal?(): Terminal | undefined;
}

/** An HTTP server that is listening. */
export interface Listening {
  /** The port it listens on (the one chosen, for port 0). */
  readonly port: number;
  /** Stops listening and closes its connections. */
  close(): Promise<void>;
}

/**
 * A terminal in raw mode on the alternate screen, for a full-screen view.
 * `start()` takes it over; `stop()` gives it back as it was, and is safe to
 * call twice (the exit path and a signal may both call it).
 */
export interface Terminal {
  /** Columns and rows now. */
  size(): { columns: number; rows: number };
  /** Writes text as is (escape sequences included). */
  write(text: string): void;
  /** Raw mode on, alternate screen, cursor hidden; `onInput` gets each chunk typed, `onResize` each resize. */
  start(handlers: { onInput(data: string): void; onResize(): void }): void;
  /** Everything `start` changed, undone. */
  stop(): void;
}
