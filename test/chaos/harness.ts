/**
 * Runs one chaos scenario: a fresh redis-server and worker fleet, the
 * scenario's pushes and faults, then a bounded wait until every pushed job
 * is accounted for (done in the ledger, or buried where the scenario expects
 * it), a clean stop, and the checks: nothing lost, duplicates within the
 * jobs in flight at the faults, nothing wrongly dead, nothing left in Redis.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "../../mod.ts";
import { PushError } from "../../src/push_error.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { sleep } from "../bench/support.ts";
import { startUpstashGateway, type UpstashGateway } from "../support/upstash-gateway.ts";
import { Fleet, type Runtime, type WorkerSettings } from "./fleet.ts";
import { duplicates, type Ledger, readLedgers } from "./ledger.ts";
import { ChaosRedis } from "./redis.ts";
import { explainLoss } from "./aof.ts";
import { deadSet, jidsOf, redisLeft, retrySet, waitQuiet } from "./redis-state.ts";

/** One job's arguments: how long it sleeps (ms), what it does (see worker.ts), optional padding. */
export type JobArgs = [ms: number, kind: "ok" | "ignore" | "poison" | "fail" | "die", pad?: string];

/** The transports the workers may use (the suite's own pushes and checks always use ioredis). */
export type ChaosTransport = "ioredis" | "bun";

