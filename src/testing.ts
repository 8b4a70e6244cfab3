/**
 * `edgekiq/testing`: run and inspect jobs in your own tests, on the memory
 * transport, with no Redis. Jobs are pushed exactly as in production (same
 * payloads, same middleware) and run through the real engine.
 *
 * @example
 * ```ts
 * import { createTestHarness } from "edgekiq/testing";
 * const t = createTestHarness({ jobs: [SendEmail] });
 * await SendEmail.performAsync(t.client, "ada@example.com", "Hi");
 * assert.equal((await t.enqueued()).length, 1);
 * await t.drain();            // runs it
 * ```
 *
 * @module
 */
import { Client } from "./client.ts";
import type { ClientMiddleware } from "./client_middleware.ts";
import { keys } from "./keys.ts";
import type { Logger } from "./logger.ts";
import { type JobPayload, parsePayload } from "./payload.ts";
import { createRegistry, type JobsInput } from "./registry.ts";
import { drain, type DrainResult } from "./server/drain.ts";
import type { ServerMiddleware } from "./server_middleware.ts";
import { ConfigError } from "./errors.ts";
import { Discard, Interrupt } from "./control.ts";
import { iterationSpecOf } from "./features/iterable/define_iterable_job.ts";
import { runIteration } from "./features/iterable/iteration.ts";
import { type IterationState, parseState } from "./features/iterable/iteration_states.ts";
import { type JobContext, validateArgs } from "./job.ts";
import { Poller } from "./server/poller.ts";
import { silentLogger } from "./logger.ts";
import { memoryTransport } from "./transport/adapters/memory/memory_transport.ts";
import type { Transport } from "./transport/transport.ts";

/** Options for {@link createTestHarness}. */
export interface TestHarnessOptions {
  /** The jobs `drain()` can run. */
  jobs: JobsInput;
  /** A transport; a fresh memory transport by default. */
  transport?: Transport;
  clientMiddleware?: ClientMiddleware[];
  middleware?: ServerMiddleware[];
  logger?: Logger;
}

/** What {@link TestHarness.step} did. */
export interface StepResult {
  jid: string;
  class: string;
  /** `done`; `interrupted` (an iterable job stopped early, back on its queue); `discarded` (it threw `Discard`). */
  outcome: "done" | "interrupted" | "discarded";
  /** An iterable job's saved state after the step (undefined once it is done). */
  iteration: IterationState | undefined;
}

/** A client plus inspection and inline execution. */
export interface TestHarness {
  readonly transport: Transport;
  readonly client: Client;
  /** Jobs waiting in `queue` (oldest first). */
  enqueued(queue?: string): Promise<JobPayload[]>;
  /** Jobs in the `schedule`, `retry` or `dead` set. */
  inSet(set: "schedule" | "retry" | "dead"): Promise<JobPayload[]>;
  /**
   * Runs every queued job (and, with `promote`, every scheduled or retrying
   * job due by `now`) until the queues are empty.
   */
  drain(options?: { promote?: boolean; now?: number; concurrency?: number }): Promise<DrainResult>;
  /**
   * Runs the oldest job of `queue` once, inline, as Sidekiq's `perform_one`
   * (no middleware, no retry: it leaves the queue, and an error is thrown to
   * you). An iterable job runs to its end, or with `items` stops after that
   * many items as it would at shutdown: it goes back to the front of its
   * queue with its cursor saved, and the next step resumes it. Resolves to
   * what happened, or undefined when the queue is empty.
   */
  step(options?: { queue?: string; items?: number }): Promise<StepResult | undefined>;
  /**
   * Empties the harness's own memory transport. Refused for a transport you
   * passed in: a real Redis may hold data that is not the test's.
   */
  clear(): Promise<void>;
}

/**
 * Creates a test harness.
 *
 * @example
 * ```ts
 * const t = createTestHarness({ jobs: [HardJob] });
 * await t.client.push(HardJob, ["x", 1], { in: 60 });
 * await t.drain({ promote: true, now: Date.now() + 61_000 });
 * ```
 */
export function createTestHarness(options: TestHarnessOptions): TestHarness {
  const transport = options.transport ?? memoryTransport();
  const client = new Client({ transport, middleware: options.clientMiddleware });
  const k = keys();
  const logger = options.logger ?? silentLogger;
  const registry = createRegistry(options.jobs);
  return {
    transport,
    client,
    async enqueued(queue = "default") {
      const raws = (await transport.call("LRANGE", k.queue(queue), 0, -1)) as string[];
      return raws.reverse().map(parsePayload);
    },
    async inSet(set) {
      const raws = (await transport.call("ZRANGE", k[set], 0, -1)) as string[];
      return raws.map(parsePayload);
    },
    async drain({ promote = false, now = Date.now(), concurrency = 1 } = {}) {
      if (promote) {
        const poller = new Poller({ client, logger });
        await poller.promote(k.retry, now);
        await poller.promote(k.schedule, now);
      }
      const queues = ((await transport.call("SMEMBERS", k.queues)) as string[]).sort();
      return drain({
        transport,
        jobs: options.jobs,
        queues: queues.length ? queues : ["default"],
        concurrency,
        budgetMs: 60_000,
        reserveMs: 0,
        middleware: options.middleware,
        logger,
      });
    },
    async step({ queue = "default", items } = {}) {
      const raw = (await transport.call("RPOP", k.queue(queue))) as string | null;
      if (raw === null) return undefined;
      const payload = parsePayload(raw);
      const job = registry.get(payload.class);
      if (!job) {
        await transport.call("RPUSH", k.queue(queue), raw);
        throw new ConfigError(`Cannot step job as no job named '${payload.class}' is registered in this harness`);
      }
      const args = await validateArgs(job, payload.args);
      const never = new AbortController().signal;
      const ctx: JobContext = {
        jid: payload.jid,
        queue,
        retryCount: typeof payload.retry_count === "number" ? payload.retry_count + 1 : 0,
        payload,
        logger: logger.child({ class: payload.class, jid: payload.jid, queue }),
        signal: never,
        stopping: never,
        transport,
        keys: k,
        progress: () => {},
      };
      const iteration = iterationSpecOf(job);
      let outcome: StepResult["outcome"] = "done";
      try {
        await (iteration ? runIteration(iteration, ctx, args, { maxItems: items }) : job.perform(ctx, ...args));
      } catch (error) {
        if (error instanceof Discard) outcome = "discarded";
        else if (error instanceof Interrupt) {
          outcome = "interrupted";
          await transport.call("RPUSH", k.queue(queue), raw);
        } else throw error;
      }
      const state = parseState(await transport.call("HGETALL", k.iteration(payload.jid)));
      return { jid: payload.jid, class: payload.class, outcome, iteration: state };
    },
    async clear() {
      if (options.transport) {
        throw new ConfigError(
          "Cannot clear the test harness as its transport was passed in: clear() only empties the harness's own memory transport",
        );
      }
      await transport.call("FLUSHDB");
    },
  };
}
