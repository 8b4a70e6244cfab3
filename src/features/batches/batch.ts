/**
 * A batch and the scope its jobs are pushed in. `batch.add(fn)` opens a
 * registration (one command: the batch is created, or reopened, with a hold
 * that keeps it from completing), runs `fn` with a {@link BatchScope} whose
 * pushes register each job in the batch in the same atomic step as its
 * write, then seals the registration (one command, which may fire the
 * batch's callbacks if its jobs have all finished meanwhile). A job adding
 * to its own batch while it runs needs no hold: it is itself still waiting
 * in the batch.
 *
 * @module
 */
import { BatchError, ConfigError, PayloadError } from "../../errors.ts";
import type { BulkPushOptions, Client } from "../../client.ts";
import type { Job, PushOptions } from "../../job.ts";
import type { PushResult } from "../../push_result.ts";
import { describeValue } from "../../describe_value.ts";
import { sanitize } from "../../sanitize.ts";
import { checkBid, newBid, parentBid } from "./bid.ts";
import { BATCH_EVENTS, type BatchCallbacks, type BatchEvent, buildJob, type BuiltJob } from "./callbacks.ts";
import { InfoCache } from "./info_cache.ts";
import { OPEN_BATCH, type OpenVerdict } from "./open_script.ts";
import { BATCH_OUTCOME, outcomeItem } from "./outcome_script.ts";
import { frameWrites } from "../../server/frame_writes.ts";
import { type BatchStatus, readStatus } from "./batch_status.ts";
import { CANCEL_BATCH } from "./control_scripts.ts";
import type { RedisArg } from "../../transport/redis_values.ts";
import type { FlowOrder } from "./control_scripts.ts";

/** Options of a new batch. */
export interface BatchOptions {
  /** Shown on the dashboard and in its status. */
  description?: string;
  /** Jobs pushed when the batch completes, succeeds, or a job of it dies (each once). */
  callbacks?: BatchCallbacks;
  /**
   * How long its data is kept after its last registration, seconds;
   * default the feature's (30 days). A batch still running then is forgotten:
   * its jobs run, but count nowhere.
   */
  expiresIn?: number;
}

/** What a batch needs of its feature. */
export interface BatchRuntime {
  readonly expiresInMs: number;
  readonly cache: InfoCache;
}

/** A flow member's policy toward its parent: fail it (`""`), ignore the failure (`i`), continue at once (`c`). */
export type PolicyCode = "" | "i" | "c";

/** How a batch not yet made will be made. */
interface Plan {
  readonly options: BatchOptions;
  /** The scope of the parent batch's registration that covers this child. */
  readonly parent?: BatchScope;
  /** A flow: its parent job (the success callback) and its policy in its parent. */
  readonly flow?: { policy: PolicyCode };
}

// Set in the classes' static blocks: the module's own way into their private parts.
let scopeParts: (scope: BatchScope) => ScopeParts;
let makeScope: (batch: Batch, holder: string, policy: PolicyCode, state: { open: boolean }) => BatchScope;
let scopeBatch: (scope: BatchScope) => Batch;
let samePush: (scope: BatchScope, policy: PolicyCode) => BatchScope;
let configure: (batch: Batch, runtime: BatchRuntime, init: { plan?: Plan; holder?: string }) => void;
let setOrder: (batch: Batch, order: FlowOrder) => void;
let builtOf: (batch: Batch) => Partial<Record<BatchEvent, BuiltJob>>;
let runtimeOf: (batch: Batch) => BatchRuntime;
let creationOf: (batch: Batch) => Promise<Creation>;
let openScopeOf: (batch: Batch, policy: PolicyCode) => BatchScope;

/** What making a new batch writes of it, and what to do once it is written. */
export interface Creation {
  /** ms. */
  readonly expiryMs: number;
  /** `s` or `ms`: how its callbacks' times are written. */
  readonly timeFormat: string;
  /** Per callback: event, queue, jid, payload. */
  readonly callbacks: readonly RedisArg[];
  /** The batch was written: the feature's cache knows it, and it is no longer new. */
  remember(): void;
}

