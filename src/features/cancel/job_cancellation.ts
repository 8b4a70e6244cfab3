/**
 * Cancelling running and waiting jobs as a feature. `cancelJob(client, jid)`
 * adds the jid to `edgekiq:cancelled`; every worker with this feature
 * learns of it at its next heartbeat (the beat reads the set's highest
 * score in its own script, so nothing is sent while nothing is cancelled)
 * and aborts the job's `ctx.stopping` if it runs there; a queued, scheduled
 * or retrying copy is skipped when fetched (the `receive` hook, before its
 * arguments are checked), as discarded with the code `"cancelled"`.
 *
 * @module
 */
import { Discard } from "../../control.ts";
import { type AnyJob, isSelfCancelling } from "../../job.ts";
import type { ServerMiddleware } from "../../server_middleware.ts";
import type { Feature } from "../feature.ts";
import { CANCEL_DASHBOARD } from "./cancel_dashboard.ts";
import { CancelledJids } from "./cancelled_jids.ts";

/**
 * How old the copy of the cancelled jids may grow before a fetched job makes
 * it be read again, ms. A worker's heartbeats (every 10 s, 20 s over HTTP)
 * keep it younger than this, so only a drain, which has no heartbeat, reads it
 * on receiving a job: at most once a minute.
 */
const STALE_MS = 60_000;

/** The reason a cancelled job's `ctx.stopping` aborts with. */
export const CANCELLED_REASON = "cancelled (cancelJob)";

/** The cancel feature. */
export interface JobCancellation extends Feature {
  readonly name: "cancel";
}

/**
 * Lets `cancelJob(client, jid)` (and `edgekiq cancel <jid>`, and the Cancel
 * button on the dashboard's Busy page) stop a job:
 * - running here: its `ctx.stopping` aborts within one heartbeat, and
 *   whatever it throws from then on ends it as discarded (code
 *   `"cancelled"`), not as a failure, so it is not retried;
 * - waiting: skipped, as discarded, when fetched.
 *
 * Costs nothing while nothing is cancelled (the heartbeat's own script reads
 * the set's highest score); each new cancel costs every worker one command
 * at its next beat. A drain, which has no heartbeat, reads the set on
 * receiving its first job and then at most once a minute.
 *
 * @example
 * ```ts
 * const cancel = jobCancellation();
 * createWorker({ transport, jobs, features: [cancel] });
 * dashboard({ transport, features: [cancel] }); // a Cancel button on each running job
 * await cancelJob(client, jid);
 * ```
 */
export function jobCancellation(): JobCancellation {
  const jids = new CancelledJids();
  // Per worker (one feature may serve several): the copy's version its running jobs were last checked against.
  const checked = new WeakMap<object, number>();

  // A cancelled job's failure is its cancellation, not a bug to retry.
  const server: ServerMiddleware = async (_job, payload, _queue, next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof Discard || !jids.has(payload.jid)) throw error;
      throw new Discard(`${CANCELLED_REASON}; it stopped with ${describe(error)}`, { code: "cancelled" });
    }
  };

  // An iterable job starts anyway: it sees the cancel itself and runs its `onCancel`, as in Sidekiq.
  const skipIfCancelled = (jid: string, job: AnyJob) => {
    if (jids.has(jid) && !isSelfCancelling(job)) {
      throw new Discard(`${CANCELLED_REASON} before it started`, { code: "cancelled" });
    }
  };

  return Object.freeze(
    {
      name: "cancel",
      watch: (keys) => keys.cancelled,
      async beat(ctx, watched) {
        if (watched === undefined) return;
        if (jids.isBehind(watched)) await jids.refresh(ctx.transport, ctx.keys);
        else jids.markFresh(Date.now());
        if (!ctx.jobs || checked.get(ctx.jobs) === jids.version) return;
        checked.set(ctx.jobs, jids.version);
        for (const job of ctx.jobs.list()) {
          if (jids.has(job.jid)) ctx.jobs.stop(job.jid, CANCELLED_REASON);
        }
      },
      receive(payload, job, ctx) {
        // Most jobs are looked up at once (no promise); one waits only while the copy is being read.
        const reading = jids.current(ctx.transport, ctx.keys, Date.now(), STALE_MS);
        if (!reading) return skipIfCancelled(payload.jid, job);
        return reading.then(
          () => skipIfCancelled(payload.jid, job),
          (error) => {
            ctx.onError(error, { context: "reading the cancelled jobs", jid: payload.jid });
            skipIfCancelled(payload.jid, job);
          },
        );
      },
      server,
      dashboard: CANCEL_DASHBOARD,
    } satisfies JobCancellation,
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
