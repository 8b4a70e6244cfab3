/**
 * The `edgekiq` program: `run` (a worker), `enqueue` and `stats`. Everything
 * host-specific (argv, files, module loading, Redis clients) comes in through
 * a {@link CliHost}, so this file stays web-standard and tests can drive it
 * with a memory transport.
 *
 * @module
 */
import { Client } from "../client.ts";
import { ConfigError, EdgekiqError } from "../errors.ts";
import type { AnyJob } from "../job.ts";
import { createLogger, type Logger, type LogLevel } from "../logger.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { createWorker } from "../server/launcher.ts";
import type { Transport } from "../transport/transport.ts";
import { VERSION } from "../version.ts";
import { type CliArgs, HELP, parseArgs, UsageError } from "./args.ts";
import {
  type CliConfig,
  environmentOf,
  parseConfig,
  parseConfigText,
  type ResolvedOptions,
  resolveOptions,
} from "./config.ts";
import { collectStats, formatStats } from "./stats.ts";

/** The Redis client families the CLI can open. */
export type TransportKind = "ioredis" | "bun" | "upstash";

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
}

/**
 * Picks the adapter for a URL: `https://` (or `http://`) is an Upstash REST
 * endpoint; `redis://`/`rediss://` is TCP, through Bun's built-in client
 * under Bun and ioredis elsewhere.
 *
 * @example
 * ```ts
 * chooseTransport("redis://127.0.0.1:6379", "node", () => undefined); // { kind: "ioredis", url }
 * chooseTransport("https://eu1.upstash.io", "deno", (n) => n === "UPSTASH_REDIS_REST_TOKEN" ? "t" : undefined);
 * // { kind: "upstash", url, token: "t" }
 * ```
 */
export function chooseTransport(
  url: string,
  runtimeKey: Runtime["key"],
  env: (name: string) => string | undefined,
  source = "--redis-url",
): TransportChoice {
  const protocol = new URL(url).protocol;
  if (protocol === "https:" || protocol === "http:") {
    const token = env("UPSTASH_REDIS_REST_TOKEN") ?? env("EDGEKIQ_REDIS_TOKEN");
    if (!token) {
      throw new UsageError(
        `${source} ${
          redact(url)
        } is an Upstash REST URL, which needs a token: set UPSTASH_REDIS_REST_TOKEN or EDGEKIQ_REDIS_TOKEN`,
      );
    }
    return { kind: "upstash", url, token };
  }
  return { kind: runtimeKey === "bun" ? "bun" : "ioredis", url };
}

/**
 * Hides a URL's password: `redis://:secret@host` -> `redis://:***@host`.
 *
 * @example
 * ```ts
 * redact("redis://user:pw@localhost:6379/0"); // "redis://user:***@localhost:6379/0"
 * ```
 */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url;
  }
}

function isJob(value: unknown): value is AnyJob {
  return typeof value === "object" && value !== null && typeof (value as AnyJob).name === "string" &&
    typeof (value as AnyJob).perform === "function" && typeof (value as AnyJob).performAsync === "function";
}

/**
 * Runs the CLI and resolves to the exit code. A `run` resolves once the
 * worker has stopped (INT/TERM) and its connections are closed, so the host
 * process can end by itself.
 *
 * @example
 * ```ts
 * const code = await runCli(host); // host.argv = ["enqueue", "HardJob", "--args", "[1]"]
 * ```
 */
export async function runCli(host: CliHost): Promise<number> {
  const env = (name: string) => host.runtime.env(name);
  let transport: Transport | undefined;
  try {
    const args = parseArgs(host.argv);
    if (args.command === "help") {
      host.out(HELP);
      return 0;
    }
    if (args.command === "version") {
      host.out(`edgekiq ${VERSION} (${host.runtimeVersion})`);
      return 0;
    }
    const file = args.config ? await loadConfigFile(host, args.config) : undefined;
    let module: Record<string, unknown> | undefined;
    let moduleConfig: CliConfig | undefined;
    const requirePath = args.require ?? file?.environments?.[environmentOf(args, env)]?.require ?? file?.require;
    if (args.command === "run") {
      if (!requirePath) {
        throw new UsageError("no jobs to run: pass -r/--require <file> (a module exporting defineJob() results)");
      }
      if (!(await host.exists(requirePath))) throw new UsageError(`-r/--require ${requirePath}: no such file`);
      module = await host.importModule(requirePath);
      if (module.config !== undefined) {
        moduleConfig = parseConfig(module.config, `${requirePath} (export config)`, "module");
      }
    }
    const options = resolveOptions(args, file, moduleConfig, env, baseName(host.cwd()));
    const choice = chooseTransport(options.redisUrl, host.runtime.key, env, options.redisUrlSource);
    transport = await host.connect(choice);
    await ping(transport, options);
    switch (args.command) {
      case "enqueue":
        return await enqueue(host, transport, args, options);
      case "stats":
        return await stats(host, transport, args, options);
      default:
        return await run(host, transport, module!, requirePath!, options);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      host.err(`edgekiq: ${error.message}`);
      host.err("Run 'edgekiq --help' for usage.");
      return error.exitCode;
    }
    if (error instanceof ConfigError) {
      host.err(`edgekiq: ${error.message}`);
      return 2;
    }
    // edgekiq's own errors explain themselves; anything else gets its stack.
    const text = error instanceof EdgekiqError
      ? error.message
      : error instanceof Error
      ? error.stack ?? error.message
      : String(error);
    host.err(`edgekiq: ${text}`);
    return 1;
  } finally {
    if (transport) await bounded(transport.close(), 3000);
  }
}