/** What the feature's client middleware reads of a scope. */
export interface ScopeParts {
  readonly bid: string;
  readonly holder: string;
  readonly policy: PolicyCode;
  readonly prefix: string;
  readonly open: boolean;
}

/**
 * The scope `add()` gives its function: pushes here join the batch.
 *
 * @example
 * ```ts
 * await batch.add(async (b) => {
 *   await b.pushBulk(ImportRow, rows.map((r) => [r.id]));
 *   const child = b.batch({ callbacks: { success: [Notify, []] } });
 *   await child.add((c) => c.push(Cleanup, []));
 * });
 * ```
 */
export class BatchScope<P extends object = object> {
  /** The batch's id. */
  readonly bid: string;
  #batch: Batch;
  #holder: string;
  #policy: PolicyCode;
  #state: { open: boolean };

  /** Made by `Batch.add`. */
  private constructor(batch: Batch, holder: string, policy: PolicyCode, state: { open: boolean }) {
    this.bid = batch.bid;
    this.#batch = batch;
    this.#holder = holder;
    this.#policy = policy;
    this.#state = state;
  }

  /** Pushes one job into the batch (as `client.push`): its jid, or `null` if it was not pushed. */
  push<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    args: Readonly<NoInfer<In>>,
    options?: PushOptions & P,
  ): Promise<string | null>;
  push(job: string, args: readonly unknown[], options?: PushOptions & P): Promise<string | null>;
  push(
    job: Job<unknown[], unknown[]> | string,
    args: readonly unknown[],
    options?: PushOptions,
  ): Promise<string | null> {
    return this.#client.push(job as string, args, this.#with(options));
  }

  /** Pushes many jobs into the batch (as `client.pushBulk`). */
  pushBulk<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    argsList: ReadonlyArray<Readonly<NoInfer<In>>>,
    options?: BulkPushOptions & P,
  ): Promise<(string | null)[]>;
  pushBulk(
    job: string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options?: BulkPushOptions & P,
  ): Promise<(string | null)[]>;
  pushBulk(
    job: Job<unknown[], unknown[]> | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options?: PushOptions,
  ): Promise<(string | null)[]> {
    return this.#client.pushBulk(job as string, argsList, this.#with(options) as object);
  }

  /** As {@link BatchScope.pushBulk}, with each job's {@link PushResult}. */
  pushBulkDetailed<In extends unknown[], Out extends unknown[]>(
    job: Job<In, Out>,
    argsList: ReadonlyArray<Readonly<NoInfer<In>>>,
    options?: BulkPushOptions & P,
  ): Promise<PushResult[]>;
  pushBulkDetailed(
    job: string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options?: BulkPushOptions & P,
  ): Promise<PushResult[]>;
  pushBulkDetailed(
    job: Job<unknown[], unknown[]> | string,
    argsList: ReadonlyArray<readonly unknown[]>,
    options?: PushOptions,
  ): Promise<PushResult[]> {
    return this.#client.pushBulkDetailed(job as string, argsList, this.#with(options) as object);
  }

  /**
   * A child batch of this one (Sidekiq Pro's batch opened inside
   * `batch.jobs`): made by its first `add()`, which must start while this
   * registration is open. This batch's success waits for the child's.
   */
  batch(options: BatchOptions = {}): Batch<P> {
    return newChild(this, options, undefined) as Batch<P>;
  }

  get #client(): Client<object> {
    return this.#batch.client;
  }

  #with(options: PushOptions | undefined): PushOptions {
    if (options !== undefined && (typeof options !== "object" || options === null)) {
      throw new PayloadError(
        `Cannot push into batch ${this.bid} as the options must be an object: current value is ${
          describeValue(options)
        }`,
      );
    }
    return { ...options, batch: this } as PushOptions;
  }

  static {
    scopeParts = (scope) => ({
      bid: scope.bid,
      holder: scope.#holder,
      policy: scope.#policy,
      prefix: scope.#batch.client.keys.prefix,
      open: scope.#state.open,
    });
    makeScope = (batch, holder, policy, state) => new BatchScope(batch, holder, policy, state);
    scopeBatch = (scope) => scope.#batch;
    samePush = (scope, policy) => new BatchScope(scope.#batch, scope.#holder, policy, scope.#state);
  }
}

