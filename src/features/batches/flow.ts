/**
 * Flows (BullMQ's `FlowProducer`) on the batch model: a job with children
 * is a batch whose members are its children and whose success callback is
 * the job itself, so it runs once every child has succeeded, exactly once,
 * and reads their return values (kept only for flows' jobs). A child with
 * children of its own is a child batch, to any depth. Each child's failure
 * policy says what its death does to its parent: fail it (BullMQ's
 * `failParentOnFailure`, the default: the parent goes to the dead set
 * without running), ignore it (`ignoreDependencyOnFailure`: the parent runs
 * when the others succeed) or continue (`continueParentOnFailure`: the
 * parent runs at once).
 *
 * @module
 */
import { type Client, preparePush } from "../../client.ts";
import type { PushOptions } from "../../job.ts";
import type { PlannedJob } from "../../push_buffer.ts";
import type { RedisArg, RedisReply } from "../../transport/redis_values.ts";
import { MAKE_FLOW } from "./make_flow_script.ts";
import { BATCH_GUARD } from "./push_guard.ts";
import { BatchError, PayloadError } from "../../errors.ts";
import type { AnyJob, JobContext } from "../../job.ts";
import { pushTarget } from "../../push_options.ts";
import { describeValue } from "../../describe_value.ts";
import { sanitize } from "../../sanitize.ts";
import {
  type Batch,
  batchCreation,
  type BatchRuntime,
  type BatchScope,
  builtCallbacks,
  newBatch,
  newChild,
  type PolicyCode,
  preparingScope,
  setFlowOrder,
  withPolicy,
} from "./batch.ts";
import { callbackMark, type JobSpecTuple } from "./callbacks.ts";
import { type FlowChildrenReply, type FlowOrder, READ_FLOW_CHILDREN } from "./control_scripts.ts";
import { EMBED_FIELD } from "./counting.ts";
import { EndOfBurst } from "../../end_of_burst.ts";
import type { Transport } from "../../transport/transport.ts";

/** What a child's death does to its parent: fail it (default), ignore it, or start the parent at once. */
export type FlowPolicy = "fail" | "ignore" | "continue";

/** One job of a flow, and the jobs it waits for. */
export interface FlowNode {
  /** The job: `[job, args?, options?]` (options: queue, retry, extra). */
  readonly job: JobSpecTuple;
  /** Jobs that must succeed before this one runs; it reads their return values. */
  readonly children?: readonly FlowNode[];
  /** What this job's death does to its parent; default `"fail"`. */
  readonly onFailure?: FlowPolicy;
}

/** Options of a flow. */
export interface FlowOptions {
  /** Shown on the dashboard. */
  readonly description?: string;
  /** How long its data is kept, seconds; default the feature's (30 days). */
  readonly expiresIn?: number;
}

/** A flow, made. */
export interface Flow {
  /** The top job's jid. */
  readonly jid: string;
  /** The batch its children are counted in (undefined for a flow without children: a plain push). */
  readonly bid: string | undefined;
}

/** One child of a flow's job, as the job reads it. */
export interface FlowChild {
  /** Its jid; null if it was not pushed (a unique job's duplicate, or a middleware stopped it). */
  readonly jid: string | null;
  readonly className: string;
  /** For a child with children of its own: the batch they are counted in. */
  readonly bid?: string;
  /**
   * `succeeded`; `failed` (it failed and the parent runs anyway: policy
   * continue); `ignored` (it died, policy ignore); `waiting` (not finished:
   * policy continue started the parent early); `skipped` (not pushed).
   */
  readonly state: "succeeded" | "failed" | "ignored" | "waiting" | "skipped";
  /** What it returned (`succeeded`). */
  readonly value?: unknown;
  /** What failed (`failed`, `ignored`). */
  readonly error?: { readonly errorClass: string; readonly errorMessage: string; readonly dead: boolean };
}

