/**
 * Builds what a worker and a serverless drain share: the processors'
 * dependencies and, per capsule, a fetcher, a feeder and a manager. The two
 * differ only in the idle policy and the hooks they pass in.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import type { Keys } from "../keys.ts";
import type { Logger } from "../logger.ts";
import { type TimeFormat } from "../payload.ts";
import { describeValue } from "../describe_value.ts";
import type { Transport } from "../transport/transport.ts";
import { wholeNumber } from "./whole_number.ts";
import { Feeder, type IdlePolicy } from "./feeder.ts";
import { BasicFetch } from "./basic_fetch.ts";
import type { Fetcher } from "./fetcher.ts";
import { ReliableFetch } from "./reliable_fetch.ts";
import { Manager } from "./manager.ts";
import { Prefetch, PREFETCH_CEILING } from "./prefetch.ts";
import { type ProcessorConfig, processorDeps } from "./processor.ts";
import { parseQueues } from "./queues.ts";
import type { JobCounters } from "./job_counters.ts";
import type { CapsuleConfig } from "./worker_options.ts";

/** The most jobs one capsule runs at once: an async slot costs memory, and more helps nobody. */
export const MAX_CONCURRENCY = 10_000;

/** What {@link assemble} builds from. */
export interface AssemblyOptions extends ProcessorConfig {
  transport: Transport;
  keys: Keys;
  identity: string;
  timeFormat: TimeFormat;
  logger: Logger;
  stats: JobCounters;
  onError: (error: unknown, context: Record<string, unknown>) => void;
  capsules: Record<string, CapsuleConfig>;
  reliable: boolean;
  idle: IdlePolicy;
  /** Seconds a blocking fetch waits. */
  blockSeconds: number;
  /** Longest idle back-off (HTTP), ms. */
  pollMaxMs: number;
  /** Seconds the process entry lives; every fetch renews it. */
  ttl: number;
  /** Prefetch when a capsule does not fix one: `"adaptive"` (2 × concurrency up) or `"from-zero"` (drain). */
  prefetch: "adaptive" | "from-zero";
  /** The fetch found the process presumed dead. */
  onDead: () => Promise<void>;
  /** Drain policy: a capsule found its queues empty with nothing running. */
  onEmpty?: (manager: string) => void;
}

/**
 * Builds the managers (one per capsule) with their fetchers and feeders.
 *
 * @example
 * ```ts
 * const managers = assemble({ transport, keys: keys(), identity, timeFormat: "seconds", logger, stats, onError,
 *   jobs, capsules: { default: { queues: ["default"] } }, reliable: true, idle: "block", blockSeconds: 2,
 *   pollMaxMs: 5000, ttl: 60, prefetch: "adaptive", onDead: () => worker.beat() });
 * ```
 */
export function assemble(options: AssemblyOptions): Manager[] {
  const { transport, keys, identity, timeFormat, logger, stats, onError } = options;
  // Validates the jobs (a duplicate name throws) before anything connects.
  const deps = processorDeps({ transport, keys, timeFormat, logger, stats, onError }, options);
  const entries = Object.entries(options.capsules);
  if (entries.length === 0) throw new ConfigError("Cannot create worker as 'capsules' must name at least one capsule");
  return entries.map(([name, config]) => {
    const action = `create capsule '${name}'`;
    if (!/^[^\s|]+$/.test(name)) {
      throw new ConfigError(
        `Cannot ${action} as its name must be non-empty without spaces or '|': current value is ${describeValue(name)}`,
      );
    }
    const concurrency = wholeNumber(config.concurrency ?? 10, { action, name: "concurrency", min: 1 });
    if (concurrency > MAX_CONCURRENCY) {
      throw new ConfigError(
        `Cannot ${action} as 'concurrency' must be at most ${MAX_CONCURRENCY}: current value is ${concurrency}`,
      );
    }
    if (config.prefetch !== undefined) wholeNumber(config.prefetch, { action, name: "prefetch", min: 0 });
    const fixed = config.prefetch;
    // Two batches ahead: one round trip acks and refills while the other
    // runs. Unless fixed, it grows for jobs that finish within a round trip,
    // where batches of ten would cost a round trip per ten jobs. A drain
    // starts from nothing held: a budget that runs out gives back what is held.
    const min = fixed ?? (options.prefetch === "adaptive" ? concurrency * 2 : 0);
    const max = fixed ?? Math.max(concurrency * 2, PREFETCH_CEILING);
    const fetchOptions = {
      transport,
      keys,
      identity,
      capsule: name,
      queues: parseQueues(config.queues),
      blockSeconds: options.blockSeconds,
      ttl: options.ttl,
      logger,
    };
    const fetcher: Fetcher = options.reliable ? new ReliableFetch(fetchOptions) : new BasicFetch(fetchOptions);
    const feeder = new Feeder({
      fetcher,
      concurrency,
      prefetch: new Prefetch({ concurrency, min, max }),
      idle: options.idle === "block" && !transport.blocking ? "backoff" : options.idle,
      pollMaxMs: options.pollMaxMs,
      onEmpty: options.onEmpty && (() => options.onEmpty!(name)),
      onDead: options.onDead,
      onRecovered: () => {
        logger.warn("this process stalled past its TTL and its jobs were recovered by another", { capsule: name });
      },
      onError: (error, context) => onError(error, { ...context, capsule: name }),
    });
    return new Manager({ name, concurrency, fetcher, feeder, deps, logger, onError });
  });
}