/**
 * The parts of a scope the feature's middleware needs.
 *
 * @example
 * ```ts
 * const { bid, holder } = partsOf(scope);
 * ```
 */
export function partsOf(scope: BatchScope): ScopeParts {
  return scopeParts(scope);
}

/**
 * A scope of the same registration whose pushes carry a flow policy.
 *
 * @example
 * ```ts
 * withPolicy(scope, "i").push(Child, [1]); // its failure is ignored by the flow's parent
 * ```
 */
export function withPolicy(scope: BatchScope, policy: PolicyCode): BatchScope {
  return samePush(scope, policy);
}

/**
 * A batch: its id, `add()` to push jobs into it, its status, and cancel.
 * Get one from the feature: `batches.open(client, options)` (a new batch),
 * `batches.find(client, bid)` (an existing one), `batches.current(client,
 * ctx)` (the running job's own), or `scope.batch(options)` (a child).
 *
 * @example
 * ```ts
 * const batch = batches.open(client, { description: "Import", callbacks: { success: [ImportDone, [id]] } });
 * await batch.add(async (b) => { await b.pushBulk(ImportRow, rows); });
 * console.log(batch.bid, (await batch.status())?.pending);
 * ```
 */
export class Batch<P extends object = object> {
  /** The batch's id (Sidekiq Pro's `bid`). */
  readonly bid: string;
  /** The client it pushes with. */
  readonly client: Client<object>;
  #runtime: BatchRuntime;
  #plan: Plan | undefined;
  /** A running job of this batch adding to it: it holds the batch open itself. */
  #holder: string | undefined;
  /** A registration opened and not yet sealed (an `add()` that failed before its seal). */
  #hold: string | undefined;
  #holdOpen = false;
  /** An `add()` with its own registration is running on this object (a second would share, and seal, its registration). */
  #adding = false;
  /** A flow's children, in order, written with the seal. */
  #order: FlowOrder | undefined;
  #built: Partial<Record<BatchEvent, BuiltJob>> = {};

  /**
   * A handle on the batch `bid` (the admin API's: its status, cancel; `add()`
   * reopens it). Batches are made through the feature (`batches.open`).
   */
  constructor(client: Client<object>, bid: string) {
    this.bid = checkBid(bid, "open a batch handle");
    this.client = client;
    this.#runtime = defaultRuntime();
  }

  /** The parent batch's id, for a child batch. */
  get parentBid(): string | undefined {
    return parentBid(this.bid);
  }

  /**
   * Pushes jobs into the batch: `fn` gets a {@link BatchScope} whose pushes
   * join it. A new batch is created by its first `add()`; a later one
   * reopens it (refused once it has succeeded or was cancelled). Until `fn`
   * returns and the registration is sealed, the batch cannot complete, so a
   * crash in between leaves a batch that waits (and expires), never one
   * that fires early. If `fn` throws, the registration stays open and the
   * error is rethrown: call `add()` again on this same object to carry on
   * with it (it is sealed when that call's `fn` returns), or cancel the batch.
   * Inside a job of this batch (`batches.current`) the job itself holds the
   * batch open: nothing is opened or sealed.
   */
  async add(fn: (scope: BatchScope<P>) => unknown): Promise<void> {
    if (typeof fn !== "function") {
      throw new PayloadError(
        `Cannot add to batch ${this.bid} as add() takes a function: current value is ${describeValue(fn)}`,
      );
    }
    if (this.#holder !== undefined) {
      await this.#run(fn, this.#holder, "");
      return;
    }
    if (this.#adding) {
      throw new BatchError(
        `Cannot add to batch ${this.bid} while another add() on this object runs: await it first, or add through a second handle (batches.find)`,
      );
    }
    this.#adding = true;
    try {
      const hold = this.#hold ??= `o:${newBid()}`;
      if (!this.#holdOpen) {
        await this.#open(hold);
        this.#holdOpen = true;
      }
      await this.#run(fn, hold, "");
      await this.#seal(hold);
      this.#hold = undefined;
      this.#holdOpen = false;
    } finally {
      this.#adding = false;
    }
  }

