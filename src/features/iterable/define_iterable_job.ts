/**
 * `defineIterableJob()`: Sidekiq 7.3's iterable jobs. A job walks a source
 * of items in resumable steps (`each` yields `[item, cursor]` pairs from a
 * saved cursor; `perItem` does one step), and survives deploys, shutdowns
 * and serverless time budgets: it stops between items, saves its cursor in
 * Sidekiq's `it-<jid>` hash, goes back on its queue, and resumes there.
 *
 * @module
 */
import { ConfigError } from "../../errors.ts";
import { type DefineJob, type Job, type JobOptions, type JobSpec, markSelfCancelling } from "../../job.ts";
import { describeValue } from "../../describe_value.ts";
import type { StandardSchemaV1 } from "../../standard_schema.ts";
import type { IterationStep } from "./enumerators.ts";
import { type IterationSpec, runIteration } from "./iteration.ts";
import type { IterationContext } from "./iteration_run.ts";

/** What `each` returns: `[item, cursor]` pairs, sync or async (null skips the job, as Sidekiq's nil enumerator). */
export type IterationSource<I, C> =
  | AsyncIterable<IterationStep<I, C>>
  | Iterable<IterationStep<I, C>>
  | null
  | undefined;

/** A lifecycle hook: the iteration's context and the job's arguments. */
export type IterationHook<I, C, A extends unknown[]> = (ctx: IterationContext<I, C>, ...args: A) => unknown;

/**
 * Defers a type parameter's inference: the hooks' and `perItem`'s argument
 * types are read from `args` or `each`, never inferred from them, which is
 * what lets `perItem`'s `item` be typed from what `each` yields.
 */
type Later<A> = A extends unknown ? A : never;

/** Sidekiq's iteration hooks, in the order they can run. */
export interface IterationHooks<I, C, A extends unknown[]> {
  /** Before the first item of the first run. */
  onStart?: IterationHook<I, C, A>;
  /** Before the first item of every later run (after a stop, a retry, a crash). */
  onResume?: IterationHook<I, C, A>;
  /** When the job sees it was cancelled (then `onStop` and `onComplete` follow, as in Sidekiq). */
  onCancel?: IterationHook<I, C, A>;
  /** Whenever a run ends without an error: stopped early, cancelled or done. */
  onStop?: IterationHook<I, C, A>;
  /** When the source is exhausted (or the job cancelled: `ctx.cancelled` tells), before the state is removed. */
  onComplete?: IterationHook<I, C, A>;
}

/** Iteration options besides Sidekiq's job options. */
export interface IterationOptions {
  /**
   * Seconds a run may iterate before it stops at the next item and goes back
   * on its queue, as Sidekiq's `max_iteration_runtime` (which is global
   * there). At least one item runs each time. Default: no limit.
   */
  maxIterationRuntime?: number;
  /**
   * Seconds between state saves, which also read the `cancelled` flag;
   * default 5, Sidekiq's. A crash repeats at most this much work, and a
   * cancel is seen within it; each save costs one Redis command.
   */
  flushInterval?: number;
}

/** The input to `defineIterableJob` when `args` is a schema. */
export type IterableJobSpecWithSchema<S extends StandardSchemaV1<unknown[], unknown[]>, I, C> =
  & JobOptions
  & IterationOptions
  & IterationHooks<I, C, Later<StandardSchemaV1.InferOutput<S>>>
  & {
    name: string;
    args: S;
    /** The items from `cursor` on (annotate `cursor`: it is what you yield), as `[item, cursorAfterIt]` pairs. */
    each(
      ctx: IterationContext<unknown, C>,
      cursor: C | null,
      ...args: StandardSchemaV1.InferOutput<S>
    ): IterationSource<I, C>;
    /** One step. Throwing fails the job (the state is saved first; a retry resumes at this item). */
    perItem(ctx: IterationContext<I, C>, item: I, ...args: Later<StandardSchemaV1.InferOutput<S>>): unknown;
  };

/** The input to `defineIterableJob` without a schema: `each`'s parameters type the args. */
export type IterableJobSpec<A extends unknown[], I, C> =
  & JobOptions
  & IterationOptions
  & IterationHooks<I, C, Later<A>>
  & {
    name: string;
    args?: undefined;
    each(ctx: IterationContext<unknown, C>, cursor: C | null, ...args: A): IterationSource<I, C>;
    perItem(ctx: IterationContext<I, C>, item: I, ...args: Later<A>): unknown;
  };

const specs = new WeakMap<object, IterationSpec>();

/** `defineIterableJob`, for jobs whose options may include the feature options `X`. */
export interface DefineIterableJob<X extends object> {
  <S extends StandardSchemaV1<unknown[], unknown[]>, I, C>(
    spec: IterableJobSpecWithSchema<S, I, C> & X,
  ): Job<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>>;
  <A extends unknown[], I, C>(spec: IterableJobSpec<A, I, C> & X): Job<A, A>;
}

