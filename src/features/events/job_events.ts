/**
 * Job events as a feature (BullMQ's QueueEvents and return values, the
 * Sidekiq way): for the queues that opt in, every job's outcome (and its
 * progress, rate-limited) is written to a bounded Redis stream per queue,
 * `edgekiq:events:<queue>`, that any process, edge function or browser (as
 * Server-Sent Events) can read; a job that asks (`keepResult`) has what
 * `perform` returned kept for `waitFor`. A queue that does not opt in costs
 * no command at all. The engine knows nothing of events.
 *
 * @module
 */
import type { ClientMiddleware, PushContextOptions } from "../../client_middleware.ts";
import { ConfigError } from "../../errors.ts";
import type { AnyJob } from "../../job.ts";
import { describeValue } from "../../describe_value.ts";
import { isQueueName, QUEUE_NAME_RULE } from "../../queue_name.ts";
import type { JobOutcome, JobSite, OutcomeWrite } from "../../server/worker_feature.ts";
import { wholeNumber } from "../../server/whole_number.ts";
import type { Feature } from "../feature.ts";
import { EVENT_OF, EVENT_WRITE, eventFields, FINAL, resultJson, resultRecord } from "./event_write.ts";
import {
  EVENTS_OPTION_RULES,
  type EventsJobOptions,
  type EventsPushOptions,
  type KeepResultOptions,
  RESULT_FIELD,
} from "./options.ts";
import { type ProgressReport, ProgressThrottle } from "./progress_throttle.ts";

/** Options for {@link jobEvents}. */
export interface JobEventsOptions {
  /**
   * The queues whose events are written, or `"*"` for every queue. Default
   * none: only results asked for with `keepResult` are written. A queue not
   * listed costs no command.
   */
  queues?: readonly string[] | "*";
  /** Events kept per queue (`XADD MAXLEN ~`, so a little more may stay); default 10,000. */
  maxLen?: number;
  /**
   * The largest result kept, bytes of its JSON; default 65,536. A larger
   * one is not kept: its record says why, and `waitFor` rejects with a
   * `ResultError` saying its size.
   */
  maxResultBytes?: number;
  /** The least time between two progress events of one job, ms; default 1,000. */
  progressIntervalMs?: number;
}

/** The job-events feature: pass it to the client (for `keepResult`) and to the worker (and drain). */
export interface JobEvents extends Feature {
  readonly name: "events";
  readonly client: ClientMiddleware;
  readonly outcome: (outcome: JobOutcome, site: JobSite) => OutcomeWrite | undefined;
}

/** The longest a progress value's JSON may be in an event, characters. */
const MAX_PROGRESS_CHARS = 4096;
/** Lines kept on the `results` stream `waitFor` follows. */
const RESULTS_MAX_LEN = 10_000;

/**
 * Job events: a bounded event stream for each queue that opts in, and kept
 * results for jobs that ask.
 *
 * @example
 * ```ts
 * const events = jobEvents({ queues: ["reports"] });
 * const Report = defineJob({ name: "Report", queue: "reports", keepResult: { for: 600 }, perform: () => ({ rows: 42 }) });
 * const client = createClient({ transport, features: [events] });
 * const jid = await client.push(Report, []);
 * createWorker({ transport, jobs: [Report], features: [events] });
 * await waitFor(client, jid!, { timeoutMs: 30_000 }); // { rows: 42 }
 * ```
 */
