/**
 * Batches and flows as a feature: the client half registers a batch's jobs
 * in the same atomic step as their push (a write guard, composed with any
 * other, unique jobs' included); the worker half records each job's outcome
 * in its batch before the job is acknowledged (one script, coalesced with
 * the outcomes of jobs finishing at the same moment), skips jobs of
 * cancelled batches when they are fetched and stops their running ones;
 * the dashboard half shows the Batches pages and a job's place in its flow.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import type { ClientMiddleware, PerPushContext, PushContextOptions } from "../../client_middleware.ts";
import type { WriteGuard } from "../../write_guard.ts";
import { Discard } from "../../control.ts";
import { BatchError, ConfigError } from "../../errors.ts";
import type { AnyJob, JobContext } from "../../job.ts";
import type { JobPayload } from "../../payload.ts";
import type { Keys } from "../../keys.ts";
import { describeValue } from "../../describe_value.ts";
import { sanitize } from "../../sanitize.ts";
import { errorClass, errorMessage } from "../../server/retry.ts";
import type { JobOutcome, JobSite, OutcomeWrite } from "../../server/worker_feature.ts";
import type { Feature } from "../feature.ts";
import { checkBid, isBid, parentBid } from "./bid.ts";
import {
  Batch,
  type BatchOptions,
  type BatchRuntime,
  type BatchScope,
  DEFAULT_BATCH_EXPIRY_SECONDS,
  existingBatch,
  newBatch,
  partsOf,
} from "./batch.ts";
import { type BatchEvent, callbackMark } from "./callbacks.ts";
import { createFlow, type Flow, type FlowChild, type FlowNode, type FlowOptions, readChildren } from "./flow.ts";
import { InfoCache } from "./info_cache.ts";
import { BATCH_OPTION_RULES } from "./options.ts";
import {
  BATCH_OUTCOME,
  type ChainKeys,
  chainKeys,
  type MemberKind,
  outcomeItem,
  successItem,
} from "./outcome_script.ts";
import { BATCH_GUARD } from "./push_guard.ts";
import { BATCHES_DASHBOARD } from "./batches_dashboard.ts";

/** Options for {@link batchJobs}. */
export interface BatchJobsOptions {
  /** How long a batch's data is kept after its last registration, seconds; default 30 days (Sidekiq Pro's). */
  expiresIn?: number;
  /**
   * The largest return value kept for a flow's job, bytes of JSON; default
   * 64 KiB. A job of a flow that returns more (or something JSON cannot
   * hold) counts as dead in its flow, with an error saying so: its parent
   * cannot read it.
   */
  maxResultBytes?: number;
}

/** The running job a batch call is made from (its `ctx`). */
export type BatchJobContext = Pick<JobContext, "jid" | "payload" | "transport" | "keys">;

/**
 * The batches feature: pass it to the client, the worker (or drain) and the
 * dashboard, and use its methods to make batches and flows.
 */
export interface BatchJobs extends Feature {
  readonly name: "batches";
  /** A new batch (made by its first `add()`). */
  open<P extends object>(client: Client<P>, options?: BatchOptions): Batch<P>;
  /** An existing batch: its status, cancel, and `add()` to reopen it. */
  find<P extends object>(client: Client<P>, bid: string): Batch<P>;
  /**
   * The batch of the job running as `ctx` (Sidekiq's `batch` inside a
   * job): `add()` on it pushes more jobs into it (reopen) and opens child
   * batches, with no registration of its own (the job holds the batch open
   * until it finishes). Undefined for a job in no batch.
   */
  current<P extends object>(client: Client<P>, ctx: BatchJobContext): Batch<P> | undefined;
  /** For a callback job: the batch it is the callback of, and the event. */
  callback(ctx: Pick<JobContext, "payload">): { bid: string; event: BatchEvent } | undefined;
  /** Makes a flow: the top job runs once its children have succeeded, each child once its own have. */
  flow<P extends object>(client: Client<P>, node: FlowNode, options?: FlowOptions): Promise<Flow>;
  /** The children of the flow job running as `ctx`, in order, with their return values. */
  childResults(ctx: BatchJobContext): Promise<FlowChild[]>;
}

const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;
const encoder = new TextEncoder();

/**
 * Batches (Sidekiq Pro's) and flows (BullMQ's) on one counting model:
 * callbacks fire exactly once, after every job's outcome is recorded,
 * however many processes finish jobs at once and whatever is killed.
 *
 * @example
 * ```ts
 * const batches = batchJobs();
 * const client = createClient({ transport, features: [batches] });
 * const batch = batches.open(client, { description: "Import", callbacks: { success: [ImportDone, [importId]] } });
 * await batch.add(async (b) => {
 *   await b.pushBulk(ImportRow, rows.map((row) => [row.id]));
 * });
 * createWorker({ transport, jobs: [ImportRow, ImportDone], features: [batches] });
 * ```
 */
