/**
 * The `edgekiq` program: `run` (a worker), `enqueue`, `stats`, `queue` and `cancel`. Everything
 * host-specific (argv, files, module loading, Redis clients) comes in through
 * a {@link CliHost}, so this file stays web-standard and tests can drive it
 * with a memory transport.
 *
 * @module
 */
import { Queue } from "../api/queue.ts";
import { Client } from "../client.ts";
import { cancelJob } from "../api/cancel_job.ts";
import { ConfigError, EdgekiqError, JobArgsError, PayloadError } from "../errors.ts";
import type { AnyJob } from "../job.ts";
import { createLogger, type Logger, type LogLevel } from "../logger.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { createWorker } from "../server/launcher.ts";
import type { Transport } from "../transport/transport.ts";
import { VERSION } from "../version.ts";
import { type CliArgs, parseArgs, SetupError, UsageError } from "./args.ts";
import {
  type CliConfig,
  environmentOf,
  parseConfig,
  parseConfigText,
  type ResolvedOptions,
  resolveOptions,
} from "./config.ts";
import { HELP } from "./help.ts";
import { explainAdapterError, explainModuleError } from "./load_error.ts";
import { sanitize } from "../sanitize.ts";
import { redact, Redactor } from "./redact.ts";
import { causes, explainRedisError, needsProbe } from "./redis_error.ts";
import { collectStats, formatStats } from "./cli_stats.ts";
import { serveDashboard, webAuth } from "./web.ts";
import { runTop, topTerminal } from "./top.ts";
import type { CliHost, TransportChoice } from "./cli_host.ts";

export type { CliHost, Listening, Terminal, TransportChoice, TransportKind } from "./cli_host.ts";