  /** The batch's status now; undefined if it does not exist (expired, or not made yet). */
  status(): Promise<BatchStatus | undefined> {
    return readStatus(this.client, this.bid);
  }

  /**
   * Cancels the batch: its queued jobs are skipped when fetched (counted as
   * done, without running), its running jobs see `ctx.stopping`, and no
   * callback of it or its children is pushed from now on. Resolves to
   * whether the batch exists.
   */
  async cancel(): Promise<boolean> {
    const k = this.client.keys;
    const found = await this.client.transport.script(CANCEL_BATCH, [k.batch(this.bid), k.batchesCancelled], [
      this.bid,
      Date.now(),
    ]);
    if (found) this.#runtime.cache.noteCancelled(this.bid);
    return found;
  }

  async #run(fn: (scope: BatchScope<P>) => unknown, holder: string, policy: PolicyCode): Promise<void> {
    const state = { open: true };
    const scope = makeScope(this as Batch, holder, policy, state) as BatchScope<P>;
    try {
      await fn(scope);
    } finally {
      state.open = false;
    }
  }

  async #open(hold: string): Promise<void> {
    const k = this.client.keys;
    const now = Date.now();
    const base = [
      k.batch(this.bid),
      k.batchJobs(this.bid),
      k.batchFailed(this.bid),
      k.batchResults(this.bid),
      k.batches,
    ];
    const plan = this.#plan;
    if (!plan) {
      const verdict = await this.client.transport.script(OPEN_BATCH, base, [
        "reopen",
        this.bid,
        hold,
        now,
        0,
        "",
        "",
        "",
        "",
        "",
      ]);
      this.#refuse(verdict, "add jobs to");
      return;
    }
    const parent = plan.parent ? scopeParts(plan.parent) : undefined;
    if (parent && !parent.open) {
      throw new BatchError(
        `Cannot open child batch ${this.bid} as its parent's add() has finished: open children inside the function given to add()`,
      );
    }
    const made = await this.#creation(plan);
    const keys = parent ? [...base, k.batch(parent.bid), k.batchJobs(parent.bid)] : base;
    const verdict = await this.client.transport.script(OPEN_BATCH, keys, [
      "new",
      this.bid,
      hold,
      now,
      made.expiryMs,
      parent?.holder ?? "",
      plan.flow?.policy ?? "",
      made.timeFormat,
      plan.options.description ?? "",
      plan.flow ? "1" : "",
      ...made.callbacks,
    ]);
    this.#refuse(verdict, "open");
    made.remember();
  }

  /** What making the batch of `plan` writes (its expiry, its callbacks built), and, once written, remembering it. */
  async #creation(plan: Plan): Promise<Creation> {
    const expiresIn = plan.options.expiresIn;
    const built = await this.#buildCallbacks(plan);
    const callbacks: RedisArg[] = [];
    for (const event of BATCH_EVENTS) {
      const job = built[event];
      if (job) callbacks.push(event, job.queue, job.jid, job.json);
    }
    return {
      expiryMs: expiresIn === undefined ? this.#runtime.expiresInMs : expiresIn * 1000,
      timeFormat: this.client.timeFormat === "millis" ? "ms" : "s",
      callbacks,
      remember: () => {
        this.#runtime.cache.remember(this.bid, {
          exists: true,
          queues: [...new Set(Object.values(built).map((b) => b!.queue))],
          flow: plan.flow !== undefined,
          cancelled: false,
        });
        this.#plan = undefined;
      },
    };
  }

  async #buildCallbacks(plan: Plan): Promise<Partial<Record<BatchEvent, BuiltJob>>> {
    const parent = parentBid(this.bid);
    for (const event of BATCH_EVENTS) {
      const spec = plan.options.callbacks?.[event];
      if (spec === undefined || this.#built[event]) continue;
      this.#built[event] = await buildJob(this.client, spec, { callback: { bid: this.bid, event }, bid: parent });
    }
    return this.#built;
  }

  #refuse(verdict: OpenVerdict, action: string): void {
    const why: Record<Exclude<OpenVerdict, "ok">, string> = {
      gone: "it does not exist (it expired, or was never made)",
      succeeded: "it has succeeded: its callbacks have fired",
      cancelled: "it was cancelled",
      "parent-gone": `its parent batch ${parentBid(this.bid)} does not exist (it expired, or was never made)`,
      "parent-closed": `the registration of its parent batch ${
        parentBid(this.bid)
      } that would cover it is over (the job or add() that opened it has finished)`,
    };
    if (verdict !== "ok") throw new BatchError(`Cannot ${action} batch ${this.bid} as ${why[verdict]}`);
  }

  async #seal(hold: string): Promise<void> {
    const { cache } = this.#runtime;
    const { transport, keys } = this.client;
    await cache.load(transport, keys, this.bid);
    const item = outcomeItem(keys, {
      op: "seal",
      bid: this.bid,
      member: hold,
      level: 1,
      callback: "",
      kind: "ok",
      info: this.#order ? JSON.stringify(this.#order) : "",
      result: "",
      now: Date.now(),
      queues: cache.queues(this.bid),
    });
    await transport.script(BATCH_OUTCOME, ...frameWrites([item]));
  }

  static {
    configure = (batch, runtime, init) => {
      batch.#runtime = runtime;
      batch.#plan = init.plan;
      batch.#holder = init.holder;
    };
    setOrder = (batch, order) => void (batch.#order = order);
    creationOf = (batch) => {
      const plan = batch.#plan;
      if (!plan || plan.parent) {
        throw new BatchError(`Cannot make batch ${batch.bid} in one call: it is not a new root`);
      }
      return batch.#creation(plan);
    };
    openScopeOf = (batch, policy) => makeScope(batch, "", policy, { open: true });
    builtOf = (batch) => batch.#built;
    runtimeOf = (batch) => batch.#runtime;
  }
}

