/**
 * Serverless mode: `drain()` runs jobs until the queues are empty or the time
 * budget is nearly spent, then returns counts. It uses reliable fetch and
 * registers a short-lived process entry, so a concurrent invocation never
 * mistakes its in-flight jobs for orphans, and a killed invocation loses
 * nothing: the next poll recovers its held jobs once the entry expires.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { keysFor, type Keyspace } from "../keys.ts";
import { type Logger, silentLogger } from "../logger.ts";
import { type TimeFormat } from "../payload.ts";
import { describeValue } from "../describe_value.ts";
import type { JobsInput } from "../registry.ts";
import { currentRuntime } from "../runtime/detect.ts";
import { switchable } from "../transport/switchable.ts";
import type { Transport } from "../transport/transport.ts";
import { VERSION } from "../version.ts";
import { assemble } from "./assembly.ts";
import { Client } from "../client.ts";
import { checkFeatures } from "../client_feature.ts";
import { wholeNumber } from "./whole_number.ts";
import { logErrors, processIdentity } from "./identity.ts";
import type { ServerMiddleware } from "../server_middleware.ts";
import type { DeathHandler } from "../dead_set_rules.ts";
import { JobCounters } from "./job_counters.ts";
import { checkShardable, shardCount, shardNamespaces } from "../shards.ts";
import { splitSlots } from "./sharded_worker.ts";
import type { UnknownJobPolicy } from "./processor.ts";
import type { WorkerFeature } from "./worker_feature.ts";

/** Options for {@link drain}. */
export interface DrainOptions {
  transport: Transport;
  jobs: JobsInput;
  /** Wall-clock budget in ms (the function's time limit, minus a margin). */
  budgetMs: number;
  /** Queue specs; default `["default"]`. */
  queues?: string[];
  /** Jobs at once; default 10. */
  concurrency?: number;
  /**
   * Stop taking new jobs this long before the budget ends, so running ones
   * can finish; default a quarter of the budget, at most 5 s.
   */
  reserveMs?: number;
  prefix?: string;
  /** Key layout, `"sidekiq"` or `"cluster"`: see `ClientOptions.keyspace`. */
  keyspace?: Keyspace;
  /**
   * Drains a sharded namespace (see `ClientOptions.shards`): every shard at
   * once, within the same budget, each with an equal share of `concurrency`
   * (at least one per shard). Default 1.
   */
  shards?: number;
  timeFormat?: TimeFormat;
  logger?: Logger;
  jobLogging?: boolean;
  middleware?: ServerMiddleware[];
  deathHandlers?: DeathHandler[];
  onError?: (error: unknown, context: Record<string, unknown>) => void;
  /** As the worker's `unknownJobs`; default `"retry"`. */
  unknownJobs?: UnknownJobPolicy;
  /**
   * Features, as the worker's: their middleware and outcome hooks run for
   * each job, and their `stop` hooks once at the end (metrics are written
   * then).
   */
  features?: readonly WorkerFeature[];
}

/** What a drain did. */
export interface DrainResult {
  /** Jobs finished (including failed ones). */
  processed: number;
  /** Jobs that failed (retried or buried). */
  failed: number;
  /** Jobs still waiting in the drained queues. */
  remaining: number;
  /** Jobs cut off by the budget and put back. */
  requeued: number;
  /** Redis commands this drain sent (what Upstash bills). */
  commands: number;
  /** Commands per processed job. */
  commandsPerJob: number;
  /** Wall-clock ms spent. */
  elapsedMs: number;
}

/** Drains every shard of a sharded namespace side by side; their results summed. */
async function drainShards(options: DrainOptions, count: number, concurrency: number): Promise<DrainResult> {
  const started = Date.now();
  checkShardable(checkFeatures(options.features, "drain"), count, "drain");
  if (concurrency < count) {
    throw new ConfigError(
      `Cannot drain as 'concurrency' must be at least one per shard ('shards' is ${count}): current value is ${concurrency}`,
    );
  }
  const before = options.transport.counters.commands;
  const split = splitSlots(concurrency, count);
  const results = await Promise.all(
    shardNamespaces(options.prefix ?? "", count).map((namespace, i) =>
      drain({ ...options, prefix: namespace, keyspace: "cluster", shards: 1, concurrency: split[i] })
    ),
  );
  const sum = (pick: (r: DrainResult) => number) => results.reduce((n, r) => n + pick(r), 0);
  const processed = sum((r) => r.processed);
  // The shards share the transport: its counter, not the shards' sum, is what this drain sent.
  const commands = options.transport.counters.commands - before;
  return {
    processed,
    failed: sum((r) => r.failed),
    remaining: sum((r) => r.remaining),
    requeued: sum((r) => r.requeued),
    commands,
    commandsPerJob: processed ? commands / processed : 0,
    elapsedMs: Date.now() - started,
  };
}

