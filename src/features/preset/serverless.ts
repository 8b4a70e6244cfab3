/**
 * Serverless entry points as the root entry point exports them: `drain`,
 * `pollOnce` and `pollAndDrain` (one cron tick: poll, then drain), with the
 * default features (metrics in the drain, periodic jobs in the poll). None
 * needs HTTP or hono: call them from a platform's scheduled handler, or
 * through `cronRoutes()` in `edgekiq/web`.
 *
 * @module
 */
import { Client } from "../../client.ts";
import type { ClientMiddleware } from "../../client_middleware.ts";
import { ConfigError } from "../../errors.ts";
import type { Logger } from "../../logger.ts";
import { describeValue } from "../../describe_value.ts";
import { drain as drainEngine, type DrainOptions, type DrainResult } from "../../server/drain.ts";
import { type PollerOptions, pollOnce as pollEngine, type PollResult } from "../../server/poller.ts";
import type { WorkerFeature } from "../../server/worker_feature.ts";
import type { Transport } from "../../transport/transport.ts";
import { type DefaultFeatureOptions, withDefaultFeatures } from "./built_in.ts";

/** Options for {@link drain}: the engine's, and `metrics` (default on). */
export interface DrainPresetOptions extends DrainOptions, Pick<DefaultFeatureOptions, "metrics"> {}

/**
 * Drains queues within a time budget (execution metrics on by default,
 * written once at the end). Call it from a cron trigger after `pollOnce()`.
 *
 * @example
 * ```ts
 * const result = await drain({ transport, jobs: [SendEmail], budgetMs: 25_000 });
 * console.log(result.processed, result.remaining);
 * ```
 */
export function drain(options: DrainPresetOptions): Promise<DrainResult> {
  const { metrics, ...engine } = options ?? ({} as DrainPresetOptions);
  // A sharded namespace gets no metrics by default (they would be split over the shards); asked for, refused by name.
  const sharded = typeof engine.shards === "number" && engine.shards > 1;
  const which = { metrics: !sharded || (metrics !== undefined && metrics !== false) };
  return drainEngine({ ...engine, features: withDefaultFeatures(engine.features, { metrics }, which) });
}

/** Options for {@link pollOnce}. */
export interface PollOncePresetOptions
  extends Omit<PollerOptions, "logger">, Pick<DefaultFeatureOptions, "periodic" | "periodicOwner"> {
  logger?: Logger;
  /** Epoch ms; default now. */
  now?: number;
}

/**
 * One poll for serverless cron: promote due jobs, enqueue due periodic
 * ticks (this app's `periodic` schedules registered first), prune dead
 * processes, recover orphans. Costs nothing when not called.
 *
 * @example
 * ```ts
 * export default { async scheduled() { await pollOnce({ client }); await drain({ ... }); } };
 * ```
 */
export function pollOnce(options: PollOncePresetOptions): Promise<PollResult> {
  const { periodic, periodicOwner, ...engine } = options ?? ({} as PollOncePresetOptions);
  return pollEngine({
    ...engine,
    features: withDefaultFeatures(engine.features, { periodic, periodicOwner }, { periodic: true }),
  });
}

/** Options for {@link pollAndDrain}. */
export interface TickOptions extends Omit<DrainPresetOptions, "budgetMs">, DefaultFeatureOptions {
  /** Budget for the poll and the drain together, ms; default 10,000. */
  budgetMs?: number;
  /** Client middleware applied to promoted jobs, as a worker's poller does. */
  clientMiddleware?: ClientMiddleware[];
  /** Recoveries of one orphaned job before it is buried; default 3. */
  maxRecoveries?: number;
}

/** What a tick did: the poll's counts (`features.periodic`: periodic jobs enqueued) and the drain's. */
export interface TickResult {
  poll: PollResult;
  drain: DrainResult;
}

const DEFAULT_BUDGET_MS = 10_000;

/**
 * Checks a tick's budget and fills in the default.
 *
 * @example
 * ```ts
 * tickBudget(undefined, "run a cron tick"); // 10000
 * ```
 */