/** Sidekiq Pro's default: a batch's data is kept 30 days. */
export const DEFAULT_BATCH_EXPIRY_SECONDS = 30 * 24 * 60 * 60;

let shared: BatchRuntime | undefined;

/** The runtime of a bare handle (`new Batch(client, bid)`): the default expiry, a cache of its own. */
function defaultRuntime(): BatchRuntime {
  return shared ??= { expiresInMs: DEFAULT_BATCH_EXPIRY_SECONDS * 1000, cache: new InfoCache() };
}

/**
 * A new root batch.
 *
 * @example
 * ```ts
 * const batch = newBatch(client, runtime, { description: "Import" });
 * ```
 */
export function newBatch(
  client: Client<object>,
  runtime: BatchRuntime,
  options: BatchOptions,
  flow?: { policy: PolicyCode },
): Batch {
  checkOptions(options);
  const batch = new Batch(client, newBid());
  configure(batch, runtime, { plan: { options, flow } });
  return batch;
}

/**
 * A new child batch of the batch `scope` registers into.
 *
 * @example
 * ```ts
 * const child = newChild(scope, { description: "step 2" }, undefined);
 * ```
 */
export function newChild(scope: BatchScope, options: BatchOptions, flow: { policy: PolicyCode } | undefined): Batch {
  checkOptions(options);
  const parent = scopeBatch(scope);
  const batch = new Batch(parent.client, newBid(parent.bid));
  configure(batch, runtimeOf(parent), { plan: { options, parent: scope, flow } });
  return batch;
}

