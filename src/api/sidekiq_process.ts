/**
 * One live worker process (Sidekiq's `Process`): what its heartbeat wrote,
 * and remote control through its signals list.
 *
 * @module
 */
import type { Client } from "../client.ts";
import { ConfigError } from "../errors.ts";
import { toEpochMs } from "../payload.ts";
import type { RedisReply } from "../transport/transport.ts";
import { invalid } from "./arguments.ts";
import { num } from "../transport/reply_readers.ts";

/** A remote signal a process picks up on its next heartbeat. */
export type ProcessSignal = "TSTP" | "TERM" | "TTIN";

/** One process's heartbeat data, as read from its hash. */
export interface ProcessData {
  /** The parsed `info` JSON: hostname, pid, tag, queues, labels, ... */
  info: Record<string, unknown>;
  /** Jobs running at the last beat. */
  busy: number;
  /** The last beat, epoch seconds. */
  beat: number;
  /** Whether the process is quiet (fetching no new jobs) or stopping. */
  quiet: boolean;
  /** Resident memory, KiB. */
  rss: number;
  /** The last heartbeat's Redis round trip, microseconds. */
  rttUs: number;
  /** The `concurrency` hash field, when written (else `info.concurrency`). */
  concurrency?: number;
}

/**
 * One worker process: `quiet()`, `stop()` and `dump()` ask it, through
 * Redis, to stop fetching, to shut down, or to log its running jobs.
 *
 * @example
 * ```ts
 * for (const p of await new ProcessSet(client).list()) {
 *   console.log(p.identity, p.busy, p.beat);
 *   if (p.tag === "old-deploy") await p.quiet();
 * }
 * ```
 */
export class Process {
  #client: Client;
  #identity: string;
  #data: ProcessData;

  /**
   * Wraps one process's heartbeat data.
   *
   * @param client The client to signal through.
   * @param identity The process identity (its member of `processes`).
   * @param data What its heartbeat wrote.
   */
  constructor(client: Client, identity: string, data: ProcessData) {
    this.#client = client;
    this.#identity = identity;
    this.#data = data;
  }

  /** The process identity (`hostname:pid:nonce`), the name of its hash. */
  get identity(): string {
    return this.#identity;
  }

  /** The whole parsed `info` JSON, unknown fields included. */
  get info(): Record<string, unknown> {
    return this.#data.info;
  }

  /** The host it runs on. */
  get hostname(): string | undefined {
    return text(this.#data.info.hostname);
  }

  /** Its process id. */
  get pid(): number | undefined {
    const pid = this.#data.info.pid;
    return typeof pid === "number" ? pid : undefined;
  }

  /** Its tag (an app name, say). */
  get tag(): string | undefined {
    return text(this.#data.info.tag);
  }

  /** How many jobs it runs at once. */
  get concurrency(): number {
    return this.#data.concurrency ?? num(this.#data.info.concurrency as RedisReply);
  }

  /** The queues it fetches from. */
  get queues(): string[] {
    const queues = this.#data.info.queues;
    return Array.isArray(queues) ? queues.map(String) : [];
  }

  /** Its labels. */
  get labels(): string[] {
    const labels = this.#data.info.labels;
    return Array.isArray(labels) ? labels.map(String) : [];
  }

  /** When it started, or `null` if not recorded. */
  get startedAt(): Date | null {
    const at = this.#data.info.started_at;
    return typeof at === "number" && Number.isFinite(at) ? new Date(toEpochMs(at)) : null;
  }

  /** The Sidekiq (or edgekiq) version it runs. */
  get version(): string | undefined {
    return text(this.#data.info.version);
  }

  /** Whether it runs embedded in another program (it then cannot be quieted or stopped remotely). */
  get embedded(): boolean {
    return this.#data.info.embedded === true;
  }

  /** Jobs running at its last beat. */
  get busy(): number {
    return this.#data.busy;
  }

  /** Its last heartbeat. */
  get beat(): Date {
    return new Date(toEpochMs(this.#data.beat));
  }

  /** Whether it is quiet or stopping (Sidekiq's `stopping?`). */
  get isQuiet(): boolean {
    return this.#data.quiet;
  }

  /** Resident memory, KiB. */
  get rss(): number {
    return this.#data.rss;
  }

  /** Its last heartbeat's Redis round trip, microseconds. */
  get rttUs(): number {
    return this.#data.rttUs;
  }

  /**
   * Asks it to stop fetching jobs (TSTP), as the Web UI's "Quiet" button.
   *
   * @example
   * ```ts
   * await proc.quiet();
   * ```
   */
  async quiet(): Promise<void> {
    if (this.embedded) throw new ConfigError(`Cannot quiet process ${this.#identity} as it is embedded`);
    return this.signal("TSTP");
  }

  /**
   * Asks it to shut down (TERM), as the Web UI's "Stop" button.
   *
   * @example
   * ```ts
   * await proc.stop();
   * ```
   */
  async stop(): Promise<void> {
    if (this.embedded) throw new ConfigError(`Cannot stop process ${this.#identity} as it is embedded`);
    return this.signal("TERM");
  }

  /**
   * Asks it to log its running jobs (TTIN).
   *
   * @example
   * ```ts
   * await proc.dump();
   * ```
   */
  dump(): Promise<void> {
    return this.signal("TTIN");
  }

  /**
   * Pushes a signal to its `<identity>-signals` list, which expires in 60 s
   * (LPUSH + EXPIRE in one MULTI); the process pops it on its next beat.
   *
   * @example
   * ```ts
   * await proc.signal("TSTP");
   * ```
   */
  async signal(signal: ProcessSignal): Promise<void> {
    if (signal !== "TSTP" && signal !== "TERM" && signal !== "TTIN") {
      throw invalid("signal process", "signal", `"TSTP", "TERM" or "TTIN"`, signal);
    }
    const key = this.#client.keys.signals(this.#identity);
    await this.#client.transport.pipeline([["LPUSH", key, signal], ["EXPIRE", key, 60]], { atomic: true });
  }
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
