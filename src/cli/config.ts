/**
 * The CLI's configuration: a JSON file (`-C config.json`; Sidekiq's
 * `sidekiq.yml` is read by `sidekiq_yml.ts` into the same shape) and/or a
 * `config` export of the jobs module, validated with valibot, every problem
 * reported with its path (`config.queues[1]: ...`); then merged with the
 * flags into the options a worker is built from.
 *
 * @module
 */
import * as v from "valibot";
import type { ClientMiddleware } from "../client_middleware.ts";
import type { ServerMiddleware } from "../server_middleware.ts";
import type { DeathHandler } from "../dead_set_rules.ts";
import { sanitize } from "../sanitize.ts";
import { checkRedisUrl, type CliArgs, LIMITS, queueSpec, UsageError } from "./args.ts";

const QUEUE_MESSAGE = `must be "name", "name,weight" or ["name", weight] (weight 0-${LIMITS.weight})`;

const queueEntry = v.pipe(
  v.union([
    v.pipe(
      v.string(),
      v.regex(/^\s*[^\s,]+\s*(,\s*\d+\s*)?$/, QUEUE_MESSAGE),
      v.check((entry) => Number(entry.split(",")[1] ?? 0) <= LIMITS.weight, QUEUE_MESSAGE),
    ),
    v.tuple([
      v.pipe(v.string(), v.regex(/^[^\s,]+$/, QUEUE_MESSAGE)),
      v.pipe(
        v.number(QUEUE_MESSAGE),
        v.integer(QUEUE_MESSAGE),
        v.minValue(0, QUEUE_MESSAGE),
        v.maxValue(LIMITS.weight, QUEUE_MESSAGE),
      ),
    ], QUEUE_MESSAGE),
  ], QUEUE_MESSAGE),
  v.transform((entry) => Array.isArray(entry) ? `${entry[0]},${entry[1]}` : queueSpec("queue", entry)),
);
const queueList = v.pipe(
  v.array(queueEntry, "must be an array of queues"),
  v.minLength(1, "must name at least one queue"),
);
const wholeNumber = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message));
};
const SECONDS_MESSAGE = `must be a number of seconds > 0 and at most ${LIMITS.timeout}`;
const seconds = v.pipe(
  v.number(SECONDS_MESSAGE),
  v.gtValue(0, SECONDS_MESSAGE),
  v.maxValue(LIMITS.timeout, SECONDS_MESSAGE),
);
const text = v.string("must be a string");
const redisUrl = v.pipe(
  text,
  v.check((url) => {
    try {
      checkRedisUrl("redisUrl", url);
      return true;
    } catch {
      return false;
    }
  }, "must be a redis://, rediss:// or https:// URL"),
);

const capsule = v.strictObject({
  queues: queueList,
  concurrency: v.optional(wholeNumber(1, LIMITS.concurrency)),
  prefetch: v.optional(wholeNumber(0, LIMITS.prefetch)),
}, "must be an object { queues, concurrency?, prefetch? }");

const settings = {
  require: v.optional(text),
  queues: v.optional(queueList),
  concurrency: v.optional(wholeNumber(1, LIMITS.concurrency)),
  timeout: v.optional(seconds),
  tag: v.optional(text),
  labels: v.optional(v.array(text, "must be an array of strings")),
  redisUrl: v.optional(redisUrl),
  json: v.optional(v.boolean("must be true or false")),
  verbose: v.optional(v.boolean("must be true or false")),
  prefix: v.optional(text),
  shards: v.optional(wholeNumber(1, LIMITS.shards)),
  fetch: v.optional(v.picklist(["reliable", "basic"], 'must be "reliable" or "basic"')),
  timeFormat: v.optional(v.picklist(["seconds", "millis"], 'must be "seconds" or "millis"')),
  capsules: v.optional(v.record(v.string(), capsule, "must be an object of named capsules")),
};

const environmentSection = v.strictObject(settings, "must be an object");

