/**
 * Batch callbacks: ordinary jobs, built and checked when the batch is
 * created (their arguments against their job's schema, like any push) and
 * kept in the batch's hash, then pushed by the script that sees the batch's
 * event happen, once. A callback job carries `edgekiq_callback: { bid,
 * event }` (so it can read its batch's status and its state is shown), and
 * a child batch's callbacks carry the parent's `bid`: they run in the
 * parent, which waits for them.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import { BatchError, PayloadError } from "../../errors.ts";
import { type AnyJob, type PushOptions, validateArgs } from "../../job.ts";
import { assertJsonSafe } from "../../json_safe.ts";
import { type JobPayload, newJids, serializePayload, wireTime } from "../../payload.ts";
import { pushFields, pushTarget } from "../../push_options.ts";
import { describeValue } from "../../describe_value.ts";
import { sanitize } from "../../sanitize.ts";

/** A batch's events: all jobs ran (`complete`), all succeeded (`success`), the first died (`death`). */
export type BatchEvent = "complete" | "success" | "death";

/** The events, in the order their callbacks are pushed when they happen together. */
export const BATCH_EVENTS: readonly BatchEvent[] = ["complete", "success", "death"];

/** The push options a callback (or a flow's job) may take: where it goes, its retries, extra payload fields. */
export type CallbackPushOptions = Pick<PushOptions, "queue" | "retry" | "extra">;

/**
 * A job to push: the job (a definition, or a class name another process
 * defines), its arguments, and its push options.
 *
 * @example
 * ```ts
 * const spec: JobSpecTuple = [ReportJob, [importId], { queue: "critical" }];
 * ```
 */
export type JobSpecTuple = readonly [job: AnyJob | string, args?: readonly unknown[], options?: CallbackPushOptions];

/** A batch's callbacks, by event. */
export type BatchCallbacks = Partial<Record<BatchEvent, JobSpecTuple>>;

/** The payload field a callback job carries. */
export const CALLBACK_FIELD = "edgekiq_callback";

/** A callback, built: where it goes, its jid, its payload (without `enqueued_at`, added when it is pushed). */
export interface BuiltJob {
  readonly queue: string;
  readonly jid: string;
  readonly json: string;
  readonly className: string;
}

/**
 * Builds a job a batch pushes later (a callback, a flow's parent): checked
 * as a push checks it, serialised once.
 *
 * @example
 * ```ts
 * const built = await buildJob(client, [ReportJob, [7]], { callback: { bid, event: "success" } });
 * ```
 */
export async function buildJob(
  client: Client<object>,
  spec: JobSpecTuple,
  marks: { callback: { bid: string; event: BatchEvent }; bid?: string },
): Promise<BuiltJob> {
  if (!Array.isArray(spec)) {
    throw new PayloadError(
      `Cannot build the ${marks.callback.event} callback of batch ${marks.callback.bid} as it must be [job, args?, options?]: current value is ${
        describeValue(spec)
      }`,
    );
  }
  const [job, args = [], options = {}] = spec as JobSpecTuple;
  const target = pushTarget(job);
  const label = sanitize(target.className, 100);
  if (!Array.isArray(args)) {
    throw new PayloadError(
      `Cannot push job ${label} as args must be an array: current value is ${describeValue(args)}`,
    );
  }
  for (const option of Object.keys(options ?? {})) {
    if (option !== "queue" && option !== "retry" && option !== "extra") {
      throw new PayloadError(
        `Cannot push job ${label} as a batch's callback or a flow's job takes the options queue, retry and extra: '${
          sanitize(option, 40)
        }' was given`,
      );
    }
  }
  const fields = pushFields(target, options ?? {}, RESERVED);
  assertJsonSafe(args, "args");
  if (target.job?.schema) {
    const checked = validateArgs(target.job, args as unknown[]);
    if (checked instanceof Promise) await checked;
  }
  const [jid] = newJids(1);
  const payload: JobPayload = {
    ...fields,
    args: args as unknown[],
    jid,
    created_at: wireTime(Date.now(), client.timeFormat),
    [CALLBACK_FIELD]: marks.callback,
  };
  if (marks.bid !== undefined) payload.bid = marks.bid;
  const json = serializePayload(payload, client.timeFormat);
  if (!json.endsWith("}")) throw new BatchError(`Cannot build job ${label}: its payload does not end as an object`);
  return { queue: fields.queue, jid, json, className: target.className };
}

const RESERVED: Readonly<Record<string, string>> = {
  bid: "the batch sets it",
  [CALLBACK_FIELD]: "the batch sets it",
};

/**
 * The callback mark of a payload, if it is a batch's callback.
 *
 * @example
 * ```ts
 * callbackMark(ctx.payload); // { bid: "q0tJ...", event: "success" }
 * ```
 */
export function callbackMark(payload: Readonly<JobPayload>): { bid: string; event: BatchEvent } | undefined {
  const mark = payload[CALLBACK_FIELD] as { bid?: unknown; event?: unknown } | undefined;
  if (typeof mark !== "object" || mark === null || typeof mark.bid !== "string") return undefined;
  if (!BATCH_EVENTS.includes(mark.event as BatchEvent)) return undefined;
  return { bid: mark.bid, event: mark.event as BatchEvent };
}