const POLICIES: Readonly<Record<FlowPolicy, PolicyCode>> = { fail: "", ignore: "i", continue: "c" };

/**
 * Makes a flow: every batch, every child pushed, the parents kept in their
 * batches until their children succeed.
 *
 * @example
 * ```ts
 * const flow = await createFlow(client, runtime, { job: [Report, [id]], children: [{ job: [Part, [1]] }] }, {});
 * ```
 */
export async function createFlow(
  client: Client<object>,
  runtime: BatchRuntime,
  node: FlowNode,
  options: FlowOptions,
): Promise<Flow> {
  checkNode(node, "flow");
  if (!node.children?.length) {
    const [job, args = [], pushOptions] = node.job;
    const jid = await client.push(job as string, args, pushOptions ?? {});
    if (jid === null) {
      throw new BatchError(`Cannot make the flow as its only job was not pushed (a middleware stopped it)`);
    }
    return { jid, bid: undefined };
  }
  const batch = newBatch(
    client,
    runtime,
    { description: options.description, expiresIn: options.expiresIn, callbacks: { success: node.job } },
    { policy: "" },
  );
  if (!await madeInOneCall(client, batch, node, options)) await fill(batch, node);
  return { jid: builtCallbacks(batch).success!.jid, bid: batch.bid };
}

/** A flow's leaf children of one job and policy: pushed together. */
interface LeafGroup {
  readonly job: AnyJob | string;
  readonly policy: PolicyCode;
  /** Their args, and their places among the children. */
  readonly args: unknown[][];
  readonly at: number[];
}

/** Adds leaf child `i` (no children, no push options of its own) to its group. */
function addLeaf(groups: Map<string, LeafGroup>, child: FlowNode, i: number): void {
  const [job, args = []] = child.job;
  const policy = POLICIES[child.onFailure ?? "fail"];
  const key = `${policy}\u0000${typeof job === "string" ? `name:${job}` : `def:${pushTarget(job).className}`}`;
  let found = groups.get(key);
  if (!found) groups.set(key, found = { job, policy, args: [], at: [] });
  found.args.push(args as unknown[]);
  found.at.push(i);
}

/**
 * Most children a flow made in one call has: a bulk push's default batch
 * (a bound on the script's size and on how long it holds Redis); a wider
 * flow is filled the usual way, a thousand children per call.
 */
const ONE_CALL_CHILDREN = 1000;

/**
 * Makes a flow whose children are all leaves without push options of their
 * own in one call (`make_flow_script.ts`): the batch, its children's
 * membership and the children, atomically, with no registration to open and
 * seal. Not when a middleware runs per job (a unique child, say) or guards a
 * child with more than its batch: the usual three calls then (false,
 * nothing written).
 */
async function madeInOneCall(
  client: Client<object>,
  batch: Batch,
  node: FlowNode,
  options: FlowOptions,
): Promise<boolean> {
  const children = node.children!;
  if (children.length > ONE_CALL_CHILDREN) return false;
  if (children.some((child) => child.children?.length || child.job[2] !== undefined)) return false;
  const groups = new Map<string, LeafGroup>();
  children.forEach((child, i) => addLeaf(groups, child, i));
  const order: FlowOrder = new Array(children.length);
  const writes: [PlannedJob, PolicyCode][] = [];
  for (const { job, policy, args, at } of groups.values()) {
    const prepared = await preparePush(client, job, args, { batch: preparingScope(batch, policy) } as PushOptions);
    if (!prepared) return false;
    for (const planned of prepared.jobs) {
      const [guard, other] = planned.guards;
      if (guard?.fragment !== BATCH_GUARD || other !== undefined || planned.atMs !== undefined) return false;
      writes.push([planned, policy]);
    }
    const className = pushTarget(job).className;
    prepared.jids.forEach((jid, n) => (order[at[n]] = [jid!, className]));
  }
  const made = await batchCreation(batch);
  const k = client.keys;
  const bid = batch.bid;
  const queues = [...new Set(writes.map(([planned]) => planned.queue))];
  const args: RedisArg[] = [
    bid,
    Date.now(),
    made.expiryMs,
    made.timeFormat,
    options.description ?? "",
    JSON.stringify(order),
    made.callbacks.length / 4,
    ...made.callbacks,
    queues.length,
    ...queues,
  ];
  for (const [planned, policy] of writes) {
    args.push(queues.indexOf(planned.queue) + 1, planned.jid, planned.json, policy);
  }
  await client.transport.script(MAKE_FLOW, [
    k.batch(bid),
    k.batchJobs(bid),
    k.batchFailed(bid),
    k.batchResults(bid),
    k.batches,
    k.queues,
    ...queues.map((queue) => k.queue(queue)),
  ], args);
  made.remember();
  return true;
}