/**
 * Picks the adapter for a URL: `https://` (or `http://`) is an Upstash REST
 * endpoint; `redis-cluster://` (`rediss-cluster://` for TLS) is a Redis
 * Cluster reached through that seed node (the others are discovered);
 * `redis://`/`rediss://` is TCP, through Bun's built-in client under Bun
 * and ioredis elsewhere.
 *
 * @example
 * ```ts
 * chooseTransport("redis://127.0.0.1:6379", "node", () => undefined); // { kind: "ioredis", url }
 * chooseTransport("redis-cluster://10.0.0.1:6379", "bun", () => undefined); // { kind: "cluster", url }
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
        `${source} ${redact(url)} is an ${protocol}// URL, which edgekiq reads as an Upstash REST endpoint ` +
          "(the upstash transport, @upstash/redis), which needs a token: set UPSTASH_REDIS_REST_TOKEN or " +
          "EDGEKIQ_REDIS_TOKEN. For a Redis server over TCP, use redis://host:port (rediss:// for TLS)",
      );
    }
    return { kind: "upstash", url, token };
  }
  if (protocol === "redis-cluster:" || protocol === "rediss-cluster:") return { kind: "cluster", url };
  return { kind: runtimeKey === "bun" ? "bun" : "ioredis", url };
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
  // Every line goes out through the redactor, which learns each Redis URL
  // (even a malformed one) before anything can print it.
  const redactor = new Redactor();
  for (const url of [env("REDIS_URL"), env("UPSTASH_REDIS_REST_URL"), ...flagValues(host.argv, "--redis-url")]) {
    redactor.add(url);
  }
  for (const secret of [env("EDGEKIQ_WEB_PASSWORD"), ...flagValues(host.argv, "--password")]) {
    redactor.addSecret(secret);
  }
  const out = (line: string) => host.out(redactor.scrub(line));
  const err = (line: string) => host.err(redactor.scrub(line));
  const log = (line: string, level: LogLevel) => {
    if (host.log) host.log(redactor.scrub(line), level);
    else if (level === "warn" || level === "error") err(line);
    else out(line);
  };
  let verbose = false;
  let transport: Transport | undefined;
  try {
    const args = parseArgs(host.argv);
    verbose = args.verbose;
    if (args.command === "help") {
      out(HELP);
      return 0;
    }
    if (args.command === "version") {
      out(`edgekiq ${VERSION} (${host.runtimeVersion})`);
      return 0;
    }
    const file = args.config ? await loadConfigFile(host, args.config) : undefined;
    let module: Record<string, unknown> | undefined;
    let moduleConfig: CliConfig | undefined;
    const requirePath = args.require ?? file?.environments?.[environmentOf(args, env)]?.require ?? file?.require;
    const label = args.require ? "-r/--require" : "config.require";
    if (args.command === "run" && !requirePath) {
      throw new UsageError("no jobs to run: pass -r/--require <file> (a module exporting defineJob() results)");
    }
    if (requirePath && (args.command === "run" || args.command === "enqueue")) {
      module = await loadJobsModule(host, requirePath, label);
      if (module.config !== undefined) {
        moduleConfig = parseConfig(module.config, `${requirePath} (export config)`, "module");
      }
    }
    const options = resolveOptions(args, file, moduleConfig, env, baseName(host.cwd()));
    redactor.add(options.redisUrl);
    const jobs = module ? Object.values(module).filter(isJob) : [];
    if (module && jobs.length === 0) {
      throw new UsageError(`${label} ${sanitize(requirePath!)} exports no jobs: export the results of defineJob()`);
    }
    const job = args.command === "enqueue" && module ? jobNamed(jobs, args.className!, requirePath!) : undefined;
    // Refusals that need no Redis come first: an unguarded dashboard, a top with no terminal.
    if (args.command === "web") webAuth(args, env);
    if (args.command === "top") topTerminal(host);
    const choice = chooseTransport(options.redisUrl, host.runtime.key, env, options.redisUrlSource);
    transport = await connect(host, choice);
    await ping(host, transport, options);
    const session: Session = { host, out, log, transport, args, options };
    switch (args.command) {
      case "enqueue":
        return await enqueue(session, job);
      case "stats":
        return await stats(session);
      case "queue":
        return await queueCommand(session);
      case "cancel":
        return await cancelCommand(session);
      case "web":
        return await serveDashboard({
          host,
          out,
          transport,
          args,
          redis: redact(options.redisUrl),
          prefix: options.prefix,
          shards: options.shards,
          timeFormat: options.timeFormat,
          logger: cliLogger(session),
        });
      case "top":
        return await runTop({ host, transport, args, options });
      default:
        return await run(session, { module: module!, jobs });
    }
  } catch (error) {
    if (error instanceof SetupError) {
      err(`edgekiq: ${error.message}`);
      if (verbose && error.cause instanceof Error && error.cause.stack) {
        for (const line of error.cause.stack.split("\n")) err(sanitize(line, 500));
      }
      return error.exitCode;
    }
    if (error instanceof UsageError) {
      err(`edgekiq: ${error.message}`);
      err("Run 'edgekiq --help' for usage.");
      return error.exitCode;
    }
    // Bad options for the worker, or `enqueue` arguments the job's schema or
    // the payload rules refuse: the user's input, so exit 2 as well.
    if (error instanceof ConfigError || error instanceof JobArgsError || error instanceof PayloadError) {
      err(`edgekiq: ${error.message}`);
      return 2;
    }
    // edgekiq's own errors explain themselves (-v adds what caused them);
    // anything else gets its stack.
    const text = error instanceof EdgekiqError
      ? error.message
      : error instanceof Error
      ? error.stack ?? error.message
      : String(error);
    err(`edgekiq: ${text}`);
    if (verbose && error instanceof EdgekiqError) {
      for (const cause of causes(error).slice(1)) {
        const code = (cause as { code?: unknown }).code;
        err(
          `  caused by ${sanitize(cause.name, 60)}: ${sanitize(cause.message, 300)}${
            typeof code === "string" ? ` (${sanitize(code, 40)})` : ""
          }`,
        );
      }
    }
    return 1;
  } finally {
    if (transport) await bounded(transport.close(), 3000);
  }
}

/** The values given to a flag (`--flag value` or `--flag=value`), before parsing: for the redactor. */
function flagValues(argv: readonly string[], flag: string): string[] {
  const values: string[] = [];
  argv.forEach((token, i) => {
    if (token === flag && i + 1 < argv.length) values.push(argv[i + 1]);
    else if (token.startsWith(`${flag}=`)) values.push(token.slice(flag.length + 1));
  });
  return values;
}

async function loadJobsModule(host: CliHost, path: string, label: string): Promise<Record<string, unknown>> {
  if (!(await host.exists(path))) throw new UsageError(`${label} ${sanitize(path)}: no such file`);
  try {
    return await host.importModule(path);
  } catch (error) {
    throw explainModuleError(error, {
      label,
      path,
      runtime: host.runtime.key,
      viaBunx: host.runtime.env("npm_lifecycle_event") === "bunx",
    });
  }
}

/** The job `enqueue -r` pushes: its definition gives the queue, retry and args schema. */
function jobNamed(jobs: AnyJob[], className: string, requirePath: string): AnyJob {
  const job = jobs.find((j) => j.name === className);
  if (job) return job;
  throw new UsageError(
    `${sanitize(requirePath)} exports no job named '${sanitize(className, 100)}' (it exports ${
      jobs.map((j) => j.name).join(", ")
    }); leave out -r to push a class name as is`,
  );
}

/** Opens the transport, explaining a Redis client package that is not installed. */
async function connect(host: CliHost, choice: TransportChoice): Promise<Transport> {
  try {
    return await host.connect(choice);
  } catch (error) {
    throw explainAdapterError(error, { what: redact(choice.url), runtime: host.runtime.key }) ?? error;
  }
}

/** One command's context: the host, its (redacting) writers, Redis, and the parsed options. */
interface Session {
  host: CliHost;
  out(line: string): void;
  log(line: string, level: LogLevel): void;
  transport: Transport;
  args: CliArgs;
  options: ResolvedOptions;
}

