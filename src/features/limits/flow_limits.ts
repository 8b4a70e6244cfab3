/**
 * The flow-limits feature: limits declared on a job (`limits: [...]`) are
 * asked before the job starts (its `receive` hook), a run over one goes
 * back to the `schedule` set to run when the limiter expects room (a
 * `RunLater`: no failure, no retry, no processor held). A concurrency
 * slot is kept for this process's next job of the same limiter when its
 * job ends (`slot_pool.ts`), and its lease renewed while a long job runs.
 *
 * @module
 */
import type { ClientMiddleware } from "../../client_middleware.ts";
import { ConfigError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import type { AnyJob } from "../../job.ts";
import type { JobPayload } from "../../payload.ts";
import type { FeatureContext, JobOutcome, JobSite, ReceiveContext } from "../../server/worker_feature.ts";
import type { RedisArg } from "../../transport/transport.ts";
import type { Feature } from "../feature.ts";
import type { Taken } from "./limiter.ts";
import type { Duration } from "./duration.ts";
import { GROUP_GUARD } from "./group_guard.ts";
import { LIMITS_DASHBOARD } from "./limits_dashboard.ts";
import { type GroupDepth, GroupMover, MAX_DEPTH } from "./group_mover.ts";
import {
  type DeclaredLimit,
  GROUP_FIELD,
  type LimitCall,
  limitCalls,
  LIMITS_OPTION_RULES,
  type LimitsPushOptions,
  validateLimits,
} from "./options.ts";
import { OverLimit } from "./over_limit.ts";
import { CONCURRENT_RELEASE } from "./release_script.ts";
import { CONCURRENT_RENEW } from "./renew_script.ts";
import { type Slot, SlotPool } from "./slot_pool.ts";

/** Slots a running job holds. */
interface Held {
  readonly slots: Slot[];
  readonly started: number;
  /** The worker or drain running it. */
  readonly site: ReceiveContext;
}

/**
 * A kept slot is stale once taken this long ago (ms, or a quarter of its
 * lease if shorter): the next job gives it back before it takes one, so
 * each slot passes through Redis, where every process's take competes, at
 * least once a second.
 */
const MAX_REUSE_MS = 1000;
/**
 * A kept slot no job here has taken for this long goes back to Redis (ms):
 * long enough for a fetch's round trip over HTTP between two batches of
 * jobs (a shorter grace gave slots back between batches on Upstash under
 * load), short against any lease.
 */
const KEEP_GRACE_MS = 50;

/** What this process's flow limits did, since it started. */
export interface FlowLimitsCounts {
  /** Runs that went ahead under their declared limits. */
  admitted: number;
  /** Runs put back because a declared limit was full. */
  deferred: number;
}

/** Limits every fair group of a grouped queue keeps, each group its own. */
export interface GroupLimits {
  /** At most this many jobs of one group at once. */
  concurrency?: number;
  /** How long a group's slot outlives a process that died holding it (default 60 s). */
  lease?: Duration;
  /** At most this many jobs of one group per `per`. */
  rate?: number;
  per?: Duration;
}

/** Options for {@link flowLimits}. */
export interface FlowLimitsOptions {
  /** Per-group limits of grouped queues (`push(job, args, { group })`). */
  groups?: GroupLimits;
  /**
   * How deep the mover fills a grouped queue's plain list from its groups:
   * a number of jobs (1 to 1000), or `"auto"` (the default): at least 50,
   * and as many as this process takes from the queue in 2 ms (a queue kept
   * shorter runs dry between moves at a high rate). Deeper moves fewer
   * times; shallower keeps the turn fairer to a group that just got work.
   */
  groupLookahead?: GroupDepth;
}

/** The flow-limits feature. */
export interface FlowLimits extends Feature {
  readonly name: "limits";
  /** What this process's declared limits admitted and deferred. */
  counts(): FlowLimitsCounts;
  /** Jobs running here that hold concurrency slots. */
  holding(): number;
}

/**
 * Flow limits: pass it to the worker (or drain) that runs jobs with
 * declared `limits`. A client needs it only for its typed options.
 *
 * @example
 * ```ts
 * const Sync = defineJob({
 *   name: "Sync",
 *   limits: [{ concurrency: 5, key: ([tenant]) => String(tenant) }, { rate: 100, per: "1s" }],
 *   perform(_ctx, tenant: string) {},
 * });
 * createWorker({ transport, jobs: [Sync], features: [flowLimits()] });
 * ```
 */
export function flowLimits(options: FlowLimitsOptions = {}): FlowLimits {
  const held = new Map<string, Held>();
  const counts: FlowLimitsCounts = { admitted: 0, deferred: 0 };
  const groupLimits = readGroupLimits(options.groups);
  const lookahead = options.groupLookahead ?? "auto";
  if (lookahead !== "auto" && (!Number.isInteger(lookahead) || lookahead < 1 || lookahead > MAX_DEPTH)) {
    throw new ConfigError(
      `Cannot create flowLimits as 'groupLookahead' must be "auto" or a whole number from 1 to ${MAX_DEPTH}: current value is ${
        describeValue(lookahead)
      }`,
    );
  }
  const mover = new GroupMover(lookahead);
  const pool = new SlotPool({
    reuseMs: (limiter) => Math.min(MAX_REUSE_MS, limiter.perMs / 4),
    graceMs: KEEP_GRACE_MS,
    release: (slots) => void releaseSlots(slots),
  });
  /** Grouped jobs received since the last move, per queue: a move is due every half lookahead. */
  const since = new Map<string, number>();
  /** Each grouped queue's length as the last move here left it. */
  const queued = new Map<string, number>();
  /** Grouped jobs received since the last move here landed, per queue. */
  const taken = new Map<string, number>();
  /** The move on its way, per queue. */
  const moving = new Map<string, Promise<unknown>>();
  let loop: { stop(): void; done: Promise<void> } | undefined;
  let keeper: ReturnType<typeof setTimeout> | undefined;
  /** When the keeper's timer fires (ms, this process's clock). */
  let keeperAt = Infinity;

  /**
   * Gives back the slots of jobs that left without an outcome (put back
   * by an Interrupt or a hard stop): renewing them would hold them for the
   * life of the process.
   */
  async function beat(ctx: FeatureContext): Promise<void> {
    if (!ctx.jobs) return;
    const running = new Set(ctx.jobs.list().map((job) => job.jid));
    const gone = [...held].filter(([jid]) => !running.has(jid));
    for (const [jid] of gone) held.delete(jid);
    await releaseSlots(gone.flatMap(([, mine]) => mine.slots));
  }

  /**
   * Keeps the leases of running jobs' slots: one timer for all of them (not
   * one per job), every quarter of the shortest lease held, renewing in one
   * call per lease length the slots of jobs that have run a quarter of
   * their lease or longer (a slot is never renewed later than half its
   * lease after the job started).
   */
  function keepLeases(slots?: readonly Slot[]): void {
    let shortest = Infinity;
    for (const s of slots ?? [...held.values()].flatMap((mine) => mine.slots)) {
      shortest = Math.min(shortest, s.limiter.perMs);
    }
    if (shortest === Infinity) return;
    // A job whose lease is shorter than the timer's wait moves it sooner.
    const at = Date.now() + shortest / 4;
    if (keeper !== undefined && keeperAt <= at) return;
    clearTimeout(keeper);
    keeperAt = at;
    const timer = setTimeout(() => {
      keeperAt = Infinity;
      void renewLeases().finally(() => {
        // Unless a sooner timer (or a stop) replaced this one while it renewed.
        if (keeper !== timer) return;
        keeper = undefined;
        keepLeases();
      });
    }, shortest / 4);
    keeper = timer;
  }

  async function renewLeases(): Promise<void> {
    const now = Date.now();
    const calls = new Map<ReceiveContext, Map<number, { keys: string[]; holders: string[] }>>();
    for (const mine of held.values()) {
      for (const { limiter, holder, site } of mine.slots) {
        if (now - mine.started < limiter.perMs / 4) continue;
        let bySite = calls.get(site);
        if (!bySite) calls.set(site, bySite = new Map());
        let call = bySite.get(limiter.perMs);
        if (!call) bySite.set(limiter.perMs, call = { keys: [], holders: [] });
        call.keys.push(site.keys.limiter(limiter.name));
        call.holders.push(holder);
      }
    }
    await Promise.all(
      [...calls].flatMap(([site, bySite]) =>
        [...bySite].map(([lease, { keys, holders }]) =>
          site.transport.script(CONCURRENT_RENEW, keys, [lease, ...holders]).catch((error) =>
            site.onError(error, { context: "renewing limiter leases" })
          )
        )
      ),
    );
  }

  /**
   * Keeps a grouped queue fed while its jobs are being taken: a move every
   * half lookahead of grouped jobs received here, in the background; awaited
   * only when this process thinks the queue is about dry (a drain must not
   * find it empty while the groups still hold work). A job received while a
   * move is on its way and the queue is about dry waits for that move: its
   * jobs may be the last ones, and a drain that finished everything in hand
   * before the move landed would call the queue empty.
   */
  function feed(queue: string, ctx: ReceiveContext): Promise<unknown> | undefined {
    mover.took(queue);
    const n = (since.get(queue) ?? 0) + 1;
    since.set(queue, n);
    // Counted from the last move that landed, not the last one launched: jobs taken while a move travels still
    // came out of what the one before left.
    const drawn = (taken.get(queue) ?? 0) + 1;
    taken.set(queue, drawn);
    const left = (queued.get(queue) ?? 0) - drawn;
    const travelling = moving.get(queue);
    if (n < mover.target(queue) / 2 && left > 1) return undefined;
    if (travelling) return left > 1 ? undefined : travelling;
    since.set(queue, 0);
    const move: Promise<unknown> = mover.move(ctx, queue).then(
      (result) => {
        queued.set(queue, result.queued);
        taken.set(queue, 0);
      },
      (error) => ctx.onError(error, { context: "moving grouped jobs", queue }),
    ).finally(() => moving.delete(queue));
    moving.set(queue, move);
    return left > 1 ? undefined : move;
  }

  function receive(payload: JobPayload, job: AnyJob, ctx: ReceiveContext): Promise<void> | undefined {
    const group = payload[GROUP_FIELD];
    const fed = typeof group === "string" ? feed(payload.queue ?? "default", ctx) : undefined;
    const declared = (job.options as { limits?: readonly DeclaredLimit[] }).limits ?? [];
    const calls = declared.length ? limitCalls(payload.class, declared, payload.args) : [];
    if (typeof group === "string" && groupLimits.length) {
      calls.push(...limitCalls(`group:${payload.queue ?? "default"}`, groupLimits, [group]));
      calls.sort((a, b) => Number(b.limiter.kind === "concurrent") - Number(a.limiter.kind === "concurrent"));
    }
    if (calls.length === 0) return fed?.then(() => {});
    if (fed) return fed.then(() => admit(payload, calls, ctx));
    return admitKept(payload, calls, ctx) ? undefined : admit(payload, calls, ctx);
  }

  /** Admits a run whose limits are all concurrent with a kept slot each, without a promise; false if not so. */
  function admitKept(payload: JobPayload, calls: LimitCall[], ctx: ReceiveContext): boolean {
    const slots: Slot[] = [];
    for (const { limiter } of calls) {
      const kept = limiter.kind === "concurrent" ? pool.take(limiter, ctx) : undefined;
      if (kept) slots.push(kept);
      if (!kept || pool.stale(kept)) {
        for (const slot of slots) pool.keep(slot);
        return false;
      }
    }
    counts.admitted++;
    held.set(payload.jid, { slots, started: Date.now(), site: ctx });
    keepLeases(slots);
    return true;
  }

  async function admit(payload: JobPayload, calls: LimitCall[], ctx: ReceiveContext): Promise<void> {
    const site = { transport: ctx.transport, keys: ctx.keys, jid: payload.jid };
    const slots: Slot[] = [];
    // Slots taken for a run that will not start are kept for the next job.
    const refuse = (name: string, waitMs: number) => {
      for (const slot of slots) pool.keep(slot);
      return new OverLimit(name, waitMs);
    };
    for (const { limiter, cost } of calls) {
      const kept = limiter.kind === "concurrent" ? pool.take(limiter, ctx) : undefined;
      if (kept && !pool.stale(kept)) {
        slots.push(kept);
        continue;
      }
      // Given back before the take, not beside it: a take that overtook it would find this process's own slot held.
      if (kept) await releaseSlots([kept]);
      let got: Taken;
      try {
        // A holder of its own per take, not the jid: a kept slot outlives its job, which may come back (deferred,
        // retried) while another job runs in the slot, and must not find "its" slot already held.
        got = await limiter.take(site, { cost, holder: `${payload.jid}:${crypto.randomUUID()}` });
      } catch (error) {
        // A limiter that cannot be asked (Redis away) defers the run: an error here would bury the job.
        ctx.onError(error, { context: "asking a limiter", limiter: limiter.name, jid: payload.jid });
        throw refuse(limiter.name, 1000);
      }
      if (!got.ok) {
        counts.deferred++;
        throw refuse(limiter.name, got.waitMs);
      }
      if (limiter.kind === "concurrent") {
        slots.push({ limiter, holder: got.holder!, takenAt: Date.now(), site: ctx, runs: 0, heldMs: 0 });
      }
    }
    counts.admitted++;
    if (slots.length) {
      held.set(payload.jid, { slots, started: Date.now(), site: ctx });
      keepLeases(slots);
    }
  }

  /**
   * A finished job's slots are kept for the next job here (the next job,
   * the grace sweep or the stop gives them back): no write, so a success is
   * acknowledged at once.
   */
  function observe(outcome: JobOutcome): void {
    const mine = held.get(outcome.payload.jid);
    if (!mine) return;
    held.delete(outcome.payload.jid);
    const ms = Date.now() - mine.started;
    for (const slot of mine.slots) {
      slot.runs++;
      slot.heldMs += ms;
      pool.keep(slot);
    }
  }

  /** Gives slots back in the background; a failure is reported, the leases free them. */
  async function releaseSlots(slots: readonly Slot[]): Promise<void> {
    const bySite = new Map<ReceiveContext, Slot[]>();
    for (const slot of slots) {
      const list = bySite.get(slot.site);
      if (list) list.push(slot);
      else bySite.set(slot.site, [slot]);
    }
    await Promise.all([...bySite].map(([site, mine]) => {
      const { keys, args } = releaseArgs(site, mine);
      return site.transport.script(CONCURRENT_RELEASE, keys, args)
        .catch((error) => site.onError(error, { context: "giving limiter slots back" }));
    }));
  }

  const client: ClientMiddleware = Object.assign(
    (payload: JobPayload, ctx: Parameters<ClientMiddleware>[1], next: () => Promise<void>) => {
      const group = (ctx.options as LimitsPushOptions | undefined)?.group;
      // A move of a job already grouped (a promotion) goes to its queue as it is.
      if (group === undefined || !ctx.guard) return next();
      payload[GROUP_FIELD] = group;
      ctx.guard({
        fragment: GROUP_GUARD,
        keys: [
          ctx.keys.groupJobs(ctx.queue, group),
          ctx.keys.groupsReady(ctx.queue),
          ctx.keys.groupsPaused(ctx.queue),
          ctx.keys.groupedQueues,
        ],
        args: [group],
      });
      return next();
    },
    {
      appliesTo: (_job: unknown, options: Readonly<Record<string, unknown>> | undefined) =>
        options?.group !== undefined,
    },
  );

  /** The worker's mover loop: a move when grouped work may be waiting, at most every second when idle. */
  function startLoop(ctx: FeatureContext): void {
    let stopped = false;
    let wake: (() => void) | undefined;
    const done = (async () => {
      let idleMs = 50;
      while (!stopped) {
        let moved = 0;
        try {
          moved = await mover.moveAll(ctx);
        } catch (error) {
          ctx.onError(error, { context: "moving grouped jobs" });
        }
        idleMs = moved > 0 ? 50 : Math.min(1000, idleMs * 2);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, idleMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    })();
    loop = {
      stop() {
        stopped = true;
        wake?.();
      },
      done,
    };
  }

  return Object.freeze(
    {
      name: "limits",
      options: LIMITS_OPTION_RULES,
      client,
      receive: (payload: JobPayload, job: AnyJob, ctx: ReceiveContext) =>
        (job.options as { limits?: unknown[] }).limits?.length || payload[GROUP_FIELD] !== undefined
          ? receive(payload, job, ctx)
          : undefined,
      observe,
      poll: { run: (ctx: FeatureContext) => mover.moveAll(ctx) },
      dashboard: LIMITS_DASHBOARD,
      beat,
      start(ctx) {
        startLoop(ctx);
        return Promise.resolve();
      },
      async stop() {
        loop?.stop();
        await loop?.done;
        // Jobs that ended without an outcome (put back at a hard stop) give their slots back here, not at lease end,
        // and so do slots kept for a next job; the jobs of another worker or drain this instance serves (one not
        // stopping) keep theirs, and their lease timer.
        const ended = [...held].filter(([, mine]) => mine.site.stopping?.aborted ?? true);
        for (const [jid] of ended) held.delete(jid);
        if (!held.size) {
          clearTimeout(keeper);
          keeper = undefined;
          keeperAt = Infinity;
        }
        await releaseSlots([...ended.flatMap(([, mine]) => mine.slots), ...pool.empty()]);
      },
      counts: () => ({ ...counts }),
      holding: () => held.size,
    } satisfies FlowLimits,
  );
}

/** Per-group limits as declared limits keyed by the group. */
function readGroupLimits(spec: GroupLimits | undefined): readonly DeclaredLimit[] {
  if (spec === undefined) return [];
  const limits: DeclaredLimit[] = [];
  const key = ([group]: unknown[]) => String(group);
  if (spec.concurrency !== undefined) {
    limits.push({ concurrency: spec.concurrency, key, ...(spec.lease === undefined ? {} : { lease: spec.lease }) });
  }
  if (spec.rate !== undefined || spec.per !== undefined) limits.push({ rate: spec.rate!, per: spec.per!, key });
  return validateLimits(
    limits,
    (what, value) =>
      new ConfigError(`Cannot create flowLimits as 'groups' ${what}: current value is ${describeValue(value)}`),
  );
}

/**
 * `CONCURRENT_RELEASE`'s keys and args for `slots`, as one write: per slot,
 * the mean time a job held it, the jobs it ran beyond its take (uses the
 * take did not count), and its holder.
 */
function releaseArgs(site: JobSite, slots: readonly Slot[]): { keys: string[]; args: RedisArg[] } {
  const keys = slots.flatMap((s) => [site.keys.limiter(s.limiter.name), site.keys.limiterStats(s.limiter.name)]);
  const args = slots.flatMap((s) => [Math.round(s.heldMs / Math.max(1, s.runs)), Math.max(0, s.runs - 1), s.holder]);
  return { keys, args: [keys.length, args.length, ...args] };
}
