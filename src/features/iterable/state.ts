/**
 * An iterable job's saved state: Sidekiq's `it-<jid>` hash, field for field,
 * so Sidekiq 8.1's Busy and Retries pages and Ruby's `cancel!` work on
 * edgekiq jobs and the other way round.
 *
 * Fields, as `lib/sidekiq/job/iterable.rb` writes them:
 * - `ex`: executions, how many runs have started (an integer).
 * - `c`: the cursor, as JSON (`Sidekiq.dump_json`; `null` before any item).
 * - `rt`: seconds spent iterating, a Ruby Float's text (`12.5`, `0.0`, `1.0e-05`).
 * - `cancelled`: epoch seconds when `cancel!` was first called (an integer).
 *
 * The hash expires 30 days after its first write (`EXPIRE ... NX`: later
 * writes never extend it), long enough to outlive any retry schedule.
 *
 * @module
 */
import { cancelledAt, type IterationState, readState } from "./iteration_states.ts";
import { IterationError } from "../../errors.ts";
import type { JobContext } from "../../job.ts";
import { JSON_NATIVE, jsonProblem } from "../../json_safe.ts";
import { sanitize } from "../../sanitize.ts";
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply, Transport } from "../../transport/transport.ts";
import type { IterationRun } from "./iteration_run.ts";

/** Sidekiq's `STATE_TTL`: one month, in seconds. */
export const STATE_TTL = 30 * 24 * 60 * 60;

/**
 * Reads the state to resume from: one HGETALL (which also carries the
 * `cancelled` flag, read separately in Sidekiq). Throws an `IterationError`
 * when the saved cursor is not JSON: the job cannot know where to resume, so
 * it fails (and retries) instead of starting over.
 *
 * @example
 * ```ts
 * const state = await loadState(transport, keys().iteration(jid));
 * ```
 */
export async function loadState(transport: Transport, key: string): Promise<IterationState | undefined> {
  return readState(await transport.call("HGETALL", key), (text, error) => {
    throw new IterationError(
      `Cannot resume iterable job from ${sanitize(key)} as its cursor is not JSON: current value is ${
        sanitize(text, 100)
      }`,
      { cause: error },
    );
  });
}

/**
 * A number as Ruby's `Float#to_s` writes it, which is what Sidekiq stores
 * in `rt`: always a decimal point (`5.0`), and exponent form below 1e-4 or
 * from 1e15 (`1.0e-05`, `1.0e+15`). Both languages pick the same shortest
 * digits; only the layout differs.
 *
 * @example
 * ```ts
 * rubyFloat(5); // "5.0"
 * rubyFloat(0.00001); // "1.0e-05"
 * ```
 */
export function rubyFloat(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : value < 0 ? "-Infinity" : "NaN";
  const [mantissa, exp] = value.toExponential().split("e");
  const sign = mantissa.startsWith("-") ? "-" : "";
  const digits = mantissa.replace("-", "").replace(".", "");
  const e = Number(exp);
  const point = e + 1; // digits before the decimal point
  if (point < -3 || point > 15) {
    return `${sign}${digits[0]}.${digits.slice(1) || "0"}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Sidekiq's `flush_state` in one call: HSET `ex`, `c`, `rt`; EXPIRE NX
 * (written as a TTL check, so Redis 6 runs it too); HGET `cancelled`. Safe
 * to send again: it writes the same values and never extends the TTL.
 *
 * KEYS: `it-<jid>`.
 * ARGV: executions, cursor JSON, runtime text, TTL seconds.
 * Returns the `cancelled` field (epoch seconds) or null.
 */
export const FLUSH_STATE = defineScript<number | null>({
  name: "iterationFlush",
  keys: ["it-<jid>"],
  argv: ["executions", "cursorJson", "runtime", "ttl"],
  lua: `
redis.call("HSET", KEYS[1], "ex", ARGV[1], "c", ARGV[2], "rt", ARGV[3])
if redis.call("TTL", KEYS[1]) == -1 then redis.call("EXPIRE", KEYS[1], ARGV[4]) end
return redis.call("HGET", KEYS[1], "cancelled")
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    redis.call("HSET", keys[0], "ex", argv[0], "c", argv[1], "rt", argv[2]);
    if (redis.call("TTL", keys[0]) === -1) redis.call("EXPIRE", keys[0], argv[3]);
    return redis.call("HGET", keys[0], "cancelled");
  },
  decode: cancelledAt,
});

/**
 * Saves a run's state where it stands (one {@link FLUSH_STATE} call), one
 * save at a time and in order: an HTTP transport may reorder concurrent
 * requests, and an older cursor must never land last. Resolves to whether
 * the job was cancelled; throws an `IterationError` for a cursor that is not
 * JSON-native, or the transport's error.
 *
 * @example
 * ```ts
 * const state = stateSaver("Backfill", ctx, run);
 * if (await state.save()) { // cancelled
 * }
 * await state.settled(); // before removing it
 * ```
 */
export function stateSaver(
  name: string,
  ctx: JobContext,
  run: IterationRun,
): { save(): Promise<boolean>; settled(): Promise<unknown> } {
  const key = ctx.keys.iteration(ctx.jid);
  const once = async (): Promise<boolean> => {
    const cursor = JSON.stringify(run.cursor);
    const problem = jsonProblem(run.cursor, "cursor");
    if (problem !== undefined || cursor === undefined) {
      throw new IterationError(
        `Cannot save the cursor of ${name} as ${
          problem ?? "cursor is undefined"
        }: a cursor must be JSON-native (${JSON_NATIVE})`,
      );
    }
    const cancelled = await ctx.transport.script(FLUSH_STATE, [key], [
      run.executions,
      cursor,
      rubyFloat(run.runtime),
      STATE_TTL,
    ]);
    if (cancelled !== null) run.cancel(cancelled);
    return cancelled !== null;
  };
  let last: Promise<unknown> = Promise.resolve();
  return {
    save() {
      const next = last.then(once, once);
      last = next.catch(() => {});
      return next;
    },
    // Before the state is removed: a save still on its way must not land
    // after the UNLINK and bring the hash back.
    settled: () => last,
  };
}
