/**
 * What a running worker offers: its lifecycle (`run()` -> `quiet()` ->
 * `stop()`), its events and its running jobs. `createWorker` makes one; a
 * sharded namespace's worker (`sharded_worker.ts`) is one made of one per
 * shard.
 *
 * @module
 */
import type { Client } from "../client.ts";
import type { PollResult } from "./poller.ts";

/** Lifecycle events. */
export type WorkerEvent = "startup" | "quiet" | "shutdown" | "heartbeat" | "exit";

/** A job running in a worker, as `Worker.running()` lists it. */
export interface RunningJob {
  readonly capsule: string;
  readonly queue: string;
  /** The raw payload. */
  readonly payload: string;
  /** Epoch ms when it started. */
  readonly startedAt: number;
}

/** A running (or runnable) worker. */
export interface Worker {
  /** `hostname:pid:<12 hex>`. */
  readonly identity: string;
  /** The client this worker pushes with (same transport and options). */
  readonly client: Client;
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
  /** The jobs running now. */
  running(): RunningJob[];
  /** Polls once now: promotes due scheduled and retrying jobs, recovers orphans. */
  poll(): Promise<PollResult>;
  /** Writes the counters now (the heartbeat does this every beat). */
  flushStats(): Promise<void>;
  /** Beats now; returns the remote signal handled, if any. */
  beat(): Promise<string | null>;
  /** Logs every running job and capsule state (TTIN). */
  dump(): void;
}
