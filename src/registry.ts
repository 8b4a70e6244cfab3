/**
 * The job registry: wire class name -> job definition. A `Map`, so only names
 * that were registered resolve; `__proto__`, `constructor` and `toString`
 * never do.
 *
 * @module
 */
import { ConfigError } from "./errors.ts";
import type { AnyJob } from "./job.ts";

/** Jobs given as a list or as a module namespace / record of jobs. */
export type JobsInput = readonly AnyJob[] | Readonly<Record<string, unknown>>;

/** Looks jobs up by their wire class name. */
export interface Registry {
  /** The job named `name`, or undefined. */
  get(name: string): AnyJob | undefined;
  /** Every registered name. */
  names(): string[];
}

/**
 * Builds a registry from a list of jobs, or from a module namespace
 * (`import * as jobs from "./jobs.ts"`): every export that is a job counts,
 * anything else is ignored. Two jobs with one name are a configuration error.
 *
 * @example
 * ```ts
 * const registry = createRegistry([HardJob, SendEmail]);
 * registry.get("HardJob") === HardJob; // true
 * registry.get("__proto__");           // undefined
 * ```
 */
export function createRegistry(jobs: JobsInput): Registry {
  const map = new Map<string, AnyJob>();
  const list = Array.isArray(jobs) ? jobs : Object.values(jobs).filter(isJob);
  for (const job of list) {
    if (!isJob(job)) throw new ConfigError(`Cannot register job as it is not a defineJob() result: ${String(job)}`);
    const existing = map.get(job.name);
    if (existing && existing !== job) {
      throw new ConfigError(`Cannot register job ${job.name} twice: two definitions share that name`);
    }
    map.set(job.name, job);
  }
  return { get: (name) => map.get(name), names: () => [...map.keys()] };
}

function isJob(value: unknown): value is AnyJob {
  return typeof value === "object" && value !== null && typeof (value as AnyJob).name === "string" &&
    typeof (value as AnyJob).perform === "function" && typeof (value as AnyJob).performAsync === "function";
}