/** The config file's schema. */
export const ConfigSchema = v.strictObject({
  $schema: v.optional(text),
  ...settings,
  environments: v.optional(v.record(v.string(), environmentSection, "must be an object of named sections")),
}, "must be a JSON object");

const fn = v.custom<(...args: never[]) => unknown>((x) => typeof x === "function", "must be a function");

/** The jobs module's `config` export: the file's keys, plus hooks only code can give. */
export const ModuleConfigSchema = v.strictObject({
  ...settings,
  environments: v.optional(v.record(v.string(), environmentSection, "must be an object of named sections")),
  middleware: v.optional(v.array(fn, "must be an array of functions")),
  clientMiddleware: v.optional(v.array(fn, "must be an array of functions")),
  deathHandlers: v.optional(v.array(fn, "must be an array of functions")),
  onError: v.optional(fn),
}, "must be an object");

/** A validated config (file or module). Queue entries are normalised to `"name"` / `"name,weight"`. */
export type CliConfig = v.InferOutput<typeof ModuleConfigSchema>;

/**
 * Validates a parsed config. `origin` names where it came from and starts
 * every message (`"config.json"`); paths read `config.queues[1]`. Throws a
 * {@link UsageError} listing every problem.
 *
 * @example
 * ```ts
 * parseConfig({ queues: ["critical,3", 7] }, "edgekiq.json");
 * // UsageError: invalid config edgekiq.json: config.queues[1]: must be "name", "name,weight" or ["name", weight]
 * ```
 */
export function parseConfig(input: unknown, source: string, kind: "file" | "module" = "file"): CliConfig {
  const origin = sanitize(source, 200); // a path, as the user typed it
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new UsageError(
      `invalid config ${origin}: config: must be ${kind === "file" ? "a JSON object" : "an object"}`,
    );
  }
  const result = v.safeParse(kind === "file" ? ConfigSchema : ModuleConfigSchema, input, { abortEarly: false });
  if (result.success) return result.output as CliConfig;
  const problems = result.issues.map((issue) => {
    let path = "config";
    for (const item of issue.path ?? []) {
      const key = item.key;
      path += typeof key === "number"
        ? `[${key}]`
        : /^[A-Za-z_$][\w$]*$/.test(String(key))
        ? `.${String(key)}`
        : `[${JSON.stringify(key)}]`;
    }
    const unknownKey = issue.type === "strict_object" && issue.expected === "never";
    return `${path}: ${unknownKey ? "unknown key" : issue.message}`;
  });
  throw new UsageError(`invalid config ${origin}: ${[...new Set(problems)].join("; ")}`);
}

/**
 * Parses a config file's text: JSON, then {@link parseConfig}.
 *
 * @example
 * ```ts
 * parseConfigText('{"concurrency": 5}', "edgekiq.json"); // { concurrency: 5 }
 * ```
 */
export function parseConfigText(text: string, origin: string): CliConfig {
  let json: unknown;
  const shown = sanitize(origin, 200);
  try {
    json = JSON.parse(text);
  } catch (error) {
    // JSON.parse quotes the file's text around the error, terminal escapes and all.
    throw new UsageError(`invalid config ${shown}: not JSON: ${sanitize((error as Error).message, 200)}`);
  }
  return parseConfig(json, shown, "file");
}

