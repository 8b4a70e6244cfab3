/**
 * The worker process: `createWorker(...)` owns the capsules, the heartbeat,
 * the poller and the signal loop, and runs Sidekiq's lifecycle:
 * `run()` -> (`quiet()`) -> `stop()`.
 *
 * @module
 */
import { Client } from "../client.ts";
import { ConfigError } from "../errors.ts";
import { keys as makeKeys } from "../keys.ts";
import { createLogger, type Logger } from "../logger.ts";
import { describe } from "../payload.ts";
import { currentRuntime } from "../runtime/detect.ts";
import type { Transport } from "../transport/transport.ts";
import { VERSION } from "../version.ts";
import { Capsule } from "./capsule.ts";
import { wholeNumber } from "./checks.ts";
import { processorDeps } from "./processor.ts";
import type { CapsuleConfig, WorkerOptions } from "./worker_options.ts";

export type { CapsuleConfig, WorkerOptions } from "./worker_options.ts";
import { logErrors, processIdentity } from "./identity.ts";
import { Fetcher } from "./fetch.ts";
import { Heartbeat, type ProcessInfo } from "./heartbeat.ts";
import { Poller } from "./poller.ts";
import { PREFETCH_CEILING } from "./prefetch.ts";
import { parseQueues } from "./queues.ts";
import { SignalQueue } from "./signals.ts";
import { Stats } from "./stats.ts";

/** Lifecycle events. */
export type WorkerEvent = "startup" | "quiet" | "shutdown" | "heartbeat" | "exit";

/** A running (or runnable) worker. */
export interface Worker {
  /** `hostname:pid:<12 hex>`. */
  readonly identity: string;
  /** The client this worker pushes with (same transport and options). */
  readonly client: Client;
  /** The poller (its `runOnce()` is public). */
  readonly poller: Poller;
  /** The capsules. */
  readonly capsules: readonly Capsule[];
  /** Settles when the worker has stopped. */
  readonly stopped: Promise<void>;
  /** Registers, starts capsules, heartbeat and poller. Resolves once running. */
  run(): Promise<void>;
  /** Stops fetching; running jobs finish. */
  quiet(): Promise<void>;
  /** Quiets, waits up to `timeout`, then shuts down hard. */
  stop(): Promise<void>;
  /** Subscribes to a lifecycle event; returns the unsubscribe function. */
  on(event: WorkerEvent, handler: () => void): () => void;
  /** Writes the counters now (the heartbeat does this every beat). */
  flushStats(): Promise<void>;
  /** Beats now; returns the remote signal handled, if any. */
  beat(): Promise<string | null>;
  /** Logs every running job and capsule state (TTIN). */
  dump(): void;
}

/**
 * Creates a worker.
 *
 * @example
 * ```ts
 * import { createWorker } from "edgekiq";
 * import { ioredisTransport } from "edgekiq/ioredis";
 * const worker = createWorker({
 *   transport: ioredisTransport({ url: "redis://127.0.0.1:6379" }),
 *   jobs: [HardJob, SendEmail],
 *   capsules: { default: { queues: ["critical,3", "default"], concurrency: 10 }, serial: { queues: ["serial"], concurrency: 1 } },
 * });
 * await worker.run();
 * await worker.stopped; // until INT/TERM
 * ```
 */