export function batchJobs(options: BatchJobsOptions = {}): BatchJobs {
  const expiresIn = options.expiresIn ?? DEFAULT_BATCH_EXPIRY_SECONDS;
  if (typeof expiresIn !== "number" || !Number.isFinite(expiresIn) || expiresIn <= 0) {
    throw new ConfigError(
      `Cannot create batchJobs() as 'expiresIn' must be > 0 seconds: current value is ${describeValue(expiresIn)}`,
    );
  }
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  if (!Number.isInteger(maxResultBytes) || maxResultBytes <= 0) {
    throw new ConfigError(
      `Cannot create batchJobs() as 'maxResultBytes' must be a whole number > 0: current value is ${
        describeValue(maxResultBytes)
      }`,
    );
  }
  const cache = new InfoCache();
  const runtime: BatchRuntime = { expiresInMs: expiresIn * 1000, cache };
  /** A batch job was let run since the beat last found none running: only then does a beat read the running jobs. */
  let admitted = false;

  const client: ClientMiddleware = Object.assign(
    (payload: JobPayload, ctx: Parameters<ClientMiddleware>[1], next: () => Promise<void>) => {
      const scope = ctx.options?.batch as BatchScope | undefined;
      if (scope === undefined || !ctx.guard) return next();
      const work = inBatch(scope, { keys: ctx.keys, job: ctx.job, options: ctx.options!, className: payload.class });
      payload.bid = work.fields.bid;
      ctx.guard(work.guard);
      return next();
    },
    {
      appliesTo: (_job: AnyJob | undefined, options: Readonly<PushContextOptions> | undefined) =>
        options?.batch !== undefined,
      // The same for every job of a push: a bulk push into a batch keeps the client's fast path.
      perPush: (ctx: PerPushContext) => inBatch(ctx.options.batch as BatchScope, ctx),
    },
  );

  /** What an outcome of a job of `bid` names, kept per batch (and per key prefix). */
  const chains = new WeakMap<Keys, Map<string, ChainKeys>>();
  const chainOf = (keys: Keys, bid: string): ChainKeys => {
    let byBid = chains.get(keys);
    if (!byBid) chains.set(keys, byBid = new Map());
    let chain = byBid.get(bid);
    if (!chain) {
      if (byBid.size >= 10_000) byBid.clear();
      byBid.set(bid, chain = chainKeys(keys, bid));
    }
    return chain;
  };

  // Synchronous while nothing needs reading: most jobs of a batch cost no promise here.
  const receive = (payload: JobPayload, _job: AnyJob, site: JobSite): void | Promise<void> => {
    const mark = callbackMark(payload);
    const bid = batchOf(payload, mark);
    if (bid === undefined) return;
    // A root batch's callback counts in no batch: nothing to know of it but whether it was cancelled.
    const load = (!mark || payload.bid !== undefined) && !cache.known(bid);
    if (load || cache.cancelledStale()) {
      return (async () => {
        if (load) await cache.load(site.transport, site.keys, bid);
        await cache.refreshCancelled(site.transport, site.keys);
        admit(bid);
      })();
    }
    admit(bid);
  };

  /** Lets a batch job run unless its batch was cancelled (one running when it is is stopped by the beat). */
  const admit = (bid: string) => {
    if (cache.cancelled(bid)) throw new Discard(`its batch ${bid} was cancelled`);
    admitted = true;
  };

  const outcome = (result: JobOutcome, site: JobSite): OutcomeWrite | undefined => {
    const payload = result.payload;
    const mark = callbackMark(payload);
    const bid = batchOf(payload, mark);
    if (bid === undefined) return undefined;
    let kind: MemberKind;
    if (result.kind === "succeeded" || result.kind === "discarded") kind = "ok";
    else if (result.kind === "retry") kind = "fail";
    else if (result.kind === "dead" || result.kind === "dropped") kind = "dead";
    else return undefined;
    const level = !mark ? 1 : isBid(payload.bid) && payload.bid === parentBid(mark.bid) ? 2 : 0;
    let info = "";
    let value = "";
    const chain = chainOf(site.keys, bid);
    if (kind !== "ok") info = failureInfo(payload, result.error, kind === "dead");
    else if (result.kind === "succeeded" && level > 0 && cache.get(chain.chain[level - 1])?.flow) {
      const stored = storedResult(result.result, maxResultBytes);
      if (typeof stored === "string") value = stored;
      else {
        kind = "dead";
        info = failureInfo(payload, stored.error, true);
      }
    }
    const queues = cache.queues(bid, payload.queue);
    if (kind === "ok" && level === 1 && !mark && info === "") {
      const { keys, head, args } = successItem(site.keys, chain, {
        member: payload.jid,
        result: value,
        now: Date.now(),
        queues,
      });
      return { script: BATCH_OUTCOME, keys, head, args, coalesce: true };
    }
    const { keys, head, args } = outcomeItem(site.keys, {
      op: "job",
      bid,
      member: payload.jid,
      level,
      callback: mark?.event ?? "",
      kind,
      info,
      result: value,
      now: Date.now(),
      queues,
    }, chain);
    return { script: BATCH_OUTCOME, keys, head, args, coalesce: true };
  };

  const withFeature = (client: Client<object>, action: string): Client<object> => {
    if (!client?.features?.some((f) => f.name === "batches")) {
      throw new ConfigError(
        `Cannot ${action} as the client has no batchJobs() feature: add it to createClient({ features })`,
      );
    }
    return client;
  };

  return Object.freeze(
    {
      name: "batches",
      options: BATCH_OPTION_RULES,
      client,
      receive,
      outcome,
      async beat(ctx) {
        if (!ctx.jobs || !admitted) return;
        // The batch jobs running here, read from their payloads (parsed for the beat): no per-job bookkeeping.
        const here: [jid: string, bid: string][] = [];
        for (const job of ctx.jobs.list()) {
          const bid = job.payload && batchOf(job.payload, callbackMark(job.payload));
          if (bid !== undefined) here.push([job.jid, bid]);
        }
        // None: later beats read nothing until a batch job is let run again (set in admit, never lost across this await).
        if (here.length === 0) {
          admitted = false;
          return;
        }
        await cache.refreshCancelled(ctx.transport, ctx.keys, true);
        for (const [jid, bid] of here) {
          if (cache.cancelled(bid)) ctx.jobs.stop(jid, `its batch ${bid} was cancelled`);
        }
      },
      dashboard: BATCHES_DASHBOARD,
      open: <P extends object>(c: Client<P>, batchOptions: BatchOptions = {}) =>
        newBatch(withFeature(c, "open a batch"), runtime, batchOptions) as Batch<P>,
      find: <P extends object>(c: Client<P>, bid: string) =>
        existingBatch(withFeature(c, "find a batch"), runtime, checkBid(bid, "find a batch")) as Batch<P>,
      current<P extends object>(c: Client<P>, ctx: BatchJobContext) {
        const bid = ctx?.payload?.bid;
        if (!isBid(bid)) return undefined;
        return existingBatch(withFeature(c, "add to the running job's batch"), runtime, bid, ctx.jid) as Batch<P>;
      },
      callback: (ctx) => callbackMark(ctx.payload),
      flow: (c, node, flowOptions = {}) => createFlow(withFeature(c, "make a flow"), runtime, node, flowOptions),
      childResults: (ctx) => readChildren(ctx),
    } satisfies BatchJobs,
  );
}

