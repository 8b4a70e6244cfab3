/**
 * The periodic schedules in Redis (what Sidekiq Enterprise shows as its
 * "Cron" tab): each schedule's timing, job, next and last run, last jid and
 * whether it is enabled, with pause, resume and "enqueue now".
 *
 * @module
 */
import type { Client } from "../../client.ts";
import { EdgekiqError } from "../../errors.ts";
import { PERIODIC_CONTROL } from "./control_script.ts";
import { buildPeriodicJobs } from "./periodic_jobs.ts";
import { type MissedPolicy, parseSpec } from "./schedule.ts";
import { firstTick, timingProblem } from "./ticks.ts";
import { readBatch } from "../../scripts/read_batch.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { invalid } from "../../api/arguments.ts";
import { arr, pairs, str } from "../../transport/reply_readers.ts";

/** One schedule as stored. */
export interface PeriodicEntry {
  /** Its stable name. */
  readonly name: string;
  /** The job's class. */
  readonly job: string;
  /** The queue its jobs go to. */
  readonly queue: string;
  /** The job's arguments. */
  readonly args: readonly unknown[];
  /** The cron expression, or `null` for an `every` schedule. */
  readonly cron: string | null;
  /** The cron's time zone (`null`: UTC). */
  readonly tz: string | null;
  /** Seconds between ticks, or `null` for a cron schedule. */
  readonly every: number | null;
  /** The missed-tick policy. */
  readonly missed: MissedPolicy;
  /** `false` while paused. */
  readonly enabled: boolean;
  /** The next due tick (`null` while paused, or if it never runs again). */
  readonly next: Date | null;
  /** The tick last enqueued. */
  readonly lastRun: Date | null;
  /** When that happened (or the last "enqueue now"). */
  readonly lastEnqueuedAt: Date | null;
  /** The jid last enqueued. */
  readonly lastJid: string | null;
  /** The owners whose lease on it is alive. */
  readonly owners: readonly string[];
  /**
   * Why it cannot be enqueued, or `null`: what a process that failed to
   * enqueue it recorded (cleared by the next successful claim), else whether
   * this runtime can read its timing.
   */
  readonly broken: string | null;
}

const date = (seconds: string | null): Date | null =>
  seconds === null || !Number.isFinite(Number(seconds)) ? null : new Date(Number(seconds) * 1000);

/**
 * The periodic schedules, read from `edgekiq:periodic:due` and each
 * schedule's hash. Listing drops schedules whose owners' leases have all
 * expired (as Sidekiq's `ProcessSet` forgets dead processes when read).
 *
 * @example
 * ```ts
 * const periodic = new PeriodicSet(client);
 * for (const s of await periodic.list()) console.log(s.name, s.next, s.lastJid, s.enabled);
 * await periodic.pause("Report 0 7 * * * Europe/Berlin");
 * const jid = await periodic.enqueueNow("Report 0 7 * * * Europe/Berlin");
 * ```
 */
export class PeriodicSet {
  #client: Client;

  /**
   * Reads schedules through `client`.
   *
   * @param client The client whose transport, key prefix and middleware to use.
   */
  constructor(client: Client) {
    this.#client = client;
  }

