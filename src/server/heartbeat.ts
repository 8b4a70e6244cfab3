/**
 * The heartbeat: every 10 s, one MULTI registers the process, rewrites its
 * info and work hashes, flushes the stats and pops one remote signal. This is
 * what Sidekiq's Web UI and `ProcessSet` read.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { HEARTBEAT } from "../scripts/heartbeat.ts";
import type { Transport } from "../transport/transport.ts";
import type { Capsule } from "./capsule.ts";
import { statKeys, type Stats, STATS_TTL } from "./stats.ts";

/** The static part of a process's `info` JSON (Sidekiq's `to_data`). */
export interface ProcessInfo {
  hostname: string;
  started_at: number;
  pid: number;
  tag: string;
  concurrency: number;
  queues: string[];
  weights: Record<string, number>[];
  capsules: Record<string, { concurrency: number; mode: string; weights: Record<string, number> }>;
  labels: string[];
  identity: string;
  version: string;
  embedded: boolean;
}

/** Options for {@link Heartbeat}. */
export interface HeartbeatOptions {
  transport: Transport;
  keys: Keys;
  info: ProcessInfo;
  capsules: readonly Capsule[];
  stats: Stats;
  /** Seconds the process hash outlives a missed beat; Sidekiq's 60. */
  ttl: number;
  /** Resident memory in bytes, when known. */
  rss: () => number | undefined;
  quiet: () => boolean;
}

/**
 * Writes heartbeats.
 *
 * @example
 * ```ts
 * const hb = new Heartbeat({ transport, keys: keys(), info, capsules, stats, ttl: 60, rss: () => undefined, quiet: () => false });
 * const signal = await hb.beat(); // "TSTP" if someone asked this process to quiet
 * ```
 */
export class Heartbeat {
  #o: HeartbeatOptions;
  #rttUs = 0;
  #hadWork = false;

  constructor(options: HeartbeatOptions) {
    this.#o = options;
  }

  /** Beats once. Resolves to a remote signal (`TSTP`, `TERM`, `TTIN`) if one was waiting. */
  async beat(): Promise<string | null> {
    const { keys: k, info, ttl } = this.#o;
    const identity = info.identity;
    const now = Date.now();
    const work: string[] = [];
    for (const capsule of this.#o.capsules) {
      for (const [slot, busy] of capsule.busy) {
        work.push(
          `${capsule.name}:${slot.toString(36)}`,
          JSON.stringify({ queue: busy.unit.queue, payload: busy.unit.raw, run_at: Math.floor(busy.startedAt / 1000) }),
        );
      }
    }
    const drained = this.#o.stats.take();
    const rss = this.#o.rss();
    const fields = [
      "info",
      JSON.stringify(info),
      "busy",
      work.length / 2,
      "beat",
      String(now / 1000),
      "quiet",
      String(this.#o.quiet()),
      "rtt_us",
      this.#rttUs,
      "rss",
      rss === undefined ? 0 : Math.round(rss / 1024),
      "concurrency",
      info.concurrency,
    ];
    const started = performance.now();
    let signal: string | null;
    try {
      signal = await this.#o.transport.script(HEARTBEAT, [
        k.processes,
        k.process(identity),
        k.work(identity),
        // Sidekiq 7+ reads `:work`, Sidekiq 6 `:workers`: both are written so
        // either version's API and Web UI show this process's jobs.
        k.legacyWork(identity),
        k.signals(identity),
        ...statKeys(k, new Date(now)),
      ], [
        identity,
        ttl,
        STATS_TTL,
        drained.processed,
        drained.failed,
        // An idle process that wrote no work last beat has none to clear.
        work.length || this.#hadWork ? 1 : 0,
        fields.length,
        ...fields,
        ...work,
      ]);
    } catch (error) {
      this.#o.stats.restore(drained);
      throw error;
    }
    this.#rttUs = Math.round((performance.now() - started) * 1000);
    this.#hadWork = work.length > 0;
    return signal;
  }

  /**
   * Unregisters at a clean exit: `SREM processes`, `UNLINK` the work hash,
   * and a last stats flush, in one MULTI. The info hash expires on its own.
   */
  async clear(): Promise<void> {
    const { keys: k, info } = this.#o;
    const drained = this.#o.stats.drain(k);
    try {
      await this.#o.transport.pipeline([
        ["SREM", k.processes, info.identity],
        ["UNLINK", k.work(info.identity), k.legacyWork(info.identity)],
        ["HSET", k.process(info.identity), "quiet", "true", "busy", 0],
        ...drained.commands,
      ], { atomic: true });
    } catch (error) {
      this.#o.stats.restore(drained);
      throw error;
    }
  }

  /** Flushes the stats alone (between beats, or for tests). */
  async flushStats(): Promise<void> {
    const drained = this.#o.stats.drain(this.#o.keys);
    if (drained.commands.length === 0) return;
    try {
      await this.#o.transport.pipeline(drained.commands, { atomic: true });
    } catch (error) {
      this.#o.stats.restore(drained);
      throw error;
    }
  }
}
