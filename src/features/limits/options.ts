/**
 * Limits declared on a job (`defineJob({ limits: [...] })`), checked when
 * the job is defined, and the limiters each run of it asks.
 *
 * @module
 */
import { describeValue } from "../../describe_value.ts";
import type { OptionRules } from "../../option_rules.ts";
import type { Duration } from "./duration.ts";
import { Limiter } from "./limiter.ts";

/** What part of a limiter's name a job's args give (a tenant's id, say). */
export type LimitKey = (args: unknown[]) => string | number;

/** Fields every declared limit takes. */
interface DeclaredBase {
  /**
   * The limiter's name; default `<class>:concurrency`, `<class>:rate` or
   * `<class>:points`. Two jobs that name the same limiter share it.
   */
  name?: string;
  /** A limiter per key: its name gets `:<key(args)>` (one limit per tenant). */
  key?: LimitKey;
  /** How long an unused limiter keeps its counters (default one day). */
  ttl?: Duration;
}

/** At most `concurrency` runs at once. */
export interface ConcurrencyLimit extends DeclaredBase {
  concurrency: number;
  /** How long a slot outlives a process that died holding it (default 60 s); a long job renews it. */
  lease?: Duration;
}

/** At most `rate` runs `per` interval. */
export interface RateLimit extends DeclaredBase {
  rate: number;
  per: Duration;
  /** `"window"` (default: any sliding interval), `"bucket"` (fixed intervals) or `"leaky"` (a drip with a burst). */
  kind?: "window" | "bucket" | "leaky";
  /** A leaky limit's burst (default `rate`). */
  burst?: number;
}

/** Each run spends `cost` points of a budget of `points` that refills `per` interval. */
export interface PointsLimit extends DeclaredBase {
  points: number;
  per: Duration;
  /** What one run costs (a number, or from its args); default 1. */
  cost?: number | ((args: unknown[]) => number);
}

/** One limit declared on a job. */
export type DeclaredLimit = ConcurrencyLimit | RateLimit | PointsLimit;

/** The options flow limits add to `defineJob`. */
export interface LimitsJobOptions {
  /**
   * Limits every run of the job keeps: a run over one is not started but
   * put back to run when the limiter expects room. Needs the `flowLimits()`
   * feature on the worker (see docs/limits.md).
   */
  limits?: readonly DeclaredLimit[];
}

/** The options flow limits add to a push. */
export interface LimitsPushOptions {
  /**
   * The fair group this job belongs to (a tenant's id): jobs of a queue are
   * served round-robin across the groups that have work. A grouped queue
   * is edgekiq-only (see docs/limits.md); needs `flowLimits()` on the
   * client and the worker.
   */
  group?: string;
}

/** The payload field a grouped job carries its group in. */
export const GROUP_FIELD = "edgekiq_group";

/**
 * Checks a `group` push option: a string of 1 to 200 characters, no control characters.
 *
 * @example
 * ```ts
 * validateGroup("tenant-42", fail); // "tenant-42"
 * ```
 */
export function validateGroup(value: unknown, fail: (what: string, value: unknown) => Error): string {
  // deno-lint-ignore no-control-regex
  if (typeof value !== "string" || value.length === 0 || value.length > 200 || /[\x00-\x1f\x7f]/.test(value)) {
    throw fail("'group' must be a string of 1 to 200 characters without control characters", value);
  }
  return value;
}

/** One declared limit's limiter for a run, and what the run spends. */
export interface LimitCall {
  readonly limiter: Limiter;
  readonly cost: number;
}

const FIELDS: Record<string, readonly string[]> = {
  concurrency: ["concurrency", "name", "key", "ttl", "lease"],
  rate: ["rate", "per", "kind", "burst", "name", "key", "ttl"],
  points: ["points", "per", "cost", "name", "key", "ttl"],
};

/**
 * Checks a `limits` option: an array of `{ concurrency }`, `{ rate, per }`
 * or `{ points, per }` limits, each building a valid limiter.
 *
 * @example
 * ```ts
 * validateLimits([{ concurrency: 5, key: ([tenant]) => String(tenant) }], fail);
 * ```
 */
