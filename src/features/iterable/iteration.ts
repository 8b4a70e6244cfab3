/**
 * One run of an iterable job, Sidekiq's `Job::Iterable#perform`: read the
 * saved state, walk `each` from the saved cursor, call `perItem` for every
 * item, and between items check whether to stop.
 *
 * - Before each item: stop when the worker quiets or stops, a drain's time
 *   is up (`ctx.stopping`), at hard shutdown (`ctx.signal`), or after
 *   `maxIterationRuntime`. Stopping saves the state, runs `onStop` and throws
 *   `Interrupt`: the engine puts the job back on its queue as it was (same
 *   jid, same `retry_count`), and the next run resumes from the cursor.
 * - The state is saved at most every `flushInterval` between items (and the
 *   save reads the `cancelled` flag), when stopping, and when an item fails;
 *   it is removed when the job completes.
 * - The cursor saved is the one yielded with the last item *done*, so a
 *   resumed run starts right after it: a stop between items repeats nothing.
 *
 * @module
 */
import { Discard, Interrupt } from "../../control.ts";
import { EdgekiqError, IterationError } from "../../errors.ts";
import type { JobContext } from "../../job.ts";
import { describeValue } from "../../describe_value.ts";
import { IterationRun } from "./iteration_run.ts";
import { loadState, stateSaver } from "./state.ts";

/** A hook or step, as the runner calls it (the typed spec is in define_iterable_job.ts). */
type Fn = (ctx: IterationRun, ...rest: unknown[]) => unknown;

/** What the runner needs of a definition. */
export interface IterationSpec {
  name: string;
  each: Fn;
  perItem: Fn;
  onStart?: Fn;
  onResume?: Fn;
  onStop?: Fn;
  onCancel?: Fn;
  onComplete?: Fn;
  /** Seconds; none by default. */
  maxIterationRuntime?: number;
  /** Seconds between state flushes. */
  flushInterval: number;
}

/** Limits a test harness sets on one run. */
export interface RunLimits {
  /** Stop (as at shutdown) once this many items are done in this run. */
  maxItems?: number;
}

type Outcome = "done" | "interrupted" | "cancelled";

/**
 * Runs one execution of an iterable job. Resolves when it completes or is
 * cancelled; throws `Interrupt` when it stopped early (put it back), or the
 * error that stopped it (the state is saved first, so a retry resumes).
 *
 * @example
 * ```ts
 * await runIteration(spec, ctx, args); // inside perform
 * ```
 */
export async function runIteration(
  spec: IterationSpec,
  ctx: JobContext,
  args: unknown[],
  limits: RunLimits = {},
): Promise<void> {
  const key = ctx.keys.iteration(ctx.jid);
  const run = new IterationRun(ctx, await loadState(ctx.transport, key));
  const state = stateSaver(spec.name, ctx, run);
  const save = state.save;
  // Saving is best effort where the run ends anyway: an error stays the
  // error, and an interrupted job resumes from the last state that landed.
  const trySave = (why: string) =>
    save().catch((error) => {
      ctx.logger.warn(`could not save iteration state (${why})`, { error: String(error), cursor: run.cursor });
      return false;
    });

  const source = spec.each(run, run.cursor, ...args);
  if (source === null || source === undefined) {
    ctx.logger.info("'each' returned nothing: skipping the job");
    return;
  }
  const iterator = iteratorOf(spec.name, source);
  await (run.executions === 1 ? spec.onStart : spec.onResume)?.(run, ...args);

  // Asked to stop: save where the run stands now, while the item in flight
  // finishes. If time runs out before the save after that item lands (a
  // drain's budget cuts its requests off), at most that item runs again.
  const saveNow = () => void trySave("stopping");
  ctx.stopping.addEventListener("abort", saveNow, { once: true });
  ctx.signal.addEventListener("abort", saveNow, { once: true });
  let outcome: Outcome;
  let reason = "";
  try {
    ({ outcome, reason } = await walk(spec, run, iterator, args, limits, save));
  } catch (error) {
    await closeQuietly(iterator, ctx);
    run.finish();
    if (error instanceof Discard) {
      await state.settled();
      await removeState(ctx, key);
      throw error;
    }
    if (error instanceof Interrupt) {
      await trySave("interrupted");
      await spec.onStop?.(run, ...args);
      throw error;
    }
    await trySave("failed");
    throw error;
  } finally {
    ctx.stopping.removeEventListener("abort", saveNow);
    ctx.signal.removeEventListener("abort", saveNow);
  }
  if (outcome !== "done") await closeQuietly(iterator, ctx);
  run.finish();
  if (outcome === "interrupted") {
    await spec.onStop?.(run, ...args);
    ctx.logger.debug("interrupted: back on the queue", { reason, cursor: run.cursor });
    throw new Interrupt(
      `${spec.name} stopped at cursor ${describeValue(run.cursor)} (${reason}); it resumes from there`,
    );
  }
  try {
    if (outcome === "cancelled") {
      ctx.logger.info("job cancelled");
      await spec.onCancel?.(run, ...args);
    }
    await spec.onStop?.(run, ...args);
    await spec.onComplete?.(run, ...args);
  } catch (error) {
    // The items are done: a retry should find nothing left to do, not redo them.
    await trySave("a hook failed");
    throw error;
  }
  ctx.logger.debug("completed iteration", { executions: run.executions, runtime: run.runtime.toFixed(3) });
  await state.settled();
  await removeState(ctx, key);
}

