/**
 * Command-line parsing for the `edgekiq` binary: Sidekiq's flags, plus the
 * `enqueue` and `stats` subcommands. Pure: no I/O, so every rule is
 * unit-testable without spawning a child.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { sanitize } from "../sanitize.ts";

/**
 * Upper bounds for numeric flags and config keys. Beyond them a worker would
 * run out of memory building its processors or weighted queue list, or a
 * timer would overflow (timers hold at most 2^31-1 ms, about 24.8 days, and
 * fire at once past that).
 */
export const LIMITS = {
  /** `-c/--concurrency`, `concurrency`, a capsule's `concurrency`. */
  concurrency: 10_000,
  /** A capsule's `prefetch`. */
  prefetch: 10_000,
  /** A queue's weight (`-q name,weight`): weights expand to a list of that length. */
  weight: 1_000,
  /** `-t/--timeout`, seconds (a day). */
  timeout: 86_400,
  /** `enqueue --in`, seconds (ten years). */
  in: 315_360_000,
  /** `top --interval`, seconds between refreshes (a minute). */
  interval: 60,
  /** `--shards`, `shards`: a sharded namespace's shard count (see docs/cluster.md). */
  shards: 256,
} as const;

/** What the command line asks for. */
export type CliCommand = "run" | "enqueue" | "stats" | "top" | "web" | "queue" | "cancel" | "help" | "version";

/** What `edgekiq queue` does to a queue. */
export type QueueAction = "pause" | "resume";

/**
 * A bad flag, a bad config file or a missing job module: the user's mistake,
 * so the CLI prints the message (no stack) and exits with code 2.
 *
 * @example
 * ```ts
 * try { parseArgs(["-c", "zero"]); } catch (e) {
 *   if (e instanceof UsageError) console.error(e.message); // -c/--concurrency must be ...
 * }
 * ```
 */
export class UsageError extends ConfigError {
  /** The process exit code for usage errors. */
  readonly exitCode = 2;
}

/**
 * The command line was fine but what it points at cannot run: a jobs module
 * that does not load, a Redis client package that is not installed. Exit
 * code 2 like a {@link UsageError}, printed as one line without the `--help`
 * hint (the message says what to do).
 *
 * @example
 * ```ts
 * throw new SetupError("--redis-url redis://h:6379 needs the ioredis package, which is not installed: npm i ioredis");
 * ```
 */
export class SetupError extends UsageError {}

/** The parsed command line. Fields left undefined were not given. */
export interface CliArgs {
  command: CliCommand;
  /** `-r/--require`: the module exporting the jobs. */
  require?: string;
  /** `-q/--queue`, in order (each `name` or `name,weight`). */
  queues: string[];
  /** `-c/--concurrency`. */
  concurrency?: number;
  /** `-t/--timeout`, seconds. */
  timeout?: number;
  /** `-g/--tag`. */
  tag?: string;
  /** `-C/--config`: a JSON config file. */
  config?: string;
  /** `-e/--environment`: picks `environments.<name>` from the config file. */
  environment?: string;
  /** `--redis-url`. */
  redisUrl?: string;
  /** `--json` (true) / `--no-json` (false); undefined: JSON unless stdout is a terminal. */
  json?: boolean;
  /** `-v/--verbose`: debug logging. */
  verbose: boolean;
  /** `--shards`: the namespace's shard count (a sharded namespace on a cluster). */
  shards?: number;
  /** `enqueue <Class>`: the wire class name. */
  className?: string;
  /** `enqueue --args`: the job's arguments (a JSON array). */
  args?: unknown[];
  /** `enqueue --in`: seconds from now. */
  in?: number;
  /** `web --port` (0: any free port). */
  port?: number;
  /** `web --host`: the address to listen on. */
  host?: string;
  /** `web --user`: the basic-auth user name. */
  user?: string;
  /** `web --password`: the basic-auth password (EDGEKIQ_WEB_PASSWORD keeps it out of `ps`). */
  password?: string;
  /** `web --no-auth`: serve the dashboard open (loopback only). */
  noAuth?: boolean;
  /** `top --interval`: seconds between refreshes. */
  interval?: number;
  /** `queue pause|resume <name>`: what to do. */
  queueAction?: QueueAction;
  /** `queue pause|resume <name>`: the queue. */
  queueName?: string;
  /** `cancel <jid>`: the job. */
  jid?: string;
}

