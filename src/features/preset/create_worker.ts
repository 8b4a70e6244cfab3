/**
 * `createWorker` as the root entry point exports it: the engine's worker
 * with the default features (metrics, periodic jobs) added.
 *
 * @module
 */
import { createWorker as createEngineWorker, type Worker, type WorkerOptions } from "../../server/launcher.ts";
import { type DefaultFeatureOptions, withDefaultFeatures } from "./built_in.ts";

/** Options for {@link createWorker}: the engine's, and those of the default features. */
export interface WorkerPresetOptions extends WorkerOptions, DefaultFeatureOptions {}

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
export function createWorker(options: WorkerPresetOptions): Worker {
  const { metrics, periodic, periodicOwner, ...engine } = options ?? ({} as WorkerPresetOptions);
  // A sharded namespace gets neither by default (each keeps state that must be one across it); asked for, they are
  // refused by name.
  const sharded = typeof engine.shards === "number" && engine.shards > 1;
  return createEngineWorker({
    ...engine,
    features: withDefaultFeatures(
      engine.features,
      { metrics, periodic, periodicOwner },
      sharded ? { metrics: metrics !== undefined && metrics !== false, periodic: periodic !== undefined } : undefined,
    ),
  });
}
