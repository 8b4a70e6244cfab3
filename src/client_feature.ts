/**
 * What a client (and the admin API through it) takes from a feature: its
 * options, its client middleware and its part in the API's moves. This is
 * one slice of the whole contract, `Feature` in `src/features/feature.ts`;
 * each layer names only the slice it uses, and a `Feature` is all of them.
 *
 * @module
 */
import type { ClientMiddleware } from "./client_middleware.ts";
import { ConfigError, PayloadError } from "./errors.ts";
import type { EntryHooks } from "./entry_ops.ts";
import { type AnyJob, CORE_JOB_OPTIONS, CORE_PUSH_OPTIONS, optionOwner } from "./job.ts";
import type { OptionRules } from "./option_rules.ts";
import { describeValue } from "./describe_value.ts";
import { sanitize } from "./sanitize.ts";

/**
 * A feature, as a client sees it.
 *
 * @example
 * ```ts
 * const tenant: ClientFeature = {
 *   name: "tenant",
 *   client: (payload, _ctx, next) => {
 *     payload.tenant = currentTenant();
 *     return next();
 *   },
 * };
 * createClient({ transport, features: [tenant] });
 * ```
 */
export interface ClientFeature {
  /** Names the feature in errors and logs; one feature of a name per client or worker. */
  readonly name: string;
  /** Job and push options it owns, and payload fields it writes. */
  readonly options?: OptionRules;
  /** Runs around every push (and every move of an existing job to a queue), inside the client's own middleware. */
  readonly client?: ClientMiddleware;
  /** Its part in the admin API's deletes, enqueues and kills. */
  readonly entries?: EntryHooks;
  /**
   * True when the feature is correct run in each shard of a sharded
   * namespace on its own (`shards`): it keeps no state that must be one
   * across the namespace. A sharded client or worker refuses the others.
   */
  readonly perShard?: boolean;
}

/**
 * Checks a list of features: each has a name, and no name comes twice (two
 * instances of one feature would each think they own its options).
 *
 * @example
 * ```ts
 * const features = checkFeatures([uniqueJobs()], "create client");
 * ```
 */
export function checkFeatures<F extends ClientFeature>(
  features: readonly F[] | undefined,
  action: string,
): readonly F[] {
  if (features === undefined) return [];
  if (!Array.isArray(features)) {
    throw new ConfigError(`Cannot ${action} as 'features' must be an array of features`);
  }
  const seen = new Set<string>();
  for (const feature of features) {
    const name = (feature as { name?: unknown } | null)?.name;
    if (typeof name !== "string" || name === "") {
      throw new ConfigError(`Cannot ${action} as every feature must have a non-empty 'name'`);
    }
    if (seen.has(name)) throw new ConfigError(`Cannot ${action} as the feature '${name}' is given twice`);
    seen.add(name);
  }
  return features;
}

/**
 * Checks a push's options against what the client can do: every option
 * beyond the core's must belong to one of its features (a typo, or a
 * feature's option with the feature missing, is refused rather than
 * silently ignored), each checked by its feature's rule; and every option
 * its job sets that a feature must apply at push (`unique`, say) needs that
 * feature too.
 *
 * @example
 * ```ts
 * checkPushOptions(client.features, UniqueJob, {}, "UniqueJob"); // throws without uniqueJobs()
 * ```
 */
export function checkPushOptions(
  features: readonly ClientFeature[],
  job: AnyJob | undefined,
  options: Readonly<Record<string, unknown>>,
  label: string,
): void {
  const fail = (what: string, value: unknown) =>
    new PayloadError(`Cannot push job ${sanitize(label, 100)} as ${what}: current value is ${describeValue(value)}`);
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || CORE_PUSH_OPTIONS.includes(name)) continue;
    const rules = features.find((f) => f.options?.push && Object.hasOwn(f.options.push, name))?.options?.push;
    const check = rules?.[name];
    if (!check) throw missing(label, name, job && optionOwner(job, name)?.feature);
    check(value, fail);
  }
  for (const [name, value] of Object.entries(job?.options ?? {})) {
    if (value === undefined || value === false || CORE_JOB_OPTIONS.includes(name)) continue;
    if (features.some((f) => f.options?.job && Object.hasOwn(f.options.job, name))) continue;
    const owner = optionOwner(job!, name);
    if (owner?.at !== "run") throw missing(label, name, owner?.feature);
  }
}

function missing(label: string, option: string, feature: string | undefined): ConfigError {
  return new ConfigError(
    `Cannot push job ${sanitize(label, 100)} as it sets '${option}' but no feature of this client handles it: add ${
      feature ?? "the feature that does"
    } to createClient({ features })`,
  );
}

/**
 * Refuses a worker that would run a job whose run-time option (one only a
 * worker reads, such as declared `limits`) none of its features handles:
 * the option would be ignored without a word, and the limit with it.
 *
 * @example
 * ```ts
 * checkRunOptions([], [LimitedJob]); // throws: add flowLimits() to the worker's features
 * ```
 */
export function checkRunOptions(features: readonly ClientFeature[], jobs: readonly AnyJob[]): void {
  for (const job of jobs) {
    for (const [name, value] of Object.entries(job.options ?? {})) {
      const owner = optionOwner(job, name);
      if (value === undefined || owner?.at !== "run") continue;
      if (features.some((f) => f.options?.job && Object.hasOwn(f.options.job, name))) continue;
      throw new ConfigError(
        `Cannot create worker as job ${
          sanitize(job.name, 100)
        } sets '${name}' but no feature of this worker handles it: add ${
          owner.feature ?? "the feature that does"
        } to its features`,
      );
    }
  }
}