/**
 * Builds `defineIterableJob` on a `defineJob` (the root entry point's, so
 * an iterable job takes every built-in feature's options): it defines an
 * iterable job, a normal job (push it, drain it, run it in a worker) whose
 * `perform` walks `each` and calls `perItem` for each item, saving its
 * cursor as it goes. `each` receives the saved cursor (null on the first
 * run) and yields `[item, cursor]`, the cursor being where to resume once
 * that item is done; `iterateArray`, `iterateRange` and `iterateKeyset`
 * build the usual sources.
 *
 * @example
 * ```ts
 * const defineIterableJob = iterableJobDefiner(defineJob);
 * const Backfill = defineIterableJob({
 *   name: "Backfill",
 *   args: v.tuple([v.string()]),
 *   each: (ctx, cursor: number | null, table) =>
 *     iterateKeyset({ fetchPage: (after, limit) => db.rowsAfter(table, after ?? 0, limit), key: (row) => row.id }, cursor),
 *   async perItem(ctx, row, table) {
 *     await db.update(table, row.id, { slug: slugify(row.title) });
 *   },
 *   onComplete(ctx, table) { ctx.logger.info("backfilled", { table, runs: ctx.executions }); },
 * });
 * await Backfill.performAsync(client, "posts");
 * ```
 */
export function iterableJobDefiner<X extends object>(defineJob: DefineJob<X>): DefineIterableJob<X> {
  return ((spec: IterableJobSpec<unknown[], unknown, unknown>): Job<unknown[], unknown[]> => {
    if (typeof spec !== "object" || spec === null) {
      throw new ConfigError(`Cannot define job as its spec must be an object: current value is ${describeValue(spec)}`);
    }
    if ("perform" in spec) {
      throw new ConfigError(
        `Cannot define job ${
          String(spec.name)
        } as an iterable job must not define 'perform': it runs 'each' and 'perItem'`,
      );
    }
    const {
      each,
      perItem,
      onStart,
      onResume,
      onCancel,
      onStop,
      onComplete,
      maxIterationRuntime,
      flushInterval,
      ...jobSpec
    } = spec;
    // defineJob checks the name, the schema, Sidekiq's options and the features'.
    const job = defineJob(
      {
        ...jobSpec,
        perform: (ctx, ...args: unknown[]) => runIteration(iteration, ctx, args),
      } as JobSpec<unknown[]> & X,
    );
    const fail = (what: string, value: unknown) =>
      new ConfigError(`Cannot define job ${job.name} as ${what}: current value is ${describeValue(value)}`);
    const hooks = { each, perItem, onStart, onResume, onCancel, onStop, onComplete };
    for (const name of ["each", "perItem"] as const) {
      if (typeof hooks[name] !== "function") throw fail(`'${name}' must be a function`, hooks[name]);
    }
    for (const name of ["onStart", "onResume", "onCancel", "onStop", "onComplete"] as const) {
      if (hooks[name] !== undefined && typeof hooks[name] !== "function") {
        throw fail(`'${name}' must be a function`, hooks[name]);
      }
    }
    for (const [name, value] of [["maxIterationRuntime", maxIterationRuntime], ["flushInterval", flushInterval]]) {
      if (value !== undefined && (typeof value !== "number" || !(value > 0) || !Number.isFinite(value))) {
        throw fail(`'${name}' must be > 0 seconds and finite`, value);
      }
    }
    const iteration: IterationSpec = {
      name: job.name,
      each: each as IterationSpec["each"],
      perItem: perItem as IterationSpec["perItem"],
      onStart: onStart as IterationSpec["onStart"],
      onResume: onResume as IterationSpec["onResume"],
      onCancel: onCancel as IterationSpec["onCancel"],
      onStop: onStop as IterationSpec["onStop"],
      onComplete: onComplete as IterationSpec["onComplete"],
      maxIterationRuntime: maxIterationRuntime as number | undefined,
      flushInterval: (flushInterval as number | undefined) ?? 5,
    };
    specs.set(job, iteration);
    // A cancel reaches it through `it-<jid>`: it starts, runs `onCancel` and finishes (never skipped unseen).
    markSelfCancelling(job);
    return job;
  }) as DefineIterableJob<X>;
}

/**
 * The iteration behind a job made by `defineIterableJob` (undefined for
 * any other job): what the test harness steps through.
 *
 * @example
 * ```ts
 * const spec = iterationSpecOf(Backfill);
 * ```
 */
export function iterationSpecOf(job: object): IterationSpec | undefined {
  return specs.get(job);
}