export function createWorker(options: WorkerOptions): Worker {
  if (!options?.transport) throw new ConfigError("Cannot create worker as 'transport' is required");
  const runtime = options.runtime ?? currentRuntime();
  const logger = options.logger ?? createLogger();
  const k = makeKeys(options.prefix);
  const timeFormat = options.timeFormat ?? "seconds";
  const transport = options.transport;
  const timeoutMs = seconds("timeout", options.timeout ?? 25) * 1000;
  // Over HTTP every command is billed: an idle always-on worker beats every
  // 20 s, polls the schedule about every 20 s and backs its fetch off to
  // 10 s, about 12 commands a minute in all. Over TCP, Sidekiq's timings.
  const http = !options.transport?.blocking;
  const beatMs = seconds("heartbeatInterval", options.heartbeatInterval ?? (http ? 20 : 10)) * 1000;
  const ttl = Math.ceil(seconds("heartbeatTtl", options.heartbeatTtl ?? 60));
  const identity = processIdentity(runtime);
  const onError = options.onError ?? logErrors(logger);
  const client = new Client({ transport, prefix: options.prefix, timeFormat, middleware: options.clientMiddleware });
  const stats = new Stats();
  // Validates the jobs (a duplicate name throws) before anything connects.
  const deps = processorDeps({ transport, keys: k, timeFormat, logger, stats, onError }, options);
  const reliable = (options.fetch ?? "reliable") === "reliable";
  if (options.fetch !== undefined && options.fetch !== "reliable" && options.fetch !== "basic") {
    throw new ConfigError(
      `Cannot create worker as 'fetch' must be "reliable" or "basic": current value is ${describe(options.fetch)}`,
    );
  }
  const configs: Record<string, CapsuleConfig> = options.capsules ??
    { default: { queues: options.queues ?? ["default"], concurrency: options.concurrency ?? 10 } };
  const capsules = Object.entries(configs).map(([name, config]) => {
    const action = `create capsule '${name}'`;
    const concurrency = wholeNumber(config.concurrency ?? 10, { action, name: "concurrency", min: 1 });
    if (config.prefetch !== undefined) wholeNumber(config.prefetch, { action, name: "prefetch", min: 0 });
    const queues = parseQueues(config.queues);
    return new Capsule({
      name,
      concurrency,
      // Two batches ahead: one round trip acks and refills while the other
      // runs. Unless fixed by the config, it grows for jobs that finish
      // within a round trip, where batches of ten would cost a round trip
      // (two system calls and a script call) per ten jobs.
      prefetch: config.prefetch ?? concurrency * 2,
      prefetchMax: config.prefetch ?? Math.max(concurrency * 2, PREFETCH_CEILING),
      fetcher: new Fetcher({ transport, keys: k, identity, queues, reliable, blockSeconds: options.blockSeconds ?? 2 }),
      deps,
      logger,
      pollMaxMs: options.pollMaxMs ?? (http ? 10_000 : 5000),
      onError,
    });
  });
  const allQueues = [...new Set(capsules.flatMap((c) => c.fetcher.queues))];
  const info: ProcessInfo = {
    hostname: runtime.hostname(),
    started_at: Date.now() / 1000,
    pid: runtime.pid,
    tag: options.tag ?? "",
    concurrency: capsules.reduce((n, c) => n + c.concurrency, 0),
    queues: allQueues,
    weights: capsules.map((c) => ({ ...c.fetcher.weights })),
    capsules: Object.fromEntries(capsules.map((c) => [c.name, {
      concurrency: c.concurrency,
      mode: c.fetcher.mode,
      weights: { ...c.fetcher.weights },
    }])),
    labels: options.labels ?? [],
    identity,
    version: VERSION,
    embedded: false,
  };
  let quiet = false;
  const heartbeat = new Heartbeat({
    transport,
    keys: k,
    info,
    capsules,
    stats,
    ttl,
    rss: runtime.rss,
    quiet: () => quiet,
  });
  const poller = new Poller({
    client,
    logger,
    identity,
    averageScheduledPollInterval: options.averageScheduledPollInterval ?? (http ? 20 : 5),
    pollIntervalAverage: options.pollIntervalAverage,
    initialWait: options.pollInitialWait,
    maxRecoveries: options.maxRecoveries,
    // One private list per queue, shared by capsules that list the same queue.
    ownPrivateLists: reliable ? allQueues.length : 0,
    onPoison: options.onPoison,
    onError,
  });
  const listeners = new Map<WorkerEvent, Set<() => void>>();
  const emit = (event: WorkerEvent) => {
    for (const fn of listeners.get(event) ?? []) {
      try {
        fn();
      } catch (error) {
        onError(error, { context: `${event} event handler` });
      }
    }
  };
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let beatTimer: ReturnType<typeof setTimeout> | undefined;
  let stopping: Promise<void> | undefined;
  let state: "new" | "running" | "stopped" = "new";
  let interrupts = 0;

  const signals = new SignalQueue((signal) => {
    switch (signal) {
      case "INT":
      case "TERM":
        // A second INT while stopping: put running jobs back and leave now.
        if (stopping && signal === "INT" && ++interrupts > 1) {
          void Promise.all(capsules.map((c) => c.requeueBusy())).finally(() => runtime.exit(1));
          return;
        }
        interrupts = 1;
        void worker.stop();
        return;
      case "TSTP":
        void worker.quiet();
        return;
      case "TTIN":
        worker.dump();
        return;
      default:
        logger.warn("unknown signal ignored", { signal });
    }
  });

  const scheduleBeat = () => {
    beatTimer = setTimeout(async () => {
      if (state !== "running" || stopping) return;
      await worker.beat().catch((error) => onError(error, { context: "heartbeat" }));
      if (state === "running" && !stopping) scheduleBeat();
    }, beatMs);
  };

  const worker: Worker = {
    identity,
    client,
    poller,
    capsules,
    stopped,
    async run() {
      if (state !== "new") throw new ConfigError(`Cannot run worker ${identity} as it has already been run`);
      state = "running";
      await checkEviction(transport, logger);
      for (const capsule of capsules) await capsule.fetcher.register();
      await worker.beat();
      if (options.handleSignals ?? true) signals.listen(runtime);
      for (const capsule of capsules) capsule.start();
      if (options.poller ?? true) poller.start();
      scheduleBeat();
      logger.info("edgekiq worker started", {
        identity,
        version: VERSION,
        runtime: runtime.key,
        transport: transport.kind,
        queues: allQueues.join(","),
        concurrency: info.concurrency,
        fetch: reliable ? "reliable" : "basic",
      });
      emit("startup");
    },
    async quiet() {
      if (quiet || state !== "running") return;
      quiet = true;
      logger.info("quieting: no new jobs will be fetched", { identity });
      emit("quiet");
      await Promise.all(capsules.map((c) => c.quiet()));
      await worker.beat().catch((error) => onError(error, { context: "heartbeat" }));
    },
    stop() {
      if (stopping) return stopping;
      if (state !== "running") {
        state = "stopped";
        resolveStopped();
        return Promise.resolve();
      }
      stopping = (async () => {
        emit("shutdown");
        clearTimeout(beatTimer);
        await worker.quiet();
        await poller.stop();
        logger.info("shutting down", { identity, timeout_s: timeoutMs / 1000 });
        await Promise.all(capsules.map((c) => c.stop(timeoutMs)));
        for (const capsule of capsules) {
          await capsule.fetcher.unregister().catch((error) => onError(error, { context: "unregister" }));
        }
        await heartbeat.clear().catch((error) => onError(error, { context: "heartbeat clear" }));
        signals.close();
        state = "stopped";
        logger.info("stopped", { identity });
        emit("exit");
        resolveStopped();
      })();
      return stopping;
    },
    on(event, handler) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, set = new Set());
      set.add(handler);
      return () => set.delete(handler);
    },
    flushStats: () => heartbeat.flushStats(),
    async beat() {
      const signal = await heartbeat.beat();
      emit("heartbeat");
      if (signal) {
        logger.info("remote signal received", { signal });
        signals.push(signal);
      }
      return signal;
    },
    dump() {
      const now = Date.now();
      for (const capsule of capsules) {
        logger.warn("capsule", {
          capsule: capsule.name,
          state: capsule.state,
          busy: capsule.busy.size,
          concurrency: capsule.concurrency,
        });
        for (const busy of capsule.busy.values()) {
          let cls = "?", jid = "?";
          try {
            ({ class: cls, jid } = JSON.parse(busy.unit.raw));
          } catch { /* unreadable payload: show what we can */ }
          logger.warn("running job", {
            capsule: capsule.name,
            queue: busy.unit.queue,
            class: cls,
            jid,
            elapsed_ms: now - busy.startedAt,
          });
        }
      }
    },
  };
  return worker;
}

/**
 * Warns when Redis may evict keys: jobs are data, and `maxmemory-policy`
 * other than `noeviction` can silently drop them. Transports without INFO
 * (some HTTP gateways) skip the check.
 */
async function checkEviction(transport: Transport, logger: Logger): Promise<void> {
  let info: unknown;
  try {
    info = await transport.call("INFO", "memory");
  } catch {
    return;
  }
  const policy = typeof info === "string" ? /maxmemory_policy:(\S+)/.exec(info)?.[1] : undefined;
  if (policy && policy !== "noeviction") {
    logger.warn(
      `WARNING: Redis maxmemory-policy is '${policy}'. Redis may evict jobs under memory pressure; set it to 'noeviction'.`,
    );
  }
}

function seconds(name: string, value: number): number {
  if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value)) {
    throw new ConfigError(
      `Cannot create worker as '${name}' must be a number of seconds > 0: current value is ${describe(value)}`,
    );
  }
  return value;
}