/** What a scenario gets to push jobs, do faults and wait. */
export interface ScenarioContext {
  readonly redis: ChaosRedis;
  readonly fleet: Fleet;
  readonly settings: WorkerSettings;
  readonly short: boolean;
  /** Jids Redis confirmed. */
  readonly pushed: Set<string>;
  /**
   * Pushes in bulk, recording which jids landed. A batch whose reply was
   * lost may or may not be in Redis (`uncertain`); a refused one is not.
   * Resolves with the jids (in order; none if the push failed) or the
   * error of a failed push (already recorded).
   */
  push(argsList: JobArgs[], batchSize?: number): Promise<{ jids: (string | null)[]; error?: PushError }>;
  /**
   * Records a fault that hit `processes` workers: the duplicate bound grows by
   * processes x (concurrency + prefetch), or x `inFlight` where a worker may
   * hold more (a drain's prefetch grows to 100).
   */
  fault(processes: number, inFlight?: number): void;
  /** Fraction of pushed jobs done so far (from the ledger). */
  progress(): number;
  /** The ledger as it is now. */
  ledger(): Ledger;
  /** Waits until `check()` holds; throws after `timeoutMs`. */
  until(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void>;
  /** A line printed under the table. */
  note(line: string): void;
  /** A failed check (the scenario fails). */
  fail(line: string): void;
  /** Jids a scenario expects to end in the dead set (poison pills, jobs killed by their retryIn). */
  readonly expectDead: Set<string>;
  /** Jids a scenario expects to end in the retry set (failing jobs whose retry is not due before the end). */
  readonly expectRetry: Set<string>;
  /** The Upstash REST gateway in front of the scenario's Redis (scenarios with `upstash`). */
  readonly gateway?: UpstashGateway;
}

/** A scenario definition. */
export interface Scenario {
  id: string;
  /** Worker processes; default 3. */
  workers?: number;
  worker?: Partial<WorkerSettings>;
  /** AOF, and its fsync policy (see ChaosRedisOptions.aof). */
  aof?: "always" | "everysec";
  /** Longest wait for the drain once `run` returns, ms. */
  drainMs?: number;
  /** Skipped by `--short` (unless named by `--only`): it takes longer than CI's budget. */
  fullOnly?: boolean;
  /**
   * The workers run serverless drains (`pollOnce()` then `drain()` in a loop)
   * instead of `createWorker`, with this budget per drain, ms.
   */
  drainBudgetMs?: number;
  /** The workers reach Redis through @upstash/redis and the REST gateway (test/support/upstash-gateway.ts). */
  upstash?: boolean;
  run(ctx: ScenarioContext): Promise<void>;
  /** Checks of its own once the fleet has stopped and every job settled (Redis is still up). */
  after?(ctx: ScenarioContext): Promise<void>;
}

/** A scenario's table row. */
export interface Row {
  id: string;
  pushed: number;
  ran: number;
  lost: number;
  duplicated: number;
  bound: number;
  dead: number;
  drainSeconds: number;
  faults: number;
  passed: boolean;
  notes: string[];
  failures: string[];
  dir: string;
}

/** Options every scenario runs with. */
export interface SuiteOptions {
  runtime: Runtime;
  /** The workers' transport (a scenario with `upstash` uses Upstash's). */
  transport: ChaosTransport;
  short: boolean;
  keep: boolean;
}

export const DEFAULT_SETTINGS: WorkerSettings = {
  concurrency: 4,
  prefetch: 4,
  heartbeat: 1,
  ttl: 5,
  poll: 1,
  timeout: 2,
  block: 1,
};

/** `n` ordinary jobs of random length around `avgMs`. */
export function okJobs(n: number, avgMs: number): JobArgs[] {
  return Array.from({ length: n }, () => [Math.floor(Math.random() * (2 * avgMs + 1)), "ok"]);
}

/** Runs one scenario and returns its row. */
export async function runScenario(scenario: Scenario, suite: SuiteOptions): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), `edgekiq-chaos-${scenario.id}-`));
  const settings = { ...DEFAULT_SETTINGS, ...scenario.worker };
  // Jobs a fault can repeat, per process it hits: up to concurrency + prefetch fetched and not finished, and as many
  // finished whose acks were not yet written (acks ride the next fetch, and a partly done batch's wait for the rest
  // of it, up to 1 s: AckBook), so a process holds at most a batch of those beside its batch in hand.
  const perProcess = 2 * (settings.concurrency + settings.prefetch);
  const redis = await ChaosRedis.start({ dir, aof: scenario.aof });
  const token = "chaos-token";
  const gateway = scenario.upstash ? await startUpstashGateway({ redisUrl: redis.url, token }) : undefined;
  const env: Record<string, string> = gateway
    ? { CHAOS_TRANSPORT: "upstash", CHAOS_UPSTASH_URL: gateway.url, CHAOS_UPSTASH_TOKEN: token }
    : { CHAOS_TRANSPORT: suite.transport };
  if (scenario.drainBudgetMs) {
    Object.assign(env, { CHAOS_MODE: "drain", CHAOS_DRAIN_BUDGET: `${scenario.drainBudgetMs}` });
  }
  const fleet = new Fleet({
    size: scenario.workers ?? 3,
    runtime: suite.runtime,
    url: redis.url,
    dir,
    worker: settings,
    env,
  });
  const transport = ioredisTransport({ url: redis.url });
  const client = createClient({ transport });
  const pushed = new Set<string>();
  const uncertain = new Set<string>();
  const refused = new Set<string>();
  const expectDead = new Set<string>();
  const expectRetry = new Set<string>();
  const notes: string[] = [];
  const failures: string[] = [];
  let bound = 0;
  let faults = 0;
  let ledger: Ledger = readLedgers([]);
  const refresh = () => (ledger = readLedgers(fleet.ledgers()));
  const doneCount = () => {
    let n = 0;
    for (const jid of pushed) if (ledger.done.has(jid)) n++;
    return n;
  };
  const ctx: ScenarioContext = {
    redis,
    fleet,
    settings,
    short: suite.short,
    pushed,
    expectDead,
    expectRetry,
    gateway,
    async push(argsList, batchSize = 1000) {
      try {
        const jids = await client.pushBulk("ChaosJob", argsList, { batchSize });
        for (const jid of jids) if (jid) pushed.add(jid);
        appendFileSync(`${dir}/pushes.txt`, `ok ${jids.join(" ")}\n`);
        return { jids };
      } catch (error) {
        if (!(error instanceof PushError)) throw error;
        for (const jid of error.landed) pushed.add(jid);
        for (const jid of error.failed) (error.maybeApplied ? uncertain : refused).add(jid);
        const cause = (error.cause as Error | undefined)?.message ?? "";
        appendFileSync(
          `${dir}/pushes.txt`,
          `error ${error.message} | cause: ${cause} | maybeApplied ${error.maybeApplied}\n` +
            `landed ${error.landed.join(" ")}\nfailed ${error.failed.join(" ")}\nnotSent ${error.notSent.join(" ")}\n`,
        );
        return { jids: [], error };
      }
    },
    fault(processes, inFlight = perProcess) {
      faults++;
      bound += processes * inFlight;
    },
    progress: () => (refresh(), pushed.size ? doneCount() / pushed.size : 0),
    ledger: () => refresh(),
    async until(check, what, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
        await sleep(100);
      }
    },
    note: (line) => void notes.push(line),
    fail: (line) => void failures.push(line),
  };

  const t0 = performance.now();
  let drainSeconds = NaN;
  let deadJids: string[] = [];
  try {
    await fleet.start();
    await scenario.run(ctx);
    // Every pushed job done or dead (an innocent one in the dead set is
    // accounted for here and failed below).
    const drainDeadline = Date.now() + (scenario.drainMs ?? 60_000);
    let emptyChecks = 0;
    for (let round = 1;; round++) {
      refresh();
      if (round % 5 === 0 || doneCount() + expectDead.size + expectRetry.size >= pushed.size) {
        const dead = new Set(await deadSet(redis));
        const retrying = new Set(expectRetry.size ? await retrySet(redis) : []);
        if ([...pushed].every((j) => ledger.done.has(j) || dead.has(j) || (expectRetry.has(j) && retrying.has(j)))) {
          break;
        }
      }
      // Reliable fetch keeps every job in Redis until it is done: jobs not
      // done while Redis holds nothing (twice, a second apart) are lost, and
      // waiting longer would not bring them back.
      if (round % 5 === 0 && expectDead.size === 0 && expectRetry.size === 0) {
        emptyChecks = (await redisLeft(redis, transport)) === "" ? emptyChecks + 1 : 0;
        if (emptyChecks >= 2) {
          failures.push(`Redis holds none of the ${pushed.size - doneCount()} jobs not done`);
          break;
        }
      }
      if (Date.now() > drainDeadline) {
        failures.push(`not drained within ${(scenario.drainMs ?? 60_000) / 1000} s of the last fault`);
        break;
      }
      await sleep(200);
    }
    drainSeconds = (performance.now() - t0) / 1000;
    // Nothing may still be on its way (a queued copy would run again later).
    const quiet = await waitQuiet(redis, transport, 15_000, expectRetry);
    if (quiet) failures.push(`Redis not empty 15 s after the drain: ${quiet}`);
  } catch (error) {
    failures.push(String((error as Error)?.message ?? error));
  }
  const stragglers = await fleet.stop(settings.timeout * 1000 + 8000);
  for (const s of stragglers) failures.push(s);
  for (const d of fleet.deaths) notes.push(`worker died unexpectedly: ${d}`);
  refresh();
  let retryJids = new Set<string>();
  try {
    const left = await redisLeft(redis, transport, expectRetry);
    if (left) failures.push(`left in Redis after stop: ${left}`);
    const raws = (await redis.callPatiently(10_000, "ZRANGE", "dead", 0, -1)) as string[];
    writeFileSync(`${dir}/dead.txt`, raws.join("\n") + "\n");
    deadJids = jidsOf(raws);
    retryJids = new Set(await retrySet(redis));
  } catch (error) {
    failures.push(`could not read Redis after stop: ${(error as Error).message}`);
  }
  await scenario.after?.(ctx).catch((error) => void failures.push(`its own checks threw: ${(error as Error).message}`));
  await transport.close().catch(() => {});
  await gateway?.stop().catch(() => {});
  await redis.stop();

  const dead = new Set(deadJids);
  const settled = (j: string) => ledger.done.has(j) || dead.has(j) || (expectRetry.has(j) && retryJids.has(j));
  const lost = [...pushed].filter((j) => !settled(j));
  const wronglyDead = deadJids.filter((j) => !expectDead.has(j));
  const phantoms = [...refused].filter((j) => ledger.done.has(j));
  const unknown = [...ledger.done.keys()].filter((j) => !pushed.has(j) && !uncertain.has(j) && !refused.has(j));
  const duplicated = duplicates(ledger);
  if (lost.length) {
    failures.push(`lost ${lost.length} jobs, e.g. ${lost.slice(0, 3).join(", ")}`);
    for (const line of explainLoss(dir, lost.slice(0, 5))) notes.push(`post-mortem: ${line}`);
  }
  if (duplicated > bound) failures.push(`${duplicated} duplicates exceed the in-flight bound ${bound}`);
  if (wronglyDead.length) failures.push(`${wronglyDead.length} innocent jobs in the dead set`);
  if (phantoms.length) failures.push(`${phantoms.length} jobs ran although their push was refused`);
  if (unknown.length) failures.push(`${unknown.length} jobs ran that nobody pushed`);
  if (uncertain.size) {
    const ran = [...uncertain].filter((j) => ledger.done.has(j)).length;
    notes.push(`${uncertain.size} jobs pushed with a lost reply (maybe applied): ${ran} of them ran`);
  }
  const passed = failures.length === 0;
  if (passed && !suite.keep) rmSync(dir, { recursive: true, force: true });
  return {
    id: scenario.id,
    pushed: pushed.size,
    ran: [...pushed].filter((j) => ledger.done.has(j)).length,
    lost: lost.length,
    duplicated,
    bound,
    dead: deadJids.length,
    drainSeconds,
    faults,
    passed,
    notes,
    failures,
    dir,
  };
}