interface FlagSpec {
  long: string;
  short?: string;
  /** Takes a value. */
  value: boolean;
  /** Commands it is valid with; every command when absent. */
  only?: readonly CliCommand[];
}

const FLAGS: readonly FlagSpec[] = [
  { long: "require", short: "r", value: true, only: ["run", "enqueue"] },
  { long: "queue", short: "q", value: true, only: ["run", "enqueue"] },
  { long: "concurrency", short: "c", value: true, only: ["run"] },
  { long: "timeout", short: "t", value: true, only: ["run"] },
  { long: "tag", short: "g", value: true, only: ["run"] },
  { long: "config", short: "C", value: true },
  { long: "environment", short: "e", value: true },
  { long: "redis-url", value: true },
  { long: "json", value: false },
  { long: "no-json", value: false },
  { long: "verbose", short: "v", value: false },
  { long: "shards", value: true },
  { long: "help", short: "h", value: false },
  { long: "version", short: "V", value: false },
  { long: "args", value: true, only: ["enqueue"] },
  { long: "in", value: true, only: ["enqueue"] },
  { long: "port", short: "p", value: true, only: ["web"] },
  { long: "host", value: true, only: ["web"] },
  { long: "user", value: true, only: ["web"] },
  { long: "password", value: true, only: ["web"] },
  { long: "no-auth", value: false, only: ["web"] },
  { long: "interval", short: "i", value: true, only: ["top"] },
];

const COMMANDS: readonly CliCommand[] = [
  "run",
  "enqueue",
  "stats",
  "top",
  "web",
  "queue",
  "cancel",
  "help",
  "version",
];

/**
 * Parses `argv` (without the runtime and script paths). Throws
 * {@link UsageError} naming the offending flag.
 *
 * @example
 * ```ts
 * parseArgs(["-r", "jobs.ts", "-q", "critical,3", "-q", "default", "-c", "5"]);
 * // { command: "run", require: "jobs.ts", queues: ["critical,3", "default"], concurrency: 5, ... }
 * parseArgs(["enqueue", "HardJob", "--args", '["bob", 5]']);
 * // { command: "enqueue", className: "HardJob", args: ["bob", 5], ... }
 * ```
 */