  /**
   * How many schedules there are (live or not yet dropped).
   *
   * @example
   * ```ts
   * await new PeriodicSet(client).size(); // 3
   * ```
   */
  async size(): Promise<number> {
    return Number(await this.#client.transport.call("ZCARD", this.#client.keys.periodicDue));
  }

  /**
   * Every live schedule, sorted by name: one ZRANGE and one read-only script
   * over every schedule's hash (two commands however many there are), plus
   * one command per schedule found expired (it is dropped).
   *
   * @example
   * ```ts
   * const paused = (await periodic.list()).filter((s) => !s.enabled);
   * ```
   */
  async list(options: { now?: number } = {}): Promise<PeriodicEntry[]> {
    const k = this.#client.keys;
    const scored = pairs(await this.#client.transport.call("ZRANGE", k.periodicDue, 0, -1, "WITHSCORES"));
    if (scored.length === 0) return [];
    const hashes = await readBatch(
      this.#client.transport,
      scored.map(([name]) => ["HGETALL", k.periodicSchedule(name)]),
    );
    const now = options.now ?? Date.now();
    const out: PeriodicEntry[] = [];
    for (let i = 0; i < scored.length; i++) {
      const entry = toEntry(scored[i][0], str(scored[i][1]), hashes[i], now / 1000);
      if (entry && entry.owners.length > 0) out.push(entry);
      else if ((await this.#control("gc", scored[i][0], now, [])) === "live" && entry) out.push(entry);
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * One schedule by name, or `null`.
   *
   * @example
   * ```ts
   * const s = await periodic.get("Ping every 60s");
   * ```
   */
  async get(name: string, options: { now?: number } = {}): Promise<PeriodicEntry | null> {
    this.#checkName("get", name);
    const k = this.#client.keys;
    const [score, hash] = await this.#client.transport.pipeline([
      ["ZSCORE", k.periodicDue, name],
      ["HGETALL", k.periodicSchedule(name)],
    ]);
    if (score === null) return null;
    return toEntry(name, str(score), hash, (options.now ?? Date.now()) / 1000);
  }

  /**
   * Pauses a schedule: it enqueues nothing until resumed (deploys keep it
   * paused). Resolves `false` if there is no such schedule.
   *
   * @example
   * ```ts
   * await periodic.pause("Report 0 7 * * *");
   * ```
   */
  async pause(name: string): Promise<boolean> {
    this.#checkName("pause", name);
    return (await this.#control("pause", name, Date.now(), [])) === "ok";
  }

  /**
   * Resumes a paused schedule from its next tick after now (ticks passed
   * while paused are not run). Resolves `false` if there is no such schedule.
   *
   * @example
   * ```ts
   * await periodic.resume("Report 0 7 * * *");
   * ```
   */
  async resume(name: string, options: { now?: number } = {}): Promise<boolean> {
    this.#checkName("resume", name);
    const now = options.now ?? Date.now();
    for (let attempt = 0; attempt < 3; attempt++) {
      const [specJson, timing] = await this.#read(name, "timing");
      const spec = parseSpec(specJson);
      if (!spec || timing === null) return false;
      const next = firstTick(spec, now / 1000, false);
      const reply = await this.#control("resume", name, now, [timing, next === Infinity ? "+inf" : next]);
      if (reply !== "respec") return reply === "ok";
    }
    throw new EdgekiqError(`Cannot resume periodic schedule '${name}' as its timing kept changing`);
  }

  /**
   * Enqueues the schedule's job now, outside its timing (its next tick is
   * unchanged). The job's `periodic` field says `manual: true`. Resolves the
   * jid, or `null` if there is no such schedule or client middleware stopped
   * the push.
   *
   * @example
   * ```ts
   * const jid = await periodic.enqueueNow("Report 0 7 * * *");
   * ```
   */
  async enqueueNow(name: string, options: { now?: number } = {}): Promise<string | null> {
    this.#checkName("enqueue", name);
    const now = options.now ?? Date.now();
    for (let attempt = 0; attempt < 3; attempt++) {
      const [specJson, specDigest] = await this.#read(name, "sdig");
      const spec = parseSpec(specJson);
      if (!spec || specDigest === null) return null;
      const [job] = await buildPeriodicJobs(this.#client, {
        name,
        spec,
        ticks: [Math.floor(now / 1000)],
        now,
        manual: true,
      });
      if (!job) return null;
      const reply = await this.#control("enqueue", name, now, [specDigest, job.queue, job.json, job.jid], job.queue);
      if (reply !== "respec") return reply === "ok" ? job.jid : null;
    }
    throw new EdgekiqError(`Cannot enqueue periodic schedule '${name}' as its spec kept changing`);
  }

  async #read(name: string, field: string): Promise<(string | null)[]> {
    const reply = await this.#client.transport.call("HMGET", this.#client.keys.periodicSchedule(name), "spec", field);
    return arr(reply).map((v) => str(v));
  }

  #control(
    op: "pause" | "resume" | "enqueue" | "gc",
    name: string,
    now: number,
    args: (string | number)[],
    queue = "default",
  ): Promise<string> {
    const k = this.#client.keys;
    return this.#client.transport.script(
      PERIODIC_CONTROL,
      [k.periodicDue, k.periodicSchedule(name), k.queues, k.queue(queue)],
      [op, name, now / 1000, ...args],
    );
  }

  #checkName(action: string, name: unknown): void {
    if (typeof name !== "string" || name === "") {
      throw invalid(`${action} periodic schedule`, "name", "a non-empty string", name);
    }
  }
}

function toEntry(name: string, score: string | null, hash: RedisReply, now: number): PeriodicEntry | null {
  const fields = new Map(pairs(hash).map(([f, v]) => [f, str(v)]));
  const spec = parseSpec(fields.get("spec"));
  if (!spec) return null;
  const owners: string[] = [];
  for (const [field, value] of fields) {
    if (field.startsWith("lease:") && Number(value) >= now) owners.push(field.slice(6));
  }
  const paused = fields.get("paused") === "1";
  return {
    name,
    job: spec.payload.class,
    queue: spec.payload.queue,
    args: spec.payload.args,
    cron: spec.cron ?? null,
    tz: spec.tz ?? null,
    every: spec.every ?? null,
    missed: spec.missed === "catchUp" ? { catchUp: spec.catchUp ?? 1 } : "skip",
    enabled: !paused,
    next: paused ? null : date(score),
    lastRun: date(fields.get("last") ?? null),
    lastEnqueuedAt: date(fields.get("last_at") ?? null),
    lastJid: fields.get("last_jid") ?? null,
    owners,
    broken: fields.get("broken") ?? timingProblem(spec, now),
  };
}