/**
 * An existing batch, as `runtime` knows it; with `holder`, the running job
 * that adds to it (no registration opened).
 *
 * @example
 * ```ts
 * const own = existingBatch(client, runtime, ctx.payload.bid, ctx.jid);
 * ```
 */
export function existingBatch(client: Client<object>, runtime: BatchRuntime, bid: string, holder?: string): Batch {
  const batch = new Batch(client, bid);
  configure(batch, runtime, { holder });
  return batch;
}

/** The flow's children, in order, written when the batch is sealed. */
export function setFlowOrder(batch: Batch, order: FlowOrder): void {
  setOrder(batch, order);
}

/**
 * What making the new root batch `batch` in a step of its own writes (a flow
 * made in one call): its expiry and its callbacks, built.
 *
 * @example
 * ```ts
 * const made = await batchCreation(batch);
 * await transport.script(MAKE_FLOW, keys, [bid, now, made.expiryMs, made.timeFormat, ...]);
 * made.remember();
 * ```
 */
export function batchCreation(batch: Batch): Promise<Creation> {
  return creationOf(batch);
}

/**
 * A scope whose pushes are prepared for `batch` (`preparePush`), with a flow
 * policy, outside any registration: for a batch written in one call with
 * its jobs.
 *
 * @example
 * ```ts
 * const prepared = await preparePush(client, Child, [[1]], { batch: preparingScope(batch, "") });
 * ```
 */
export function preparingScope(batch: Batch, policy: PolicyCode): BatchScope {
  return openScopeOf(batch, policy);
}

/** The callbacks a batch built so far (a flow reads its parent job there). */
export function builtCallbacks(batch: Batch): Partial<Record<BatchEvent, BuiltJob>> {
  return builtOf(batch);
}

function checkOptions(options: BatchOptions): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ConfigError(
      `Cannot open a batch as its options must be an object: current value is ${describeValue(options)}`,
    );
  }
  for (const field of Object.keys(options)) {
    if (field !== "description" && field !== "callbacks" && field !== "expiresIn") {
      throw new ConfigError(
        `Cannot open a batch as its options have an unknown field '${
          sanitize(field, 40)
        }' (it takes description, callbacks, expiresIn)`,
      );
    }
  }
  if (options.description !== undefined && typeof options.description !== "string") {
    throw new ConfigError(
      `Cannot open a batch as 'description' must be a string: current value is ${describeValue(options.description)}`,
    );
  }
  const e = options.expiresIn;
  if (e !== undefined && (typeof e !== "number" || !Number.isFinite(e) || e <= 0 || e > 10 * 365 * 86400)) {
    throw new ConfigError(
      `Cannot open a batch as 'expiresIn' must be > 0 seconds and at most ten years: current value is ${
        describeValue(e)
      }`,
    );
  }
  const callbacks = options.callbacks;
  if (callbacks === undefined) return;
  if (typeof callbacks !== "object" || callbacks === null || Array.isArray(callbacks)) {
    throw new ConfigError(
      `Cannot open a batch as 'callbacks' must be an object of complete, success, death: current value is ${
        describeValue(callbacks)
      }`,
    );
  }
  for (const [event, spec] of Object.entries(callbacks)) {
    if (!BATCH_EVENTS.includes(event as BatchEvent)) {
      throw new ConfigError(
        `Cannot open a batch as 'callbacks' has an unknown event '${
          sanitize(event, 40)
        }' (it takes complete, success, death)`,
      );
    }
    if (spec !== undefined && !Array.isArray(spec)) {
      throw new ConfigError(
        `Cannot open a batch as 'callbacks.${event}' must be [job, args?, options?]: current value is ${
          describeValue(spec)
        }`,
      );
    }
  }
}