export function parseArgs(argv: readonly string[]): CliArgs {
  const given: Array<{ spec: FlagSpec; name: string; value?: string }> = [];
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i];
    if (token === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      positionals.push(token);
      continue;
    }
    let spec: FlagSpec | undefined;
    let name: string;
    let inline: string | undefined;
    if (token.startsWith("--")) {
      const eq = token.indexOf("=");
      const long = eq === -1 ? token.slice(2) : token.slice(2, eq);
      if (eq !== -1) inline = token.slice(eq + 1);
      spec = FLAGS.find((f) => f.long === long);
      name = `--${long}`;
    } else {
      const short = token[1];
      spec = FLAGS.find((f) => f.short === short);
      name = `-${short}`;
      if (token.length > 2) inline = token[2] === "=" ? token.slice(3) : token.slice(2);
    }
    if (!spec) throw new UsageError(`unknown flag '${sanitize(name, 60)}'`);
    const label = flagLabel(spec);
    if (!spec.value) {
      if (inline !== undefined) throw new UsageError(`${label} takes no value: got '${sanitize(inline, 40)}'`);
      given.push({ spec, name });
      continue;
    }
    let value = inline;
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`${label} needs a value`);
      value = argv[++i];
    }
    given.push({ spec, name, value });
  }

  let command: CliCommand = "run";
  const explicit = positionals.length > 0 && (COMMANDS as readonly string[]).includes(positionals[0]);
  if (explicit) command = positionals.shift() as CliCommand;
  if (given.some((g) => g.spec.long === "help")) command = "help";
  else if (given.some((g) => g.spec.long === "version")) command = "version";

  const out: CliArgs = { command, queues: [], verbose: false };
  if (command === "help" || command === "version") return out;

  if (command === "enqueue") {
    if (positionals.length === 0) {
      throw new UsageError("enqueue needs a job class name: edgekiq enqueue <Class> --args '[...]'");
    }
    out.className = positionals.shift();
  }
  if (command === "queue") {
    const [action, name] = positionals.splice(0, 2);
    if (action !== "pause" && action !== "resume") {
      throw new UsageError(
        `queue needs pause or resume: edgekiq queue pause <name>${
          action === undefined ? "" : ` (got '${sanitize(action, 40)}')`
        }`,
      );
    }
    if (name === undefined || !/^[^\s,]+$/.test(name)) {
      throw new UsageError(
        `queue ${action} needs a queue name without spaces or commas${
          name === undefined ? "" : `: got '${sanitize(name, 80)}'`
        }`,
      );
    }
    out.queueAction = action;
    out.queueName = name;
  }
  if (command === "cancel") {
    const jid = positionals.shift();
    if (jid === undefined || !/^[\x21-\x7e]{1,100}$/.test(jid)) {
      throw new UsageError(
        `cancel needs a job's jid: edgekiq cancel <jid>${jid === undefined ? "" : ` (got '${sanitize(jid, 40)}')`}`,
      );
    }
    out.jid = jid;
  }
  if (positionals.length) {
    throw new UsageError(
      !explicit
        ? `unknown command '${sanitize(positionals[0], 60)}' (commands: run, enqueue, stats, top, web, queue, cancel)`
        : `unexpected argument '${sanitize(positionals[0], 60)}'`,
    );
  }

  const seen = new Set<string>();
  for (const { spec, value } of given) {
    const label = flagLabel(spec);
    if (spec.only && !spec.only.includes(command)) {
      throw new UsageError(
        `${label} is not valid with '${command}' (only with ${spec.only.map((c) => `'${c}'`).join(", ")})`,
      );
    }
    if (spec.long !== "queue" && seen.has(spec.long)) throw new UsageError(`${label} given more than once`);
    seen.add(spec.long);
    const v = value as string;
    switch (spec.long) {
      case "require":
        out.require = nonEmpty(label, v);
        break;
      case "queue":
        out.queues.push(queueSpec(label, v));
        break;
      case "concurrency":
        out.concurrency = wholeNumber(label, v, { min: 1, max: LIMITS.concurrency });
        break;
      case "shards":
        out.shards = wholeNumber(label, v, { min: 1, max: LIMITS.shards });
        break;
      case "timeout":
        out.timeout = positiveNumber(label, v, { max: LIMITS.timeout });
        break;
      case "tag":
        out.tag = v;
        break;
      case "config":
        out.config = nonEmpty(label, v);
        break;
      case "environment":
        out.environment = nonEmpty(label, v);
        break;
      case "redis-url":
        out.redisUrl = checkRedisUrl(label, v);
        break;
      case "json":
      case "no-json":
        if (out.json !== undefined) throw new UsageError("--json and --no-json given together");
        out.json = spec.long === "json";
        break;
      case "verbose":
        out.verbose = true;
        break;
      case "args":
        out.args = jsonArray(label, v);
        break;
      case "in": {
        const n = Number(v);
        if (v.trim() === "" || !Number.isFinite(n) || n < 0 || n > LIMITS.in) {
          throw new UsageError(
            `${label} must be a number of seconds from 0 to ${LIMITS.in} (ten years): got '${sanitize(v, 40)}'`,
          );
        }
        out.in = n;
        break;
      }
      case "port":
        out.port = wholeNumber(label, v, { min: 0, max: 65_535 });
        break;
      case "host":
        out.host = nonEmpty(label, v);
        break;
      case "user":
        out.user = nonEmpty(label, v);
        break;
      case "password":
        out.password = nonEmpty(label, v);
        break;
      case "no-auth":
        out.noAuth = true;
        break;
      case "interval": {
        const n = Number(v);
        if (v.trim() === "" || !Number.isFinite(n) || n < 0.2 || n > LIMITS.interval) {
          throw new UsageError(
            `${label} must be a number of seconds from 0.2 to ${LIMITS.interval}: got '${sanitize(v, 40)}'`,
          );
        }
        out.interval = n;
        break;
      }
    }
  }
  if (command === "enqueue" && out.queues.length > 1) throw new UsageError("enqueue takes one -q/--queue");
  if (command === "enqueue" && out.queues[0]?.includes(",")) {
    throw new UsageError(
      `-q/--queue for enqueue is a queue name without a weight: got '${sanitize(out.queues[0], 80)}'`,
    );
  }
  return out;
}