export function tickBudget(budgetMs: number | undefined, action: string): number {
  const budget = budgetMs ?? DEFAULT_BUDGET_MS;
  if (typeof budget !== "number" || !(budget > 0)) {
    throw new ConfigError(`Cannot ${action} as 'budgetMs' must be > 0: current value is ${describeValue(budget)}`);
  }
  return budget;
}

/**
 * One cron tick: poll, then drain for what is left of the budget. Use it
 * from a platform's scheduled handler.
 *
 * @example
 * ```ts
 * export default {
 *   fetch: app.fetch,
 *   async scheduled(_event, env, ctx) {
 *     ctx.waitUntil(pollAndDrain({ transport: transportFor(env), jobs: [SendEmail], budgetMs: 25_000 }));
 *   },
 * };
 * ```
 */
export function pollAndDrain(options: TickOptions): Promise<TickResult> {
  if (!options?.transport) throw new ConfigError("Cannot run a cron tick as 'transport' is required");
  return ticker(options, sharedClient)(options.transport);
}

/** Client settings a tick's client is made with. */
type ClientSettings = Pick<TickOptions, "prefix" | "timeFormat" | "clientMiddleware" | "features">;

/** Makes (or reuses) the client a tick polls with. */
type ClientSource = (transport: Transport, settings: ClientSettings) => Client<object>;

/**
 * One Client per transport (and settings), kept for the life of the
 * isolate: the periodic registration is remembered per Client, so a warm
 * isolate's next tick sends no registration while it is fresh.
 */
function clientCache(): ClientSource {
  const clients = new WeakMap<Transport, { settings: ClientSettings; client: Client<object> }>();
  return (transport, settings) => {
    const held = clients.get(transport);
    if (
      held && held.settings.prefix === settings.prefix && held.settings.timeFormat === settings.timeFormat &&
      held.settings.clientMiddleware === settings.clientMiddleware && held.settings.features === settings.features
    ) {
      return held.client;
    }
    const { prefix, timeFormat, clientMiddleware, features } = settings;
    const client = new Client({ transport, prefix, timeFormat, middleware: clientMiddleware, features });
    clients.set(transport, { settings: { prefix, timeFormat, clientMiddleware, features }, client });
    return client;
  };
}

/** The clients of {@link pollAndDrain}, shared by its calls in this isolate. */
const sharedClient = clientCache();

/**
 * Runs ticks for one set of options, each on a transport: the features are
 * made once, and a Client per transport is kept (see {@link clientCache}).
 *
 * @example
 * ```ts
 * const tick = ticker({ jobs: [SendEmail], budgetMs: 25_000 });
 * await tick(transportFor(env));
 * ```
 */
export function ticker(options: Omit<TickOptions, "transport">, clients: ClientSource = clientCache()): {
  (transport: Transport): Promise<TickResult>;
  poll(transport: Transport): Promise<PollResult>;
  drain(transport: Transport): Promise<DrainResult>;
} {
  const budgetMs = tickBudget(options.budgetMs, "run a cron tick");
  const { periodic, periodicOwner, metrics, clientMiddleware: _middleware, maxRecoveries, ...drainOptions } = options;
  const pollFeatures: readonly WorkerFeature[] = withDefaultFeatures(
    options.features,
    { periodic, periodicOwner },
    { periodic: true },
  );
  const drainFeatures = withDefaultFeatures(options.features, { metrics }, { metrics: true });
  const poll = (transport: Transport) =>
    pollEngine({
      client: clients(transport, options),
      logger: options.logger,
      maxRecoveries,
      onError: options.onError,
      features: pollFeatures,
    });
  const drainOn = (transport: Transport, budget = budgetMs) =>
    drainEngine({ ...drainOptions, transport, budgetMs: budget, features: drainFeatures });
  const tick = async (transport: Transport): Promise<TickResult> => {
    const started = Date.now();
    const polled = await poll(transport);
    const left = Math.max(1, budgetMs - (Date.now() - started));
    return { poll: polled, drain: await drainOn(transport, left) };
  };
  return Object.assign(tick, { poll, drain: (transport: Transport) => drainOn(transport) });
}