/**
 * What pushing into `scope` does to each job: it carries the batch's `bid`
 * and is written through the batch guard, which registers it in the batch in
 * the same atomic step. Refuses a push the batch cannot take.
 */
function inBatch(
  scope: BatchScope,
  ctx: Pick<PerPushContext, "keys" | "job" | "options" | "className">,
): { fields: { bid: string }; guard: WriteGuard } {
  const parts = partsOf(scope);
  const label = sanitize(ctx.className, 100);
  if (!parts.open) {
    throw new BatchError(
      `Cannot push job ${label} into batch ${parts.bid} as its add() has finished: push inside the function given to add()`,
    );
  }
  if (parts.prefix !== ctx.keys.prefix) {
    throw new BatchError(
      `Cannot push job ${label} into batch ${parts.bid} as that batch lives under another key prefix`,
    );
  }
  const conflict = (ctx.options as { uniqueConflict?: unknown }).uniqueConflict ??
    (ctx.job?.options as { uniqueConflict?: unknown } | undefined)?.uniqueConflict;
  if (conflict === "replace") {
    throw new BatchError(
      `Cannot push job ${label} into batch ${parts.bid} with uniqueConflict "replace": the copy it replaces would keep its own batch waiting`,
    );
  }
  return {
    fields: { bid: parts.bid },
    guard: {
      fragment: BATCH_GUARD,
      keys: [ctx.keys.batch(parts.bid), ctx.keys.batchJobs(parts.bid)],
      args: [parts.holder, parts.policy],
    },
  };
}

/**
 * The batch whose chain a job's outcome names: the one it is a callback of,
 * else the one it belongs to; undefined for a job of no batch (or a mark no
 * batch of this feature made).
 */
function batchOf(payload: Readonly<JobPayload>, mark: { bid: string } | undefined): string | undefined {
  const bid = mark ? mark.bid : payload.bid;
  return isBid(bid) ? bid : undefined;
}

/** What a failed job's batch keeps of it (bounded: the full error is in the retry or dead entry). */
function failureInfo(payload: Readonly<JobPayload>, error: unknown, dead: boolean): string {
  return JSON.stringify({
    job: payload.class,
    class: errorClass(error),
    message: errorMessage(error).slice(0, 1000),
    dead,
  });
}

/** A flow job's return value as JSON within the limit, or why it cannot be kept. */
function storedResult(value: unknown, limit: number): string | { error: Error } {
  let json: string | undefined;
  try {
    json = JSON.stringify(value === undefined ? null : value);
  } catch (error) {
    return { error: new BatchError(`Cannot keep the job's return value for its flow: ${errorMessage(error)}`) };
  }
  if (json === undefined) json = "null";
  const bytes = json.length * 3 > limit ? encoder.encode(json).length : json.length;
  if (bytes > limit) {
    return {
      error: new BatchError(
        `Cannot keep the job's return value for its flow as it is ${bytes} bytes of JSON: the limit is ${limit} (batchJobs({ maxResultBytes }))`,
      ),
    };
  }
  return json;
}