export function validateLimits(spec: unknown, fail: (what: string, value: unknown) => Error): readonly DeclaredLimit[] {
  if (!Array.isArray(spec)) throw fail("'limits' must be an array of limits", spec);
  return Object.freeze(spec.map((limit, i) => {
    const at = `'limits[${i}]'`;
    if (typeof limit !== "object" || limit === null) throw fail(`${at} must be an object`, limit);
    const o = limit as Record<string, unknown>;
    const kind = ["concurrency", "rate", "points"].filter((k) => o[k] !== undefined);
    if (kind.length !== 1) throw fail(`${at} must set exactly one of concurrency, rate, points`, limit);
    for (const field of Object.keys(o)) {
      if (!FIELDS[kind[0]].includes(field)) {
        throw fail(`${at} has an unknown field '${field}' (it takes ${FIELDS[kind[0]].join(", ")})`, limit);
      }
    }
    if (o.key !== undefined && typeof o.key !== "function") throw fail(`${at}.key must be a function`, o.key);
    if (o.cost !== undefined && typeof o.cost !== "function" && typeof o.cost !== "number") {
      throw fail(`${at}.cost must be a number or a function`, o.cost);
    }
    if (o.kind !== undefined && !["window", "bucket", "leaky"].includes(o.kind as string)) {
      throw fail(`${at}.kind must be "window", "bucket" or "leaky"`, o.kind);
    }
    try {
      // Built once to check its numbers: the same checks as at run time.
      limiterFor(o as unknown as DeclaredLimit, String(o.name ?? "check"));
    } catch (error) {
      throw fail(`${at} is invalid (${(error as Error).message})`, limit);
    }
    return Object.freeze({ ...o }) as unknown as DeclaredLimit;
  }));
}

/**
 * The limiters a run of class `className` with `args` asks, in order:
 * concurrency first (a slot is given back if a rate then says no; a rate's
 * token spent cannot be), then rates and points.
 *
 * @example
 * ```ts
 * limitCalls("Sync", [{ concurrency: 2, key: ([t]) => String(t) }], ["acme"]); // [{ limiter: Sync:concurrency:acme, cost: 1 }]
 * ```
 */
export function limitCalls(className: string, limits: readonly DeclaredLimit[], args: unknown[]): LimitCall[] {
  const calls = limits.map((limit) => {
    const base = limit.name ??
      `${className}:${"concurrency" in limit ? "concurrency" : "rate" in limit ? "rate" : "points"}`;
    const key = limit.key?.(args);
    if (key !== undefined && typeof key !== "string" && typeof key !== "number") {
      throw new TypeError(
        `Cannot name a limiter of ${className} as key(args) must be a string or number: current value is ${
          describeValue(key)
        }`,
      );
    }
    const name = key === undefined ? base : `${base}:${key}`;
    const cost = "points" in limit ? (typeof limit.cost === "function" ? limit.cost(args) : limit.cost ?? 1) : 1;
    return { limiter: limiterNamed(limit, name), cost };
  });
  return calls.sort((a, b) => Number(b.limiter.kind === "concurrent") - Number(a.limiter.kind === "concurrent"));
}

/**
 * Limiters made from declarations, per declaration and name: a job's
 * limiters are asked for every run, and a limiter is immutable. Bounded per
 * declaration (a key per tenant makes a name per tenant): past
 * `MAX_NAMED`, the cache starts over.
 */
const made = new WeakMap<DeclaredLimit, Map<string, Limiter>>();
const MAX_NAMED = 1000;

function limiterNamed(limit: DeclaredLimit, name: string): Limiter {
  let byName = made.get(limit);
  if (!byName) made.set(limit, byName = new Map());
  let limiter = byName.get(name);
  if (!limiter) {
    if (byName.size >= MAX_NAMED) byName.clear();
    byName.set(name, limiter = limiterFor(limit, name));
  }
  return limiter;
}

function limiterFor(limit: DeclaredLimit, name: string): Limiter {
  const ttl = limit.ttl === undefined ? {} : { ttl: limit.ttl };
  if ("concurrency" in limit) {
    return Limiter.concurrent(
      name,
      limit.concurrency,
      limit.lease === undefined ? ttl : { ...ttl, lease: limit.lease },
    );
  }
  if ("rate" in limit) {
    if (limit.kind === "bucket") return Limiter.bucket(name, limit.rate, limit.per, ttl);
    if (limit.kind === "leaky") return Limiter.leaky(name, limit.rate, limit.per, { ...ttl, burst: limit.burst });
    return Limiter.window(name, limit.rate, limit.per, ttl);
  }
  return Limiter.points(name, limit.points, limit.per, ttl);
}

/**
 * The rules of flow limits' options: `limits` on `defineJob`, read by the
 * worker only (a client without the feature may push the job).
 *
 * @example
 * ```ts
 * const defineJob = createJobDefiner<LimitsJobOptions>([LIMITS_OPTION_RULES]);
 * ```
 */
export const LIMITS_OPTION_RULES: OptionRules = {
  feature: "flowLimits()",
  job: { limits: { check: (value, fail) => validateLimits(value, fail), at: "run" } },
  push: { group: (value, fail) => validateGroup(value, fail) },
  fields: { [GROUP_FIELD]: "use the push option 'group'" },
};
