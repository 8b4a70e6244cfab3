/**
 * The admin API over limiters: the ones in use (most recently used first),
 * each one's description and counters (uses and over-limit events in total,
 * this minute and the minute before), and a reset.
 *
 * @module
 */
import type { Keys } from "../../keys.ts";
import type { Transport } from "../../transport/transport.ts";
import type { LimiterKind } from "./limiter.ts";

/** A limiter as the admin API sees it. */
export interface LimiterInfo {
  readonly name: string;
  readonly kind: LimiterKind;
  /** Slots, calls, drips or points. */
  readonly limit: number;
  /** Its interval (ms): the lease of a concurrent limiter. */
  readonly perMs: number;
  /** Calls let through, in total (while its counters lived). */
  readonly use: number;
  /** Calls turned away (over the limit), in total. */
  readonly over: number;
  /** Calls let through and turned away in the current minute (Redis time). */
  readonly thisMinute: { readonly use: number; readonly over: number };
  /** The same, in the minute before. */
  readonly lastMinute: { readonly use: number; readonly over: number };
  /** A concurrent limiter's mean hold time (ms), 0 before the first release. */
  readonly holdMs: number;
  /** A concurrent limiter's holders now (leases not yet ended, as of its last use). */
  readonly held: number;
  /** When it was last used, epoch ms (Redis time). */
  readonly usedAt: number;
}

/**
 * Limiters, for operators and the Limits page.
 *
 * @example
 * ```ts
 * const limiters = new FlowLimiters({ transport, keys: keys() });
 * for (const l of await limiters.list()) console.log(l.name, l.use, l.lastMinute.over);
 * await limiters.reset("stripe-acme");
 * ```
 */
export class FlowLimiters {
  readonly #transport: Transport;
  readonly #keys: Keys;

  constructor(site: { transport: Transport; keys: Keys }) {
    this.#transport = site.transport;
    this.#keys = site.keys;
  }

  /** The limiters used within their `ttl`, most recently used first, at most `limit` (two commands each). */
  async list(limit = 100): Promise<LimiterInfo[]> {
    const names = await this.#transport.call("ZREVRANGE", this.#keys.limiters, 0, limit - 1) as string[];
    const found = await Promise.all((Array.isArray(names) ? names : []).map((name) => this.get(name)));
    return found.filter((info): info is LimiterInfo => info !== undefined);
  }

  /** One limiter's description and counters; undefined when unknown (never used, reset, or expired). */
  async get(name: string, now: number = Date.now()): Promise<LimiterInfo | undefined> {
    const flat = await this.#transport.call("HGETALL", this.#keys.limiterStats(name)) as string[];
    if (!Array.isArray(flat) || flat.length === 0) return undefined;
    const h: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]] = flat[i + 1];
    const num = (field: string) => Number(h[field] ?? 0) || 0;
    const kind = (h.kind ?? "unlimited") as LimiterKind;
    const held = kind === "concurrent"
      ? Number(await this.#transport.call("ZCOUNT", this.#keys.limiter(name), `(${now}`, "+inf")) || 0
      : 0;
    // The counters are per minute of Redis time: a minute gone by since the last use counts as empty.
    const minute = Math.floor(now / 60_000);
    const seen = num("minute");
    const current = { use: num("use_m"), over: num("over_m") };
    const previous = { use: num("use_p"), over: num("over_p") };
    const empty = { use: 0, over: 0 };
    return {
      name,
      kind,
      limit: num("limit"),
      perMs: num("per"),
      use: num("use"),
      over: num("over"),
      thisMinute: seen === minute ? current : empty,
      lastMinute: seen === minute ? previous : seen === minute - 1 ? current : empty,
      holdMs: num("hold"),
      held,
      usedAt: num("at"),
    };
  }

  /** Forgets a limiter: its holders, calls, counters and entry (every slot and token back at once). Resolves to whether it existed. */
  async reset(name: string): Promise<boolean> {
    const removed = await this.#transport.call("DEL", this.#keys.limiter(name), this.#keys.limiterStats(name));
    const listed = await this.#transport.call("ZREM", this.#keys.limiters, name);
    return Number(removed) + Number(listed) > 0;
  }
}
