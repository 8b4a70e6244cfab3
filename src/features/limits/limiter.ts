/**
 * Limiters shared by every process on a Redis, Sidekiq Enterprise's set:
 * concurrent, bucket, window, leaky, points and unlimited. Each call is
 * one script that reads Redis's clock (never a process's), so processes
 * whose clocks disagree still share one limit. Names may be built per
 * tenant (`"stripe-" + tenantId`): every key a limiter writes expires.
 *
 * @module
 */
import { ConfigError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import type { Keys } from "../../keys.ts";
import type { Script } from "../../transport/script.ts";
import type { RedisArg, Transport } from "../../transport/transport.ts";
import { BUCKET_TAKE } from "./bucket_script.ts";
import { CONCURRENT_TAKE } from "./concurrent_script.ts";
import { type Duration, durationMs } from "./duration.ts";
import { LEAKY_TAKE } from "./leaky_script.ts";
import type { LimiterReply } from "./limiter_lua.ts";
import { OverLimit } from "./over_limit.ts";
import { POINTS_TAKE } from "./points_script.ts";
import { CONCURRENT_RELEASE } from "./release_script.ts";
import { CONCURRENT_RENEW } from "./renew_script.ts";
import { WINDOW_TAKE } from "./window_script.ts";

/** The kinds of limiter. */
export type LimiterKind = "concurrent" | "bucket" | "window" | "leaky" | "points" | "unlimited";

/** Where a limiter's keys live: a job's context (`ctx`) is one. */
export interface LimiterSite {
  readonly transport: Transport;
  readonly keys: Keys;
  /** The job's id, when called from a job: a concurrent limiter's holder. */
  readonly jid?: string;
}

/** Options every limiter takes. */
export interface LimiterOptions {
  /**
   * How long a limiter nobody uses keeps its counters and its place on the
   * Limits page (default one day). Its state expires sooner, as soon as it
   * holds nothing that matters.
   */
  ttl?: Duration;
}

/** Options of a concurrent limiter. */
export interface ConcurrentOptions extends LimiterOptions {
  /**
   * How long a slot is held if its holder goes silent (default 60 s): a
   * process that dies holding one gives it back when the lease ends. A
   * holder that runs longer renews its lease at each half of it.
   */
  lease?: Duration;
}

/** Options of a leaky limiter. */
export interface LeakyOptions extends LimiterOptions {
  /** How many calls may go at once before the drip rate applies (default: `limit`). */
  burst?: number;
}

/** Options of one call. */
export interface TakeOptions {
  /** What a points limiter's call costs (default 1). */
  cost?: number;
  /** Who holds a concurrent slot (default: the job's jid, else a random id). */
  holder?: string;
}

/** A slot or token taken: what `release` needs. */
export interface Taken extends LimiterReply {
  /** The holder of a concurrent slot (undefined for other kinds). */
  readonly holder?: string;
}

const DEFAULT_TTL_MS = 86_400_000;
const DEFAULT_LEASE_MS = 60_000;

/**
 * A named limit, shared through Redis. Build one with `Limiter.concurrent`,
 * `.bucket`, `.window`, `.leaky`, `.points` or `.unlimited`; building one is
 * free (nothing is written until it is used), so build them per call with
 * a tenant's name.
 *
 * @example
 * ```ts
 * const SyncTenant = defineJob({ name: "SyncTenant", async perform(ctx, tenant: string) {
 *   await Limiter.concurrent(`stripe-${tenant}`, 5).within(ctx, () => stripe.sync(tenant));
 * } });
 * ```
 */
export class Limiter {
  /** Its name, shared by every process. */
  readonly name: string;
  readonly kind: LimiterKind;
  /** Slots (concurrent), calls per interval, drips per interval (leaky) or points (points). */
  readonly limit: number;
  /** The interval (ms): the lease of a concurrent limiter. */
  readonly perMs: number;
  /** Burst of a leaky limiter. */
  readonly burst: number;
  readonly #ttlMs: number;

  private constructor(
    kind: LimiterKind,
    spec: { name: unknown; limit: unknown; per: number; burst?: unknown; ttl?: unknown },
  ) {
    const { name, limit } = spec;
    if (typeof name !== "string" || name.length === 0 || name.length > 512) {
      throw new ConfigError(
        `Cannot create a ${kind} limiter as its name must be a string of 1 to 512 characters: current value is ${
          describeValue(name)
        }`,
      );
    }
    const whole = kind !== "points";
    if (
      typeof limit !== "number" || !Number.isFinite(limit) || limit <= 0 || (whole && !Number.isInteger(limit))
    ) {
      throw new ConfigError(
        `Cannot create limiter '${name}' as its limit must be ${
          whole ? "a whole number" : "a number"
        } > 0: current value is ${describeValue(limit)}`,
      );
    }
    const burst = spec.burst ?? limit;
    if (typeof burst !== "number" || !Number.isInteger(burst) || burst < 1) {
      throw new ConfigError(
        `Cannot create limiter '${name}' as 'burst' must be a whole number >= 1: current value is ${
          describeValue(burst)
        }`,
      );
    }
    this.name = name;
    this.kind = kind;
    this.limit = limit;
    this.perMs = spec.per;
    this.burst = burst;
    this.#ttlMs = Math.max(spec.ttl === undefined ? DEFAULT_TTL_MS : readDuration(name, "ttl", spec.ttl), spec.per);
  }

  /**
   * At most `limit` holders at once; a holder's lease ends if its process
   * dies, and its slot returns then.
   *
   * @example
   * ```ts
   * const erp = Limiter.concurrent("erp", 50, { lease: "30s" });
   * ```
   */
  static concurrent(name: string, limit: number, options: ConcurrentOptions = {}): Limiter {
    const lease = options.lease === undefined ? DEFAULT_LEASE_MS : readDuration(name, "lease", options.lease);
    return new Limiter("concurrent", { name, limit, per: lease, ttl: options.ttl });
  }

  /**
   * At most `limit` calls per fixed interval (`"1s"`, `"1m"`...), the
   * intervals starting at multiples of it in Redis time.
   *
   * @example
   * ```ts
   * const mail = Limiter.bucket("mailgun", 100, "1s");
   * ```
   */
  static bucket(name: string, limit: number, per: Duration, options: LimiterOptions = {}): Limiter {
    return new Limiter("bucket", { name, limit, per: readDuration(name, "per", per), ttl: options.ttl });
  }

  /**
   * At most `limit` calls in any sliding interval.
   *
   * @example
   * ```ts
   * const api = Limiter.window("github", 5000, "1h");
   * ```
   */
  static window(name: string, limit: number, per: Duration, options: LimiterOptions = {}): Limiter {
    return new Limiter("window", { name, limit, per: readDuration(name, "per", per), ttl: options.ttl });
  }

  /**
   * A bucket of `burst` calls (default `limit`) that drains at `limit` per
   * interval: bursts up to its size, then a steady drip.
   *
   * @example
   * ```ts
   * const sms = Limiter.leaky("twilio", 60, "1m", { burst: 10 });
   * ```
   */
  static leaky(name: string, limit: number, per: Duration, options: LeakyOptions = {}): Limiter {
    return new Limiter("leaky", {
      name,
      limit,
      per: readDuration(name, "per", per),
      burst: options.burst,
      ttl: options.ttl,
    });
  }

  /**
   * A budget of `limit` points refilling at `limit` per interval; each call
   * spends its `cost` (GraphQL-style query costs).
   *
   * @example
   * ```ts
   * const shopify = Limiter.points("shopify", 1000, "1m");
   * await shopify.within(ctx, () => query(q), { cost: 50 });
   * ```
   */
  static points(name: string, limit: number, per: Duration, options: LimiterOptions = {}): Limiter {
    return new Limiter("points", { name, limit, per: readDuration(name, "per", per), ttl: options.ttl });
  }

  /**
   * No limit at all, and no command: for configuration that turns a limit off.
   *
   * @example
   * ```ts
   * const limit = config.erpSlots ? Limiter.concurrent("erp", config.erpSlots) : Limiter.unlimited("erp");
   * ```
   */
  static unlimited(name: string): Limiter {
    return new Limiter("unlimited", { name, limit: 1, per: 1000 });
  }

  /**
   * Asks for one slot or token: one script call (none for `unlimited`).
   * Resolves to what the limiter decided; over the limit nothing is taken.
   *
   * @example
   * ```ts
   * const taken = await erp.take({ transport, keys: keys() });
   * if (taken.ok) try { await work(); } finally { await erp.release({ transport, keys: keys() }, taken); }
   * ```
   */
  async take(site: LimiterSite, options: TakeOptions = {}): Promise<Taken> {
    if (this.kind === "unlimited") return { ok: true, waitMs: 0, remaining: Infinity };
    const { script, value, holder } = this.#call(site, options);
    const keys = [site.keys.limiter(this.name), site.keys.limiterStats(this.name), site.keys.limiters];
    const head: RedisArg[] = [this.name, this.#ttlMs, this.limit, this.perMs, this.burst];
    const reply = await takeTogether(site.transport, { script, keys, head }, value);
    return holder === undefined ? reply : { ...reply, holder };
  }

  /**
   * Gives a concurrent slot back (a no-op for other kinds, and for a slot
   * already given back): `heldMs` is how long it was held, which the
   * limiter hints as the wait to callers over its limit.
   *
   * @example
   * ```ts
   * await erp.release(site, taken, 120);
   * ```
   */
  async release(site: LimiterSite, taken: Taken, heldMs = 0): Promise<void> {
    if (this.kind !== "concurrent" || !taken.ok || taken.holder === undefined) return;
    const keys = [site.keys.limiter(this.name), site.keys.limiterStats(this.name)];
    await site.transport.script(CONCURRENT_RELEASE, keys, [2, 3, Math.round(heldMs), 0, taken.holder]);
  }

  /**
   * Runs `fn` within the limit: a slot or token is taken first and a
   * concurrent slot given back after (its lease renewed while `fn` runs
   * longer than half of it). Over the limit it throws {@link OverLimit}, a
   * `RunLater`: inside `perform` the job goes back to run when the limiter
   * expects room (with jitter), not as a failure and not as a retry, and
   * no processor waits for it.
   *
   * @example
   * ```ts
   * async perform(ctx, tenant: string) {
   *   return await Limiter.concurrent(`erp-${tenant}`, 5).within(ctx, () => erp.push(tenant));
   * }
   * ```
   */
  async within<T>(site: LimiterSite, fn: () => T | Promise<T>, options: TakeOptions = {}): Promise<T> {
    if (this.kind === "unlimited") return await fn();
    // A holder of its own, not the job's jid: two calls in one job (or one beside the job's declared limit on the
    // same name) are two holders, and releasing one does not free the other.
    const holder = options.holder ?? `${site.jid ?? "run"}:${crypto.randomUUID()}`;
    const taken = await this.take(site, { ...options, holder });
    if (!taken.ok) throw new OverLimit(this.name, taken.waitMs);
    if (this.kind !== "concurrent") return await fn();
    const started = Date.now();
    const stop = keepLease(site, [site.keys.limiter(this.name)], taken.holder!, this.perMs);
    try {
      return await fn();
    } finally {
      stop();
      // A release that fails must not turn a finished run into a failure (and a retry that repeats it): the
      // slot's lease frees it.
      await this.release(site, taken, Date.now() - started).catch(() => {});
    }
  }

  #call(site: LimiterSite, options: TakeOptions): { script: Script<LimiterReply[]>; value: RedisArg; holder?: string } {
    switch (this.kind) {
      case "concurrent": {
        const holder = options.holder ?? site.jid ?? crypto.randomUUID();
        return { script: CONCURRENT_TAKE, value: holder, holder };
      }
      case "bucket":
        return { script: BUCKET_TAKE, value: 1 };
      case "window":
        return { script: WINDOW_TAKE, value: crypto.randomUUID() };
      case "leaky":
        return { script: LEAKY_TAKE, value: 1 };
      default: {
        const cost = options.cost ?? 1;
        if (typeof cost !== "number" || !Number.isFinite(cost) || cost <= 0 || cost > this.limit) {
          throw new ConfigError(
            `Cannot spend points of '${this.name}' as 'cost' must be > 0 and at most its budget ${this.limit}: current value is ${
              describeValue(cost)
            }`,
          );
        }
        return { script: POINTS_TAKE, value: cost };
      }
    }
  }
}

/** Most calls one script decides (a bound on its ARGV and its running time). */
const MAX_TOGETHER = 500;

/** Takes of one limiter waiting for the call on its way to return. */
interface Lane {
  busy: boolean;
  waiting: { value: RedisArg; done: (reply: LimiterReply | undefined, error?: unknown) => void }[];
}

const lanes = new WeakMap<Transport, Map<string, Lane>>();

/**
 * Sends a take now if no call of this limiter is on its way, else with
 * every take of it made meanwhile in one call once it returns: jobs fetched
 * together ask their limiter once between them. A failed call fails each of
 * its takes (none is sent again: a take is not idempotent).
 */
function takeTogether(
  transport: Transport,
  call: { script: Script<LimiterReply[]>; keys: string[]; head: RedisArg[] },
  value: RedisArg,
): Promise<LimiterReply> {
  let byLimiter = lanes.get(transport);
  if (!byLimiter) lanes.set(transport, byLimiter = new Map());
  const id = `${call.script.name}\n${call.keys[0]}\n${call.head.join("\n")}`;
  let lane = byLimiter.get(id);
  if (!lane) byLimiter.set(id, lane = { busy: false, waiting: [] });
  const promise = new Promise<LimiterReply>((resolve, reject) => {
    lane.waiting.push({ value, done: (reply, error) => (reply ? resolve(reply) : reject(error)) });
  });
  if (!lane.busy) void flush(transport, call, lane, () => byLimiter.delete(id));
  return promise;
}

async function flush(
  transport: Transport,
  call: { script: Script<LimiterReply[]>; keys: string[]; head: RedisArg[] },
  lane: Lane,
  idle: () => void,
): Promise<void> {
  lane.busy = true;
  while (lane.waiting.length) {
    const sent = lane.waiting.splice(0, MAX_TOGETHER);
    try {
      const replies = await transport.script(call.script, call.keys, [...call.head, ...sent.map((w) => w.value)]);
      sent.forEach((w, i) => w.done(replies[i], replies[i] ? undefined : new Error("a limiter call had no reply")));
    } catch (error) {
      for (const w of sent) w.done(undefined, error ?? new Error("a limiter call failed"));
    }
  }
  lane.busy = false;
  idle();
}

/**
 * Renews `holder`'s leases on the limiters `keys` at each half lease until
 * the returned function is called: a long job keeps its slots. A renewal
 * that fails is tried again at the next half.
 *
 * @example
 * ```ts
 * const stop = keepLease(site, [site.keys.limiter("erp")], jid, 60_000);
 * try { await work(); } finally { stop(); }
 * ```
 */
export function keepLease(site: LimiterSite, keys: string[], holder: string, leaseMs: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const arm = () => {
    timer = setTimeout(() => {
      site.transport.script(CONCURRENT_RENEW, keys, [leaseMs, ...keys.map(() => holder)]).catch(() => {}).finally(
        () => {
          if (!stopped) arm();
        },
      );
    }, Math.max(1, Math.floor(leaseMs / 2)));
  };
  arm();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function readDuration(name: unknown, what: string, value: unknown): number {
  const ms = durationMs(value);
  if (ms === undefined) {
    throw new ConfigError(
      `Cannot create limiter '${
        String(name)
      }' as '${what}' must be seconds or a duration like "1s", "5m": current value is ${describeValue(value)}`,
    );
  }
  return ms;
}