export function jobEvents(options: JobEventsOptions = {}): JobEvents {
  const action = "create jobEvents()";
  const queues = checkQueues(options.queues, action);
  const maxLen = wholeNumber(options.maxLen ?? 10_000, { action, name: "maxLen", min: 1, max: 100_000_000 });
  const maxResultBytes = wholeNumber(options.maxResultBytes ?? 65_536, {
    action,
    name: "maxResultBytes",
    min: 1,
    max: 16 * 1024 * 1024,
  });
  const interval = wholeNumber(options.progressIntervalMs ?? 1000, {
    action,
    name: "progressIntervalMs",
    min: 0,
    max: 3_600_000,
  });
  const eventsOf = (queue: string) => queues === "*" || queues.has(queue);

  const client: ClientMiddleware = Object.assign(
    (payload: Parameters<ClientMiddleware>[0], ctx: Parameters<ClientMiddleware>[1], next: () => Promise<void>) => {
      const own = (ctx.options as EventsPushOptions | undefined)?.keepResult;
      const keep: KeepResultOptions | false | undefined = own === undefined
        ? (ctx.job?.options as EventsJobOptions | undefined)?.keepResult
        : own;
      if (keep) payload[RESULT_FIELD] = keep.for;
      else if (own === false) delete payload[RESULT_FIELD];
      return next();
    },
    { appliesTo: keepsResult },
  );

  const throttle = new ProgressThrottle(interval, writeProgress);
  function writeProgress({ payload, value, context }: ProgressReport): void {
    let json: string;
    try {
      json = JSON.stringify(value) ?? "null";
    } catch {
      json = JSON.stringify(String(value));
    }
    if (json.length > MAX_PROGRESS_CHARS) {
      context.onError(
        new ConfigError(
          `Cannot write a progress event for job ${payload.jid} as its value's JSON is ${json.length} characters, over ${MAX_PROGRESS_CHARS}`,
        ),
        { context: "events progress", jid: payload.jid },
      );
      return;
    }
    const { transport, keys, queue } = context;
    void transport.call(
      "XADD",
      keys.events(queue),
      "MAXLEN",
      "~",
      maxLen,
      "*",
      "event",
      "progress",
      "jid",
      payload.jid,
      "class",
      payload.class,
      "progress",
      json,
    ).catch((error) => context.onError(error, { context: "events progress", jid: payload.jid }));
  }

  const outcome = (done: JobOutcome, site: JobSite): OutcomeWrite | undefined => {
    const jid = done.payload.jid;
    throttle.end(jid);
    const event = EVENT_OF[done.kind];
    if (!event) return undefined;
    const writeEvent = eventsOf(done.queue);
    const keep = FINAL.has(done.kind) ? keepSeconds(done.payload[RESULT_FIELD]) : 0;
    if (!writeEvent && keep === 0) return undefined;
    const record = keep ? resultRecord(done, maxResultBytes) : "";
    const result = keep && done.kind === "succeeded" ? resultJson(done.result, maxResultBytes).text : undefined;
    const k = site.keys;
    return {
      script: EVENT_WRITE,
      keys: [k.events(done.queue), k.result(jid), k.results],
      args: [
        maxLen,
        RESULTS_MAX_LEN,
        jid,
        keep,
        record,
        writeEvent ? 1 : 0,
        ...(writeEvent ? eventFields(event, done, result) : []),
      ],
    };
  };

  return Object.freeze(
    {
      name: "events",
      options: EVENTS_OPTION_RULES,
      client,
      outcome,
      progress(payload, value, context) {
        if (eventsOf(context.queue)) throttle.report({ payload, value, context });
      },
      stop() {
        throttle.clear();
        return Promise.resolve();
      },
    } as const satisfies JobEvents,
  );
}

/** Whether a push may keep its result: its own `keepResult`, else its job's. */
function keepsResult(job: AnyJob | undefined, options: Readonly<PushContextOptions> | undefined): boolean {
  if (options?.keepResult !== undefined) return true;
  return (job?.options as EventsJobOptions | undefined)?.keepResult !== undefined;
}

/** Seconds to keep a result, from the payload's field (another producer may have written anything there). */
function keepSeconds(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.ceil(value) : 0;
}

function checkQueues(queues: unknown, action: string): ReadonlySet<string> | "*" {
  if (queues === undefined) return new Set();
  if (queues === "*") return "*";
  if (!Array.isArray(queues) || !queues.every(isQueueName)) {
    throw new ConfigError(
      `Cannot ${action} as 'queues' must be "*" or an array of queue names (${QUEUE_NAME_RULE}): current value is ${
        describeValue(queues)
      }`,
    );
  }
  return new Set(queues);
}