async function loadConfigFile(host: CliHost, path: string): Promise<CliConfig> {
  if (!(await host.exists(path))) throw new UsageError(`-C/--config ${path}: no such file`);
  return parseConfigText(await host.readText(path), path);
}

/** Waits for `promise` at most `ms` (errors ignored), so a stuck close never keeps the CLI alive. */
async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise.catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** Fails fast, with the URL's source named, when Redis cannot be reached. */
async function ping(transport: Transport, options: ResolvedOptions): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      transport.call("PING"),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("no answer within 10 s")), 10_000))),
    ]);
  } catch (error) {
    throw new EdgekiqError(
      `cannot reach Redis at ${redact(options.redisUrl)} (from ${options.redisUrlSource}): ${
        (error as Error)?.message ?? error
      }`,
    );
  } finally {
    clearTimeout(timer);
  }
}

async function enqueue(host: CliHost, transport: Transport, args: CliArgs, options: ResolvedOptions): Promise<number> {
  const client = new Client({ transport, prefix: options.prefix, timeFormat: options.timeFormat });
  const jid = await client.push(args.className!, args.args ?? [], { queue: args.queues[0], in: args.in });
  host.out(jid ?? "(stopped by client middleware)");
  return 0;
}

async function stats(host: CliHost, transport: Transport, args: CliArgs, options: ResolvedOptions): Promise<number> {
  const result = await collectStats(new Client({ transport, prefix: options.prefix, timeFormat: options.timeFormat }));
  host.out(args.json ? JSON.stringify(result) : formatStats(result));
  return 0;
}

async function run(
  host: CliHost,
  transport: Transport,
  module: Record<string, unknown>,
  requirePath: string,
  options: ResolvedOptions,
): Promise<number> {
  const jobs = Object.values(module).filter(isJob);
  if (jobs.length === 0) {
    throw new UsageError(`-r/--require ${requirePath} exports no jobs: export the results of defineJob()`);
  }
  const logger: Logger = createLogger({
    json: options.json ?? !host.stdoutIsTTY,
    level: options.verbose ? "debug" : "info",
    write: host.log ?? ((line, level) => (level === "warn" || level === "error" ? host.err(line) : host.out(line))),
  });
  const worker = createWorker({
    transport,
    jobs: module,
    capsules: { default: { queues: options.queues, concurrency: options.concurrency }, ...options.capsules },
    timeout: options.timeout,
    tag: options.tag,
    labels: options.labels,
    prefix: options.prefix,
    fetch: options.fetch,
    timeFormat: options.timeFormat,
    middleware: options.middleware,
    clientMiddleware: options.clientMiddleware,
    deathHandlers: options.deathHandlers,
    onError: options.onError,
    logger,
    runtime: host.runtime,
  });
  logger.info(`edgekiq ${VERSION} starting`, {
    runtime: host.runtimeVersion,
    transport: transport.kind,
    redis: redact(options.redisUrl),
    queues: options.queues.join(" "),
    concurrency: options.concurrency,
    ...(Object.keys(options.capsules).length ? { capsules: Object.keys(options.capsules).join(",") } : {}),
    environment: options.environment,
    jobs: jobs.map((j) => j.name).join(","),
  });
  await worker.run();
  await worker.stopped;
  return 0;
}

function baseName(path: string): string {
  return path.replace(/[\\/]+$/, "").split(/[\\/]/).pop() || "edgekiq";
}