/** Pushes a node's children into its batch (leaves in one bulk push per job and policy), sub-flows as child batches. */
async function fill(batch: Batch, node: FlowNode): Promise<void> {
  const children = node.children!;
  await batch.add(async (scope: BatchScope) => {
    const order: FlowOrder = new Array(children.length);
    const groups = new Map<string, LeafGroup>();
    const subflows: Promise<void>[] = [];
    children.forEach((child, i) => {
      const [job, args = [], options] = child.job;
      const policy = POLICIES[child.onFailure ?? "fail"];
      const className = pushTarget(job).className;
      if (child.children?.length) {
        const sub = newChild(scope, { callbacks: { success: child.job } }, { policy });
        subflows.push(
          fill(sub, child).then(() => void (order[i] = [builtCallbacks(sub).success!.jid, className, sub.bid])),
        );
        return;
      }
      if (options !== undefined) {
        subflows.push(
          withPolicy(scope, policy).push(job as string, args, options).then((jid) =>
            void (order[i] = [jid!, className])
          ),
        );
        return;
      }
      addLeaf(groups, child, i);
    });
    for (const group of groups.values()) {
      const jids = await withPolicy(scope, group.policy).pushBulk(group.job as string, group.args);
      jids.forEach((jid, n) => (order[group.at[n]] = [jid!, pushTarget(group.job).className]));
    }
    await Promise.all(subflows);
    setFlowOrder(batch, order);
  });
}

function checkNode(node: FlowNode, path: string): void {
  if (typeof node !== "object" || node === null || !Array.isArray(node.job)) {
    throw new PayloadError(
      `Cannot make the flow as ${path} must be { job: [job, args?, options?], children?, onFailure? }: current value is ${
        describeValue(node)
      }`,
    );
  }
  pushTarget(node.job[0]);
  if (node.onFailure !== undefined && !Object.hasOwn(POLICIES, node.onFailure)) {
    throw new PayloadError(
      `Cannot make the flow as ${path}.onFailure must be "fail", "ignore" or "continue": current value is ${
        describeValue(node.onFailure)
      }`,
    );
  }
  if (node.children !== undefined && !Array.isArray(node.children)) {
    throw new PayloadError(
      `Cannot make the flow as ${path}.children must be an array: current value is ${describeValue(node.children)}`,
    );
  }
  node.children?.forEach((child, i) => checkNode(child, `${path}.children[${i}]`));
}

/**
 * The children of the flow job running as `ctx`, in the order the flow
 * named them, with their return values (one command).
 *
 * @example
 * ```ts
 * const [a, b] = (await readChildren(ctx)).map((child) => child.value);
 * ```
 */