function flagLabel(spec: FlagSpec): string {
  return spec.short ? `-${spec.short}/--${spec.long}` : `--${spec.long}`;
}

function nonEmpty(label: string, value: string): string {
  if (value.trim() === "") throw new UsageError(`${label} needs a non-empty value`);
  return value;
}

function wholeNumber(label: string, value: string, { min, max }: { min: number; max: number }): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`${label} must be a whole number from ${min} to ${max}: got '${sanitize(value, 40)}'`);
  }
  return n;
}

function positiveNumber(label: string, value: string, { max }: { max: number }): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0 || n > max) {
    throw new UsageError(`${label} must be a number > 0 and at most ${max}: got '${sanitize(value, 40)}'`);
  }
  return n;
}

/**
 * Checks one queue spec, `name` or `name,weight` (weight a whole number >= 0),
 * and returns it normalised (`"critical,3"`). `label` names the flag or config
 * path in the error.
 *
 * @example
 * ```ts
 * queueSpec("-q/--queue", " critical , 3 "); // "critical,3"
 * queueSpec("-q/--queue", "a b");            // throws UsageError
 * ```
 */
export function queueSpec(label: string, spec: string): string {
  const parts = spec.split(",").map((s) => s.trim());
  const [name, weight] = parts;
  if (!name || !/^[^\s,]+$/.test(name) || parts.length > 2) {
    throw new UsageError(`${label} must be "name" or "name,weight": got '${sanitize(spec, 80)}'`);
  }
  if (weight === undefined) return name;
  const w = Number(weight);
  if (weight === "" || !Number.isInteger(w) || w < 0 || w > LIMITS.weight) {
    throw new UsageError(
      `${label} weight must be a whole number from 0 to ${LIMITS.weight}: got '${sanitize(spec, 80)}'`,
    );
  }
  return `${name},${w}`;
}

/**
 * Checks a Redis URL's scheme: `redis:`/`rediss:` (TCP),
 * `redis-cluster:`/`rediss-cluster:` (a Redis Cluster, through one seed
 * node) or `https:`/`http:` (an Upstash-compatible REST endpoint). The message never repeats the
 * value: a mistyped URL may hold a password.
 *
 * @example
 * ```ts
 * checkRedisUrl("--redis-url", "redis://127.0.0.1:6379"); // returned as is
 * checkRedisUrl("--redis-url", "localhost:6379");         // throws UsageError
 * ```
 */
export function checkRedisUrl(label: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `${label} must be a URL such as redis://127.0.0.1:6379: the value given does not parse as one ` +
        "(not shown, as it may hold a password)",
    );
  }
  if (!["redis:", "rediss:", "https:", "http:", "redis-cluster:", "rediss-cluster:"].includes(url.protocol)) {
    throw new UsageError(
      `${label} must use redis://, rediss://, redis-cluster:// or https://: got a ${sanitize(url.protocol, 20)}// URL`,
    );
  }
  return value;
}

function jsonArray(label: string, value: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new UsageError(`${label} must be a JSON array: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new UsageError(`${label} must be a JSON array: got ${sanitize(value, 80)}`);
  return parsed;
}
