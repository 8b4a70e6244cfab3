/** Types for open-loop.mjs (the open-loop producer and latency recorder the Node latency children share). */

/** Epoch milliseconds with sub-millisecond precision, comparable across processes on one machine. */
export function epochMs(): number;

/** What an open-loop producer run did, and how late its pushes were against their schedule. */
export interface OpenLoopResult {
  jobs: number;
  counted: number;
  batches: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
}

/**
 * Pushes `rate` jobs a second for `seconds`, as batches of `[pushedAtEpochMs, counted]` argument pairs, after
 * `preludeJobs` uncounted ones at `preludeRate` a second.
 */
export function openLoop(options: {
  rate: number;
  seconds: number;
  warmupSeconds: number;
  push: (batch: Array<[number, number]>) => Promise<unknown>;
  maxInFlight?: number;
  preludeJobs?: number;
  preludeRate?: number;
}): Promise<OpenLoopResult>;

/** Push-to-start percentiles, in ms, and the rate the counted jobs started at. */
export interface LatencySummary {
  samples: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  achievedPerSec: number | null;
}

/** Collects push-to-start samples in a worker until `jobs` have started. */
export function latencyRecorder(jobs: number): {
  done: Promise<void>;
  record(pushedAt: number, counted: number): void;
  summary(): LatencySummary;
};