export async function readChildren(
  ctx: Pick<JobContext, "payload" | "jid" | "transport" | "keys">,
): Promise<FlowChild[]> {
  const mark = callbackMark(ctx.payload);
  if (!mark || mark.event !== "success") {
    throw new BatchError(
      `Cannot read the children of job ${
        sanitize(ctx.payload.class, 100)
      } ${ctx.jid} as it is not a flow's job with children`,
    );
  }
  const reply = carried(ctx.payload) ?? await readFromRedis(ctx, mark.bid);
  if (!reply) {
    throw new BatchError(`Cannot read the children of job ${ctx.jid} as its flow ${mark.bid} is gone (it expired)`);
  }
  return reply.order.map(([jid, className, bid], i): FlowChild => {
    if (jid === null) return { jid, className, state: "skipped" };
    const own = bid === undefined ? {} : { bid };
    const state = reply.states[i];
    const failure = reply.failed.get(jid);
    const error = failure === undefined ? undefined : parseFailure(failure);
    if (state?.[0] === "2") {
      return error ? { jid, className, ...own, state: "ignored", error } : {
        jid,
        className,
        ...own,
        state: "succeeded",
        value: reply.results.has(jid) ? JSON.parse(reply.results.get(jid)!) : undefined,
      };
    }
    if (state?.[0] === "1") return { jid, className, ...own, state: "failed", error };
    return { jid, className, ...own, state: "waiting" };
  });
}

/**
 * The children a parent's payload carries (written when its flow succeeded
 * and they fit: `EMBED_FIELD`); undefined when it carries none, or not in
 * that form (then they are read from Redis).
 */
function carried(payload: JobContext["payload"]): FlowChildrenReply | undefined {
  const value = (payload as Record<string, unknown>)[EMBED_FIELD];
  if (!Array.isArray(value) || value.length !== 4 || typeof value[0] !== "string" || !Array.isArray(value[1])) {
    return undefined;
  }
  try {
    return READ_FLOW_CHILDREN.decode([value as RedisReply])[0];
  } catch {
    return undefined;
  }
}

/** A parent's children read from its flow's keys (parents starting together share one call). */
function readFromRedis(
  ctx: Pick<JobContext, "transport" | "keys">,
  bid: string,
): Promise<FlowChildrenReply | undefined> {
  const k = ctx.keys;
  let reads = childReads.get(ctx.transport);
  if (!reads) childReads.set(ctx.transport, reads = new ChildReads(ctx.transport));
  return reads.read([k.batch(bid), k.batchJobs(bid), k.batchFailed(bid), k.batchResults(bid)]);
}

function parseFailure(raw: string): { errorClass: string; errorMessage: string; dead: boolean } {
  try {
    const info = JSON.parse(raw);
    return { errorClass: String(info.class), errorMessage: String(info.message), dead: info.dead === true };
  } catch {
    return { errorClass: "Error", errorMessage: raw, dead: false };
  }
}

/** Most flows read in one call (a bound on its KEYS and running time). */
const MAX_READS = 200;

/**
 * The children reads of flow parents that start in one burst of work (the
 * jobs a fetch's reply starts side by side), sent in one call per transport
 * when the burst is over: a parent costs no round trip of its own.
 */
class ChildReads {
  #transport: Transport;
  #waiting: { keys: string[]; done: (reply: FlowChildrenReply | undefined) => void; fail: (error: unknown) => void }[] =
    [];
  #burst = new EndOfBurst(() => this.#send());

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  read(keys: string[]): Promise<FlowChildrenReply | undefined> {
    const promise = new Promise<FlowChildrenReply | undefined>((done, fail) =>
      this.#waiting.push({ keys, done, fail })
    );
    this.#burst.note();
    return promise;
  }

  #send(): void {
    while (this.#waiting.length) {
      const sent = this.#waiting.splice(0, MAX_READS);
      // Reads change nothing: one that fails fails its parents' jobs, which are retried as any failure is.
      this.#transport.script(READ_FLOW_CHILDREN, sent.flatMap((read) => read.keys), []).then(
        (replies) => sent.forEach((read, i) => read.done(replies[i])),
        (error) => sent.forEach((read) => read.fail(error)),
      );
    }
  }
}

const childReads = new WeakMap<Transport, ChildReads>();