/** Everything a worker (or `enqueue`/`stats`) is built from, after merging. */
export interface ResolvedOptions {
  environment: string;
  require?: string;
  queues: string[];
  concurrency: number;
  timeout: number;
  tag: string;
  labels: string[];
  redisUrl: string;
  /** Where the URL came from, for error messages (`--redis-url`, `REDIS_URL`, ...). */
  redisUrlSource: string;
  json?: boolean;
  verbose: boolean;
  prefix?: string;
  /** A sharded namespace's shard count (`--shards`, `shards`); undefined: not sharded. */
  shards?: number;
  fetch?: "reliable" | "basic";
  timeFormat?: "seconds" | "millis";
  capsules: Record<string, { queues: string[]; concurrency?: number; prefetch?: number }>;
  middleware?: ServerMiddleware[];
  clientMiddleware?: ClientMiddleware[];
  deathHandlers?: DeathHandler[];
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/**
 * The environment whose config sections apply: `-e`, else `APP_ENV`, else
 * `NODE_ENV`, else `"development"`.
 *
 * @example
 * ```ts
 * environmentOf(parseArgs(["-e", "production"]), () => undefined); // "production"
 * ```
 */
export function environmentOf(args: CliArgs, env: (name: string) => string | undefined): string {
  return args.environment ?? env("APP_ENV") ?? env("NODE_ENV") ?? "development";
}

/** The default Redis when neither a flag, the config nor the environment names one. */
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/**
 * Merges, highest first: flags, the file's `environments.<env>` section, the
 * file, the module's `environments.<env>` section, the module's `config`,
 * then environment variables (for the Redis URL) and defaults.
 *
 * @example
 * ```ts
 * const options = resolveOptions(parseArgs(["-c", "5"]), { concurrency: 2, queues: ["a"] }, undefined, () => undefined, "app");
 * options.concurrency; // 5
 * options.queues;      // ["a"]
 * ```
 */
export function resolveOptions(
  args: CliArgs,
  file: CliConfig | undefined,
  mod: CliConfig | undefined,
  env: (name: string) => string | undefined,
  defaultTag: string,
): ResolvedOptions {
  const environment = environmentOf(args, env);
  const layers: CliConfig[] = [
    mod ?? {},
    mod?.environments?.[environment] ?? {},
    file ?? {},
    file?.environments?.[environment] ?? {},
  ];
  const pick = <K extends keyof CliConfig>(key: K): CliConfig[K] | undefined => {
    let value: CliConfig[K] | undefined;
    for (const layer of layers) if (layer[key] !== undefined) value = layer[key];
    return value;
  };
  let redisUrl: string;
  let redisUrlSource: string;
  if (args.redisUrl) [redisUrl, redisUrlSource] = [args.redisUrl, "--redis-url"];
  else if (pick("redisUrl")) [redisUrl, redisUrlSource] = [pick("redisUrl")!, "config.redisUrl"];
  else if (env("REDIS_URL")) [redisUrl, redisUrlSource] = [checkRedisUrl("REDIS_URL", env("REDIS_URL")!), "REDIS_URL"];
  else if (env("UPSTASH_REDIS_REST_URL")) {
    [redisUrl, redisUrlSource] = [
      checkRedisUrl("UPSTASH_REDIS_REST_URL", env("UPSTASH_REDIS_REST_URL")!),
      "UPSTASH_REDIS_REST_URL",
    ];
  } else [redisUrl, redisUrlSource] = [DEFAULT_REDIS_URL, "default"];

  const capsules: ResolvedOptions["capsules"] = {};
  for (const layer of layers) Object.assign(capsules, layer.capsules ?? {});
  if ("default" in capsules) {
    throw new UsageError(
      "invalid config: config.capsules.default: reserved for the queues/concurrency capsule; pick another name",
    );
  }
  return {
    environment,
    require: args.require ?? pick("require"),
    queues: args.queues.length ? args.queues : pick("queues") ?? ["default"],
    concurrency: args.concurrency ?? pick("concurrency") ?? 10,
    timeout: args.timeout ?? pick("timeout") ?? 25,
    tag: args.tag ?? pick("tag") ?? defaultTag,
    labels: pick("labels") ?? [],
    redisUrl,
    redisUrlSource,
    json: args.json ?? pick("json"),
    verbose: args.verbose || (pick("verbose") ?? false),
    prefix: pick("prefix"),
    shards: args.shards ?? pick("shards"),
    fetch: pick("fetch"),
    timeFormat: pick("timeFormat"),
    capsules,
    middleware: mod?.middleware as ServerMiddleware[] | undefined,
    clientMiddleware: mod?.clientMiddleware as ClientMiddleware[] | undefined,
    deathHandlers: mod?.deathHandlers as DeathHandler[] | undefined,
    onError: mod?.onError as ResolvedOptions["onError"],
  };
}
