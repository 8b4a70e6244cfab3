/**
 * Builds the jobs a periodic tick pushes: the schedule's payload template
 * plus a fresh jid, the push times and a `periodic` field naming the
 * schedule and the tick, passed through the client's middleware and
 * serialised as every push is. Done in JavaScript before the claim script
 * runs, so the script only claims and pushes.
 *
 * @module
 */
import { type Client, moveThroughMiddleware } from "../../client.ts";
import type { AnyJob } from "../../job.ts";
import { type JobPayload, newJids, serializePayload, wireTime } from "../../payload.ts";
import type { PeriodicSpec } from "./schedule.ts";

/** One job ready to push. */
export interface PeriodicJob {
  /** The tick it stands for (epoch seconds). */
  tick: number;
  /** Its jid. */
  jid: string;
  /** The queue it goes to (client middleware may have changed it). */
  queue: string;
  /** The serialised payload. */
  json: string;
}

/** What {@link buildPeriodicJobs} builds from. */
export interface BuildOptions {
  /** The schedule's name. */
  name: string;
  /** Its spec. */
  spec: PeriodicSpec;
  /** The ticks to build a job for. */
  ticks: readonly number[];
  /** Now, epoch ms (the push times). */
  now: number;
  /** The job definition, handed to client middleware. */
  job?: AnyJob;
  /** An "enqueue now" from the API rather than a tick: marked `manual: true`. */
  manual?: boolean;
}

/**
 * Builds one job per tick. A job a client middleware stops is left out (its
 * tick still counts as run). The payload carries `periodic: { name, at }`
 * (`at`: the tick, epoch seconds), which a job can read from
 * `ctx.payload.periodic` to know which time it stands for (catch-up ticks
 * run later than their time).
 *
 * @example
 * ```ts
 * const jobs = await buildPeriodicJobs(client, { name: "Ping every 60s", spec, ticks: [1700000040], now: Date.now() });
 * ```
 */
export async function buildPeriodicJobs(client: Client, options: BuildOptions): Promise<PeriodicJob[]> {
  const { name, ticks } = options;
  const jids = newJids(ticks.length);
  const time = wireTime(options.now, client.timeFormat);
  const template = JSON.stringify(options.spec.payload);
  const out: PeriodicJob[] = [];
  for (let i = 0; i < ticks.length; i++) {
    // A fresh copy each time: middleware may change the payload in place.
    const payload: JobPayload = {
      ...JSON.parse(template),
      jid: jids[i],
      created_at: time,
      enqueued_at: time,
      periodic: options.manual ? { name, at: ticks[i], manual: true } : { name, at: ticks[i] },
    };
    const rewritten = await moveThroughMiddleware(client, payload, options.job);
    if (!rewritten) continue;
    out.push({
      tick: ticks[i],
      jid: rewritten.jid,
      queue: rewritten.queue,
      json: serializePayload(rewritten, client.timeFormat),
    });
  }
  return out;
}