/** The loop: items until the source ends, a stop is due, or the job is cancelled. */
async function walk(
  spec: IterationSpec,
  run: IterationRun,
  iterator: Iterator<unknown> | AsyncIterator<unknown>,
  args: unknown[],
  limits: RunLimits,
  save: () => Promise<boolean>,
): Promise<{ outcome: Outcome; reason: string }> {
  if (run.cancelled) return { outcome: "cancelled", reason: "" };
  const flushMs = spec.flushInterval * 1000;
  const maxMs = spec.maxIterationRuntime === undefined ? Infinity : spec.maxIterationRuntime * 1000;
  let lastFlush = performance.now();
  let done = 0;
  for (;;) {
    const reason = run.signal.aborted
      ? "hard shutdown"
      : run.stopping.aborted
      ? "stopping"
      : done >= (limits.maxItems ?? Infinity)
      ? "item limit"
      : done > 0 && run.elapsedMs > maxMs
      ? "maxIterationRuntime"
      : "";
    if (reason || performance.now() - lastFlush >= flushMs) {
      let cancelled = false;
      try {
        cancelled = await save();
      } catch (error) {
        if (!(error instanceof EdgekiqError) || error instanceof IterationError) throw error;
        // Redis failed: carry on (or stop) and save again at the next chance.
        run.logger.warn("could not save iteration state", { error: String(error), cursor: run.cursor });
      }
      lastFlush = performance.now();
      if (cancelled) return { outcome: "cancelled", reason: "" };
      if (reason) return { outcome: "interrupted", reason };
    }
    const next = await iterator.next();
    if (next.done) return { outcome: "done", reason: "" };
    const step = next.value;
    if (!Array.isArray(step) || step.length !== 2) {
      throw new IterationError(
        `Cannot iterate ${spec.name} as 'each' must yield [item, cursor] pairs: current value is ${
          describeValue(step)
        }`,
      );
    }
    run.current = step[0];
    await spec.perItem(run, step[0], ...args);
    run.cursor = step[1];
    done++;
  }
}

function iteratorOf(name: string, source: unknown): Iterator<unknown> | AsyncIterator<unknown> {
  const s = source as Partial<AsyncIterable<unknown> & Iterable<unknown>>;
  if (typeof s[Symbol.asyncIterator] === "function") return s[Symbol.asyncIterator]!();
  if (typeof s[Symbol.iterator] === "function") return s[Symbol.iterator]!();
  throw new IterationError(
    `Cannot iterate ${name} as 'each' must return an iterable of [item, cursor] pairs (an async generator, say): current value is ${
      describeValue(source)
    }`,
  );
}

/** Lets the source clean up (a generator's `finally`: close a database cursor). */
async function closeQuietly(iterator: Iterator<unknown> | AsyncIterator<unknown>, ctx: JobContext): Promise<void> {
  try {
    await iterator.return?.();
  } catch (error) {
    ctx.logger.warn("the iteration source failed to close", { error: String(error) });
  }
}

/**
 * Removes the state once the job is over. UNLINK is safe to resend; if it
 * still fails the job is done all the same, and the hash expires by itself.
 */
async function removeState(ctx: JobContext, key: string): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      await ctx.transport.call("UNLINK", key);
      return;
    } catch (error) {
      if (attempt >= 2) {
        ctx.logger.warn("could not remove iteration state; it expires by itself", { key, error: String(error) });
        return;
      }
    }
  }
}