/**
 * Reads `-C`: Sidekiq's `sidekiq.yml` shape for `.yml`/`.yaml` (its parser
 * loaded only then), edgekiq's JSON otherwise.
 */
async function loadConfigFile(host: CliHost, path: string): Promise<CliConfig> {
  if (!(await host.exists(path))) throw new UsageError(`-C/--config ${sanitize(path)}: no such file`);
  const text = await host.readText(path);
  if (/\.ya?ml$/i.test(path)) return (await import("./sidekiq_yml.ts")).parseSidekiqYaml(text, path);
  return parseConfigText(text, path);
}

/** Waits for `promise` at most `ms` (errors ignored), so a stuck close never keeps the CLI alive. */
async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise.catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * Fails fast when Redis cannot be used, saying why: refused credentials, or
 * the failure behind "cannot reach" (with the URL's source named).
 */
async function ping(host: CliHost, transport: Transport, options: ResolvedOptions): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      transport.call("PING"),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("no answer within 10 s")), 10_000))),
    ]);
  } catch (error) {
    let probe: string | undefined;
    if (host.probe && needsProbe(error) && /^rediss?:/i.test(options.redisUrl)) {
      probe = await host.probe(options.redisUrl).catch(() => undefined);
    }
    throw explainRedisError(error, { url: redact(options.redisUrl), source: options.redisUrlSource, probe });
  } finally {
    clearTimeout(timer);
  }
}

async function enqueue({ out, transport, args, options }: Session, job: AnyJob | undefined): Promise<number> {
  const client = new Client({
    transport,
    prefix: options.prefix,
    shards: options.shards,
    timeFormat: options.timeFormat,
    middleware: options.clientMiddleware,
  });
  const pushOptions = { queue: args.queues[0], in: args.in };
  const jid = job
    ? await client.push(job, args.args ?? [], pushOptions)
    : await client.push(args.className!, args.args ?? [], pushOptions);
  out(jid ?? "(stopped by client middleware)");
  return 0;
}

/** A client for the admin commands: the transport with the options' prefix, shards and time format. */
function adminClient({ transport, options }: Pick<Session, "transport" | "options">): Client {
  return new Client({ transport, prefix: options.prefix, shards: options.shards, timeFormat: options.timeFormat });
}

/** `edgekiq queue pause|resume <name>`: Sidekiq Pro's `pause!`/`unpause!`. */
async function queueCommand(session: Session): Promise<number> {
  const { out, args } = session;
  const queue = new Queue(adminClient(session), args.queueName!);
  const name = `'${sanitize(queue.name, 100)}'`;
  if (args.queueAction === "pause") {
    out(
      (await queue.pause())
        ? `paused queue ${name}: every edgekiq process stops taking its jobs at its next fetch; running jobs finish`
        : `queue ${name} was already paused`,
    );
  } else {
    out(
      (await queue.resume())
        ? `resumed queue ${name}: every edgekiq process takes its jobs again at its next fetch`
        : `queue ${name} was not paused`,
    );
  }
  return 0;
}

/** `edgekiq cancel <jid>`: the job stops wherever it runs, and its waiting copies are skipped. */
async function cancelCommand(session: Session): Promise<number> {
  const { out, args } = session;
  const jid = sanitize(args.jid!, 100);
  const at = await cancelJob(adminClient(session), args.jid!);
  out(
    `cancelled job ${jid} (first cancelled at ${new Date(at * 1000).toISOString()}): ` +
      "a worker with jobCancellation() stops it within one heartbeat and skips its waiting copies; " +
      "an iterable job stops at its next state flush",
  );
  return 0;
}

async function stats(session: Session): Promise<number> {
  const { out, args } = session;
  const result = await collectStats(adminClient(session));
  out(args.json ? JSON.stringify(result) : formatStats(result));
  return 0;
}

async function run(
  { host, log, transport, options }: Session,
  { module, jobs }: { module: Record<string, unknown>; jobs: AnyJob[] },
): Promise<number> {
  const logger = cliLogger({ host, log, options });
  const worker = createWorker({
    transport,
    jobs: module,
    capsules: { default: { queues: options.queues, concurrency: options.concurrency }, ...options.capsules },
    timeout: options.timeout,
    tag: options.tag,
    labels: options.labels,
    prefix: options.prefix,
    shards: options.shards,
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

/** Log lines as the flags and config ask: JSON unless standard output is a terminal, debug with -v. */
function cliLogger({ host, log, options }: Pick<Session, "host" | "log" | "options">): Logger {
  return createLogger({
    json: options.json ?? !host.stdoutIsTTY,
    level: options.verbose ? "debug" : "info",
    write: log,
  });
}

function baseName(path: string): string {
  return path.replace(/[\\/]+$/, "").split(/[\\/]/).pop() || "edgekiq";
}
