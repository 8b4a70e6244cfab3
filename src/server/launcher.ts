/**
 * The worker process: `createWorker(...)` owns the capsules' managers, the
 * heartbeat, the poller and the signal loop, and runs Sidekiq's lifecycle:
 * `run()` -> (`quiet()`) -> `stop()`.
 *
 * @module
 */
import { Client } from "../client.ts";
import { ConfigError } from "../errors.ts";
import { keysFor } from "../keys.ts";
import type { JobPayload } from "../payload.ts";
import { createLogger, type Logger } from "../logger.ts";
import { currentRuntime } from "../runtime/detect.ts";
import type { Transport } from "../transport/transport.ts";
import { VERSION } from "../version.ts";
import { checkFeatures } from "../client_feature.ts";
import { checkShardable, shardCount, shardNamespaces } from "../shards.ts";
import { assemble } from "./assembly.ts";
import { shardedWorker } from "./sharded_worker.ts";
import type { Worker, WorkerEvent } from "./worker.ts";
import { WorkerEvents } from "./worker_events.ts";
import { Heartbeat, type ProcessInfo } from "./heartbeat.ts";
import { logErrors, processIdentity } from "./identity.ts";
import type { Manager } from "./manager.ts";
import { Poller } from "./poller.ts";
import { signalActions, SignalQueue } from "./signals.ts";
import { JobCounters } from "./job_counters.ts";
import { type CapsuleConfig, fetchMode, type WorkerOptions, workerTimings } from "./worker_options.ts";
import type { FeatureContext } from "./worker_feature.ts";

