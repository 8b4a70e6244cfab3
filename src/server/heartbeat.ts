/**
 * The heartbeat: every 10 s, one MULTI registers the process, rewrites its
 * info and work hashes, flushes the stats and pops one remote signal. This is
 * what Sidekiq's Web UI and `ProcessSet` read.
 *
 * @module
 */
import type { Keys } from "../keys.ts";
import { type BeatResult, HEARTBEAT } from "../scripts/heartbeat.ts";
import { pollCheckKeys } from "../scripts/poll_check.ts";
import type { Transport } from "../transport/transport.ts";
import type { BusyUnit } from "./manager.ts";
import { type JobCounters, statKeys, STATS_TTL } from "./job_counters.ts";

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
  capsules: readonly { readonly name: string; readonly busy: ReadonlyMap<number, BusyUnit> }[];
  stats: JobCounters;
  /** Seconds the process hash outlives a missed beat; Sidekiq's 60. */
  ttl: number;
  /** Resident memory in bytes, when known. */
  rss: () => number | undefined;
  quiet: () => boolean;
  /**
   * Run the poll check inside each beat (HTTP transports: one billed command
   * then both beats and checks), with these due keys (features' poll
   * tasks); the result comes back with the beat. Undefined: no check.
   */
  pollCheck?: readonly string[];
  /** Sorted sets whose highest score each beat reads and returns (features' `watch`), in order. */
  watch?: readonly string[];
}

/**
 * Writes heartbeats.
 *
 * @example
 * ```ts
 * const hb = new Heartbeat({ transport, keys: keys(), info, capsules, stats, ttl: 60, rss: () => undefined, quiet: () => false });
 * const { signal } = await hb.beat(); // "TSTP" if someone asked this process to quiet
 * ```
 */
export class Heartbeat {
  #options: HeartbeatOptions;
  #rttUs = 0;
  #hadWork = false;
  /**
   * Counts sent with an id and not yet confirmed: a beat whose reply was
   * lost sends the same id and counts again, and Redis adds them once.
   */
  #flush: { id: string; processed: number; failed: number } | undefined;
  #flushes = 0;

  constructor(options: HeartbeatOptions) {
    this.#options = options;
  }

  /**
   * Beats once. Resolves to a remote signal (`TSTP`, `TERM`, `TTIN`) if one
   * was waiting, and whether the process entry still existed.
   */
  async beat(): Promise<BeatResult> {
    const { keys: k, info, ttl } = this.#options;
    const identity = info.identity;
    const now = Date.now();
    const work: string[] = [];
    for (const capsule of this.#options.capsules) {
      for (const [slot, busy] of capsule.busy) {
        const entry: Record<string, unknown> = {
          queue: busy.unit.queue,
          payload: busy.unit.raw,
          run_at: Math.floor(busy.startedAt / 1000),
        };
        // The latest `ctx.progress()` (Sidekiq's readers ignore the field).
        if (busy.control.progress !== undefined) entry.progress = jsonOrText(busy.control.progress);
        if (busy.control.stopped !== undefined) entry.stopping = busy.control.stopped;
        work.push(`${capsule.name}:${slot.toString(36)}`, JSON.stringify(entry));
      }
    }
    if (!this.#flush) {
      const { processed, failed } = this.#options.stats.take();
      if (processed || failed) this.#flush = { id: String(++this.#flushes), processed, failed };
    }
    const flush = this.#flush;
    const rss = this.#options.rss();
    const watch = this.#options.watch ?? [];
    const fields = [
      "info",
      JSON.stringify(info),
      "busy",
      work.length / 2,
      "beat",
      String(now / 1000),
      "quiet",
      String(this.#options.quiet()),
      "rtt_us",
      this.#rttUs,
      "rss",
      rss === undefined ? 0 : Math.round(rss / 1024),
      "concurrency",
      info.concurrency,
    ];
    const started = performance.now();
    const result = await this.#options.transport.script(HEARTBEAT, [
      k.processes,
      k.process(identity),
      k.work(identity),
      // Sidekiq 7+ reads `:work`, Sidekiq 6 `:workers`: both are written so
      // either version's API and Web UI show this process's jobs.
      k.legacyWork(identity),
      k.signals(identity),
      ...statKeys(k, new Date(now)),
      ...watch,
      ...(this.#options.pollCheck ? pollCheckKeys(k, this.#options.pollCheck) : []),
    ], [
      identity,
      ttl,
      STATS_TTL,
      flush?.processed ?? 0,
      flush?.failed ?? 0,
      flush?.id ?? "",
      // An idle process that wrote no work last beat has none to clear.
      work.length || this.#hadWork ? 1 : 0,
      this.#options.pollCheck ? now / 1000 : "",
      watch.length,
      fields.length,
      ...fields,
      ...work,
    ]);
    this.#flush = undefined;
    this.#rttUs = Math.round((performance.now() - started) * 1000);
    this.#hadWork = work.length > 0;
    return result;
  }

  /** Whether counts wait to be written (a last beat at exit writes them). */
  get unflushed(): boolean {
    return this.#flush !== undefined || this.#options.stats.processed > 0 || this.#options.stats.failed > 0;
  }

  /**
   * Unregisters at a clean exit: `SREM processes`, `UNLINK` the work hash,
   * and mark the entry quiet, in one MULTI (all idempotent). The info hash
   * expires on its own. Counts still unwritten go first, in a beat.
   */
  async clear(): Promise<void> {
    const { keys: k, info } = this.#options;
    if (this.unflushed) await this.beat();
    await this.#options.transport.pipeline([
      ["SREM", k.processes, info.identity],
      ["UNLINK", k.work(info.identity), k.legacyWork(info.identity)],
      ["HSET", k.process(info.identity), "quiet", "true", "busy", 0],
    ], { atomic: true });
  }
}

/** A progress value as JSON can carry it: itself, or its text if it is not JSON (a BigInt, a cycle). */
function jsonOrText(value: unknown): unknown {
  try {
    JSON.stringify(value);
    return value;
  } catch {
    return String(value);
  }
}