/**
 * Drains queues within a time budget. Call it from a cron trigger after
 * `pollOnce()`.
 *
 * @example
 * ```ts
 * const result = await drain({ transport, jobs: [SendEmail], budgetMs: 25_000 });
 * console.log(result.processed, result.remaining);
 * ```
 */
export async function drain(options: DrainOptions): Promise<DrainResult> {
  const started = Date.now();
  const { transport } = options;
  if (!transport) throw new ConfigError("Cannot drain as 'transport' is required");
  if (typeof options.budgetMs !== "number" || !(options.budgetMs > 0)) {
    throw new ConfigError(
      `Cannot drain as 'budgetMs' must be > 0: current value is ${describeValue(options.budgetMs)}`,
    );
  }
  const concurrency = wholeNumber(options.concurrency ?? 10, { action: "drain", name: "concurrency", min: 1 });
  const runtime = currentRuntime();
  const logger = options.logger ?? silentLogger;
  const onError = options.onError ?? logErrors(logger);
  const k = keysFor(options.transport, options, "drain");
  const count = shardCount(options.shards, k.keyspace, "drain");
  if (count > 1) return await drainShards(options, count, concurrency);
  const timeFormat = options.timeFormat ?? "seconds";
  const identity = processIdentity(runtime);
  const commandsBefore = transport.counters.commands;
  const stats = new JobCounters();
  const features = checkFeatures(options.features, "drain");
  const ttl = Math.ceil(options.budgetMs / 1000) + 60;
  const queueSpecs = options.queues ?? ["default"];
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  // Every request the jobs' loop makes is cut off when the budget ends (one
  // hung HTTP request must not keep the function past it); the bookkeeping
  // at the end uses the plain transport, with its own request timeout.
  const budget = AbortSignal.timeout(options.budgetMs);
  const engine = switchable(transport.withSignal?.(budget) ?? transport);
  const [manager] = assemble({
    ...options,
    // A drain logs no per-job lines unless asked: cron output is read rarely.
    jobLogging: options.jobLogging ?? false,
    transport: engine,
    keys: k,
    identity,
    timeFormat,
    logger,
    stats,
    onError,
    capsules: { drain: { queues: queueSpecs, concurrency } },
    reliable: true,
    idle: "drain",
    blockSeconds: 1,
    pollMaxMs: 0,
    ttl,
    prefetch: "from-zero",
    features,
    onEmpty: () => end(),
    // Stalled past its own TTL: other pollers may have taken what it held. Stop here.
    onDead: () => {
      end();
      return Promise.resolve();
    },
  });
  const info = JSON.stringify({
    hostname: runtime.hostname(),
    started_at: started / 1000,
    pid: runtime.pid,
    tag: "drain",
    concurrency,
    queues: manager.fetcher.queues,
    labels: ["serverless"],
    identity,
    version: VERSION,
    embedded: true,
  });
  // The entry proves this invocation alive to other pollers for the budget.
  await transport.pipeline([
    ["SADD", k.processes, identity],
    ["HSET", k.process(identity), "info", info, "busy", 0, "beat", String(started / 1000), "quiet", "false"],
    ["EXPIRE", k.process(identity), ttl],
  ], { atomic: true });
  await manager.fetcher.register();
  manager.start();
  const reserve = options.reserveMs ?? Math.min(5000, options.budgetMs / 4);
  const fetchFor = Math.max(0, options.budgetMs - reserve - (Date.now() - started));
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, fetchFor)))]);
  clearTimeout(timer);
  const remainingBudget = Math.max(0, options.budgetMs - (Date.now() - started));
  // Running jobs get what is left of the budget; then they are put back.
  // The fetch window has closed: what remains (running jobs' writes and
  // saves, putting back what still runs, the release) goes out on the plain
  // transport, so the budget's own end cannot cut it off.
  engine.target = transport;
  const requeued = await manager.stop(remainingBudget, 0);
  const { processed, failed } = stats;
  await manager.fetcher.release().catch((error) => onError(error, { context: "release" }));
  const client = new Client({ transport, prefix: options.prefix, keyspace: options.keyspace, timeFormat, features });
  const context = { client, transport, keys: k, logger, identity, onError };
  for (const feature of features) {
    await feature.stop?.(context).catch((error) => onError(error, { context: `${feature.name} at the end` }));
  }
  const drained = stats.drain(k);
  const lengths = await transport.pipeline([
    ...drained.commands,
    ["SREM", k.processes, identity],
    ["UNLINK", k.process(identity)],
    ...manager.fetcher.queues.map((q) => ["LLEN", k.queue(q)] as const),
  ]);
  const remaining = lengths.slice(-manager.fetcher.queues.length).reduce<number>((n, v) => n + Number(v), 0);
  const commands = transport.counters.commands - commandsBefore;
  return {
    processed,
    failed,
    remaining,
    requeued,
    commands,
    commandsPerJob: processed ? commands / processed : 0,
    elapsedMs: Date.now() - started,
  };
}