export type { CapsuleConfig, WorkerOptions } from "./worker_options.ts";
export type { RunningJob, Worker, WorkerEvent } from "./worker.ts";

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
  const k = keysFor(options.transport, options, "create worker");
  const count = shardCount(options.shards, k.keyspace, "create worker");
  if (count > 1) {
    checkShardable(checkFeatures(options.features, "create worker"), count, "create worker");
    return shardedWorker(options, shardNamespaces(options.prefix ?? "", count), createWorker);
  }
  const timeFormat = options.timeFormat ?? "seconds";
  const transport = options.transport;
  const http = !transport.blocking;
  const { timeoutMs, beatMs, ttl, blockSeconds } = workerTimings(options, http);
  const identity = processIdentity(runtime);
  const onError = options.onError ?? logErrors(logger);
  const features = checkFeatures(options.features, "create worker");
  const client = new Client({
    transport,
    prefix: options.prefix,
    keyspace: options.keyspace,
    timeFormat,
    middleware: options.clientMiddleware,
    features,
  });
  const stats = new JobCounters();
  const context: FeatureContext = {
    client,
    transport,
    keys: k,
    logger,
    identity,
    onError,
    jobs: {
      list: () =>
        managers.flatMap((m) =>
          [...m.busy.values()].map((b) => {
            const { jid, class: className, payload } = peek(b.unit.raw);
            return { jid, queue: b.unit.queue, className, startedAt: b.startedAt, payload };
          })
        ),
      stop(jid, reason) {
        for (const manager of managers) {
          for (const busy of manager.busy.values()) {
            if (busy.unit.raw.includes(jid) && peek(busy.unit.raw).jid === jid) {
              busy.control.stop(reason);
              return true;
            }
          }
        }
        return false;
      },
    },
  };
  const hooks = (hook: "start" | "stop") => features.flatMap((f) => (f[hook] ? [{ name: f.name, run: f[hook]! }] : []));
  // Each feature's watched set is read by the beat itself; its highest score goes to the feature's `beat`.
  const watchers = features.filter((f) => f.watch);
  const reliable = fetchMode(options.fetch) === "reliable";
  const configs: Record<string, CapsuleConfig> = options.capsules ??
    { default: { queues: options.queues ?? ["default"], concurrency: options.concurrency ?? 10 } };
  const managers: Manager[] = assemble({
    ...options,
    transport,
    keys: k,
    identity,
    timeFormat,
    logger,
    stats,
    onError,
    capsules: configs,
    reliable,
    idle: "block",
    blockSeconds,
    pollMaxMs: options.pollMaxMs ?? (http ? 10_000 : 5000),
    ttl,
    prefetch: "adaptive",
    features,
    onDead: async () => {
      logger.warn("this process's entry had expired (it stalled past its TTL): registering again", { identity });
      await worker.beat();
    },
  });
  const allQueues = [...new Set(managers.flatMap((m) => m.fetcher.queues))];
  const info: ProcessInfo = {
    hostname: runtime.hostname(),
    started_at: Date.now() / 1000,
    pid: runtime.pid,
    tag: options.tag ?? "",
    concurrency: managers.reduce((n, m) => n + m.concurrency, 0),
    queues: allQueues,
    weights: managers.map((m) => ({ ...m.fetcher.weights })),
    capsules: Object.fromEntries(managers.map((m) => [m.name, {
      concurrency: m.concurrency,
      mode: m.fetcher.mode,
      weights: { ...m.fetcher.weights },
    }])),
    labels: options.labels ?? [],
    identity,
    version: VERSION,
    embedded: false,
  };
  let quiet = false;
  const pollOnBeat = http && (options.poller ?? true) && options.pollIntervalAverage === undefined;
  const poller = new Poller({
    client,
    logger,
    identity,
    averageScheduledPollInterval: options.averageScheduledPollInterval ?? (http ? 20 : 5),
    pollIntervalAverage: options.pollIntervalAverage,
    initialWait: options.pollInitialWait,
    maxRecoveries: options.maxRecoveries,
    ownHeldHashes: managers.reduce((n, m) => n + m.fetcher.heldKeys.length, 0),
    onPoison: options.onPoison,
    onError,
    features,
  });
  const heartbeat = new Heartbeat({
    transport,
    keys: k,
    info,
    capsules: managers,
    stats,
    ttl,
    rss: runtime.rss,
    quiet: () => quiet,
    // Over HTTP the beat carries the poll check: one billed command every 20 s
    // does both (an idle worker's bill is most of what it costs).
    pollCheck: pollOnBeat ? poller.dueKeys : undefined,
    watch: watchers.map((f) => f.watch!(k)),
  });
  const events = new WorkerEvents(onError);
  const emit = (event: WorkerEvent) => events.emit(event);
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let beatTimer: ReturnType<typeof setTimeout> | undefined;
  let stopping: Promise<number> | undefined;
  let state: "new" | "running" | "stopped" = "new";
  let beats = 0;

  const signals = new SignalQueue(signalActions({
    get stopping() {
      return stopping !== undefined;
    },
    async stop() {
      await worker.stop();
      const requeued = await stopping!;
      // Sidekiq's contract: jobs cut off by hard shutdown are back on their
      // queues, and the process exits, even if a job ignores ctx.signal.
      if (requeued > 0) {
        logger.warn("exiting with jobs that ignored the shutdown signal still running; they are back on their queues", {
          requeued,
        });
        runtime.exit(0);
      }
    },
    async abort() {
      await Promise.all(managers.map((m) => m.requeueBusy())).catch((error) => onError(error, { context: "requeue" }));
      // Unregister on the way out too, so `stats` and the dashboard stop
      // counting this process and its busy jobs now, not at its TTL. At most
      // 2 s: a second INT means "exit now".
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        heartbeat.clear().catch((error) => onError(error, { context: "heartbeat clear" })),
        new Promise((resolve) => (timer = setTimeout(resolve, 2000))),
      ]);
      clearTimeout(timer);
      runtime.exit(1);
    },
    quiet: () => worker.quiet(),
    dump: () => worker.dump(),
    warn: (message, fields) => logger.warn(message, fields),
  }));

  const scheduleBeat = () => {
    beatTimer = setTimeout(async () => {
      if (state !== "running" || stopping) return;
      await worker.beat().catch((error) => onError(error, { context: "heartbeat" }));
      if (state === "running" && !stopping) scheduleBeat();
    }, beatMs);
  };

  const stopWorker = async (): Promise<number> => {
    emit("shutdown");
    clearTimeout(beatTimer);
    await worker.quiet();
    await poller.stop();
    logger.info("shutting down", { identity, timeout_s: timeoutMs / 1000 });
    const requeued = (await Promise.all(managers.map((m) => m.stop(timeoutMs)))).reduce((a, b) => a + b, 0);
    for (const manager of managers) {
      await manager.fetcher.release().catch((error) => onError(error, { context: "release" }));
    }
    for (const hook of hooks("stop")) {
      await hook.run(context).catch((error) => onError(error, { context: `${hook.name} at stop` }));
    }
    await heartbeat.clear().catch((error) => onError(error, { context: "heartbeat clear" }));
    signals.close();
    // Nothing of this worker's keeps the process alive now: a script's
    // `await worker.stop()`, or the README's program after TERM, exits.
    if (options.closeTransport ?? (options.handleSignals ?? true)) {
      await transport.close().catch((error) => onError(error, { context: "close transport" }));
    }
    state = "stopped";
    logger.info("stopped", { identity });
    emit("exit");
    resolveStopped();
    return requeued;
  };

  const worker: Worker = {
    identity,
    client,
    stopped,
    async run() {
      if (state !== "new") throw new ConfigError(`Cannot run worker ${identity} as it has already been run`);
      state = "running";
      await checkEviction(transport, logger);
      // Features first (a bad periodic schedule fails here), before anything runs.
      for (const hook of hooks("start")) await hook.run(context);
      // The first beat creates the process entry every fetch then renews.
      await worker.beat();
      for (const manager of managers) await manager.fetcher.register();
      if (options.handleSignals ?? true) signals.listen(runtime);
      for (const manager of managers) manager.start();
      if ((options.poller ?? true) && !pollOnBeat) poller.start();
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
      await Promise.all(managers.map((m) => m.quiet()));
      await worker.beat().catch((error) => onError(error, { context: "heartbeat" }));
    },
    async stop() {
      if (!stopping && state !== "running") {
        state = "stopped";
        resolveStopped();
        return;
      }
      await (stopping ??= stopWorker());
    },
    on: (event, handler) => events.on(event, handler),
    running() {
      return managers.flatMap((m) =>
        [...m.busy.values()].map((b) => ({
          capsule: m.name,
          queue: b.unit.queue,
          payload: b.unit.raw,
          startedAt: b.startedAt,
        }))
      );
    },
    poll: () => poller.runOnce(),
    flushStats: () => worker.beat().then(() => {}),
    async beat() {
      const { signal, existed, check, watched } = await heartbeat.beat();
      if (check && state === "running" && !stopping) {
        // And a poll of its own when the next job comes due before the next
        // beat: one billed command per due time, none while nothing waits.
        void poller.act(check).then(({ nextDueAt }) => poller.wakeFor(nextDueAt, beatMs, HTTP_WAKE_FLOOR_MS))
          .catch((error) => onError(error, { context: "poller" }));
      }
      // Alongside, not inside, the beat (metrics: nothing to send when no job ran).
      for (const feature of features) {
        if (!feature.beat) continue;
        const i = watchers.indexOf(feature);
        void feature.beat(context, i < 0 ? undefined : watched[i] ?? null)
          .catch((error) => onError(error, { context: feature.name }));
      }
      if (!existed && beats > 0) {
        logger.warn("this process's entry had expired: it stalled longer than its TTL", { identity, ttl_s: ttl });
      }
      beats++;
      emit("heartbeat");
      if (signal) {
        logger.info("remote signal received", { signal });
        signals.push(signal);
      }
      return signal;
    },
    dump() {
      const now = Date.now();
      for (const manager of managers) {
        logger.warn("capsule", {
          capsule: manager.name,
          state: manager.state,
          busy: manager.busy.size,
          concurrency: manager.concurrency,
        });
        for (const busy of manager.busy.values()) {
          const { class: cls, jid } = peek(busy.unit.raw);
          logger.warn("running job", {
            capsule: manager.name,
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
 * Over HTTP, the shortest wait between two polls a due time causes, ms:
 * each is a billed command, so a stream of due jobs costs a worker at most
 * one a second.
 */
const HTTP_WAKE_FLOOR_MS = 1000;

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

/** A raw job's jid and class, or `?` for what cannot be read, and the payload where it is an object. */
function peek(raw: string): { jid: string; class: string; payload: Readonly<JobPayload> | undefined } {
  try {
    const payload = JSON.parse(raw);
    const { jid, class: cls } = payload ?? {};
    return {
      jid: typeof jid === "string" ? jid : "?",
      class: typeof cls === "string" ? cls : "?",
      payload: typeof payload === "object" && payload !== null && !Array.isArray(payload) ? payload : undefined,
    };
  } catch {
    return { jid: "?", class: "?", payload: undefined };
  }
}
