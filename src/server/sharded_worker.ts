/**
 * A worker over a sharded namespace (`shards: N`, see `src/shards.ts`): one
 * plain worker per shard, in one process, each with an equal share of every
 * capsule's slots, its own process entry, poller and held hashes, so every
 * script stays in its shard's slot and the engine knows nothing of shards.
 * They live and stop as one: a quiet or a stop of any (a signal, the
 * dashboard's button on one shard's process) quiets or stops all, and the
 * transport they share is closed once, after the last.
 *
 * @module
 */
import { Client } from "../client.ts";
import { ConfigError } from "../errors.ts";
import { createLogger } from "../logger.ts";
import { logErrors } from "./identity.ts";
import { currentRuntime } from "../runtime/detect.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { Worker, WorkerEvent } from "./worker.ts";
import { WorkerEvents } from "./worker_events.ts";
import type { PollResult } from "./poller.ts";
import type { CapsuleConfig, WorkerOptions } from "./worker_options.ts";

/**
 * Splits `total` slots over `count` shards as evenly as can be: shard i gets
 * one more than the rest while i < total mod count.
 *
 * @example
 * ```ts
 * splitSlots(10, 4); // [3, 3, 2, 2]
 * ```
 */
export function splitSlots(total: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => Math.floor(total / count) + (i < total % count ? 1 : 0));
}

/**
 * Each shard's capsules: the worker's, each capsule's concurrency split
 * evenly. A capsule with fewer slots than shards is refused: a shard given
 * none would never be served.
 */
function shardCapsules(options: WorkerOptions, count: number, action: string): Record<string, CapsuleConfig>[] {
  const configs: Record<string, CapsuleConfig> = options.capsules ??
    { default: { queues: options.queues ?? ["default"], concurrency: options.concurrency ?? 10 } };
  const shares = Object.entries(configs).map(([name, config]) => {
    const concurrency = config?.concurrency ?? 10;
    if (!Number.isInteger(concurrency) || concurrency < count) {
      throw new ConfigError(
        `Cannot ${action} as capsule '${name}' needs at least one slot per shard ('shards' is ${count}): its concurrency is ${
          String(concurrency)
        }`,
      );
    }
    return [name, config, splitSlots(concurrency, count)] as const;
  });
  return Array.from(
    { length: count },
    (_, i) => Object.fromEntries(shares.map(([name, config, split]) => [name, { ...config, concurrency: split[i] }])),
  );
}

/**
 * Makes the worker of a sharded namespace from `make`, the plain worker
 * factory, one per namespace in `namespaces` (shard order).
 *
 * @example
 * ```ts
 * const worker = shardedWorker(options, shardNamespaces("", 8), createWorker);
 * ```
 */
export function shardedWorker(
  options: WorkerOptions,
  namespaces: readonly string[],
  make: (options: WorkerOptions) => Worker,
): Worker {
  const count = namespaces.length;
  const capsules = shardCapsules(options, count, "create worker");
  const closeTransport = options.closeTransport ?? (options.handleSignals ?? true);
  const runtime = options.runtime ?? currentRuntime();
  const logger = options.logger ?? createLogger();
  // One process, one RSS: reported by shard 0's entry only, so the Busy page's total memory counts it once.
  const quietRss = Object.create(runtime, { rss: { value: () => undefined } }) as Runtime;
  const shards = namespaces.map((namespace, i) =>
    make({
      ...options,
      prefix: namespace,
      keyspace: "cluster",
      shards: 1,
      capsules: capsules[i],
      runtime: i === 0 ? runtime : quietRss,
      // Every line a shard's engine writes says which shard (its start, its jobs, its stop).
      logger: logger.child({ shard: `${i}/${count}` }),
      // Shown beside each process on the dashboard's Busy page (and Sidekiq's): which shard it serves.
      labels: [...(options.labels ?? []), `shard ${i}/${count}`],
      queues: undefined,
      concurrency: undefined,
      // Closed once, after every shard has stopped: an early one must not cut the others off.
      closeTransport: false,
    })
  );
  const client = new Client({
    transport: options.transport,
    prefix: options.prefix,
    keyspace: "cluster",
    shards: count,
    timeFormat: options.timeFormat,
    middleware: options.clientMiddleware,
    features: options.features,
  });
  const onError = options.onError ?? logErrors(logger);
  const events = new WorkerEvents(onError);
  const emit = (event: WorkerEvent) => events.emit(event);
  let quieted = false;
  let stopping: Promise<void> | undefined;
  const stopped = Promise.all(shards.map((w) => w.stopped)).then(async () => {
    if (closeTransport) await options.transport.close().catch(() => {});
    emit("exit");
  });
  for (const shard of shards) {
    shard.on("quiet", () => void worker.quiet());
    shard.on("shutdown", () => void worker.stop());
    shard.on("heartbeat", () => emit("heartbeat"));
  }

  const worker: Worker = {
    identity: shards[0].identity,
    client,
    stopped,
    async run() {
      try {
        for (const shard of shards) await shard.run();
      } catch (error) {
        // A shard that could not start (a feature's start hook, Redis down) stops the others it started.
        await Promise.all(shards.map((w) => w.stop().catch(() => {})));
        throw error;
      }
      emit("startup");
    },
    async quiet() {
      if (quieted) return;
      quieted = true;
      emit("quiet");
      await Promise.all(shards.map((w) => w.quiet()));
    },
    stop() {
      if (stopping) return stopping;
      // Set before any shard is told: a shard's own "shutdown" event calls back in here, synchronously.
      let begin!: () => void;
      stopping = new Promise<void>((resolve) => (begin = resolve)).then(async () => {
        emit("shutdown");
        await Promise.all(shards.map((w) => w.stop()));
        await stopped;
      });
      begin();
      return stopping;
    },
    on: (event, handler) => events.on(event, handler),
    running: () => shards.flatMap((w) => w.running()),
    async poll() {
      const results = await Promise.all(shards.map((w) => w.poll()));
      return results.reduce(addPolls);
    },
    async flushStats() {
      await Promise.all(shards.map((w) => w.flushStats()));
    },
    async beat() {
      const signals = await Promise.all(shards.map((w) => w.beat()));
      return signals.find((s) => s !== null) ?? null;
    },
    dump() {
      for (const shard of shards) shard.dump();
    },
  };
  return worker;
}

/** Two shards' poll results as one: counts summed, failed steps listed once, the earliest due time. */
function addPolls(a: PollResult, b: PollResult): PollResult {
  const features = { ...a.features };
  for (const [name, n] of Object.entries(b.features)) features[name] = (features[name] ?? 0) + n;
  const due = [a.nextDueAt, b.nextDueAt].filter((t): t is number => t !== undefined);
  return {
    promoted: a.promoted + b.promoted,
    pruned: a.pruned + b.pruned,
    recovered: a.recovered + b.recovered,
    poisoned: a.poisoned + b.poisoned,
    features,
    failed: [...new Set([...a.failed, ...b.failed])],
    nextDueAt: due.length ? Math.min(...due) : undefined,
  };
}
