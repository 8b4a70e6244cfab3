/**
 * The chaos suite's worker: one edgekiq worker process (Node, Bun or Deno)
 * that writes a ledger line for every job it finishes, outside Redis, so the
 * suite can count lost and duplicated jobs whatever happened to Redis.
 *
 * The ledger line is written with a synchronous `write(2)` on a file opened
 * for appending: once it returns, the line survives a SIGKILL of this
 * process. It is the job's side effect, written before the job's ack, so a
 * job killed between the two runs again and shows as a duplicate (what
 * reliable fetch allows, within the jobs in flight).
 *
 * Job `ChaosJob(ms, kind)`:
 * - `ok`: sleeps `ms`, then writes `done <jid>`;
 * - `ignore`: writes `start <jid>`, sleeps `ms` ignoring `ctx.signal`, then `done <jid>`;
 * - `poison`: writes `poison <jid>` and SIGKILLs its own process;
 * - `fail`: sleeps `ms`, writes `fail <jid>` and throws: its retry is due in an
 *   hour, so the suite sees where its first failure settled (the retry set,
 *   `retry_count` 0);
 * - `die`: the same, but `retryIn` says "kill": it goes to the dead set.
 *
 * Job `ChaosBatchDone()`, a batch's success callback: counts the distinct
 * jids every ledger of the scenario (this directory's) has marked done so
 * far, and writes `callback <jid> <bid> <count>`: the suite checks that the
 * callback fired once, and only once every job's outcome was recorded.
 *
 * CHAOS_MODE `worker` (default) runs `createWorker`; `drain` runs what a
 * serverless cron does, again and again: `pollOnce()`, then `drain()` for
 * CHAOS_DRAIN_BUDGET ms. CHAOS_TRANSPORT is `ioredis` (default), `bun` (Bun's
 * RedisClient; under Bun) or `upstash` (@upstash/redis to CHAOS_UPSTASH_URL
 * with CHAOS_UPSTASH_TOKEN, the REST gateway in front of the suite's Redis).
 *
 * env: CHAOS_URL, CHAOS_LEDGER (file), CHAOS_CONCURRENCY, CHAOS_PREFETCH,
 * CHAOS_HB, CHAOS_TTL, CHAOS_POLL, CHAOS_TIMEOUT, CHAOS_BLOCK (seconds).
 * Prints `ready <identity>` once running. Signals are the worker's own:
 * TERM stops (hard shutdown after CHAOS_TIMEOUT), TSTP quiets; a drain loop
 * stops after its current drain.
 */
import { openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { createClient, createLogger, createWorker, defineJob, drain, pollOnce } from "../../mod.ts";
import { batchJobs } from "../../src/features/batches/mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { serveWorker } from "../fixtures/serve_worker.ts";

const env = process.env;
const number = (name: string, fallback: number): number => {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value)) throw new Error(`${name} must be a number: got ${env[name]}`);
  return value;
};

const ledger = openSync(env.CHAOS_LEDGER ?? "/dev/null", "a");
const note = (line: string) => writeSync(ledger, line + "\n");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const ChaosJob = defineJob({
  name: "ChaosJob",
  // Failing jobs settle after their first failure: in the retry set for an hour, or dead.
  retryIn: (_count, error) => (String((error as Error)?.message).startsWith("chaos die") ? "kill" : 3600),
  async perform(ctx, ms: number, kind: string, _pad?: string) {
    if (kind === "poison") {
      note(`poison ${ctx.jid}`);
      process.kill(process.pid, "SIGKILL");
      await new Promise(() => {});
    }
    if (kind === "ignore") note(`start ${ctx.jid}`);
    if (ms > 0) await sleep(ms);
    if (kind === "fail" || kind === "die") {
      note(`fail ${ctx.jid}`);
      throw new Error(`chaos ${kind}`);
    }
    note(`done ${ctx.jid}`);
  },
});

const batches = batchJobs();

/** Jids marked done in every ledger of this scenario's directory. */
function doneInLedgers(): number {
  if (!env.CHAOS_LEDGER) return 0;
  const dir = dirname(env.CHAOS_LEDGER);
  const done = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".ledger"))) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (line.startsWith("done ")) done.add(line.slice(5));
    }
  }
  return done.size;
}

const ChaosBatchDone = defineJob({
  name: "ChaosBatchDone",
  perform(ctx) {
    note(`callback ${ctx.jid} ${batches.callback(ctx)?.bid} ${doneInLedgers()}`);
  },
});

async function openTransport(): Promise<Transport> {
  const kind = env.CHAOS_TRANSPORT ?? "ioredis";
  if (kind === "bun") {
    return (await import("../../src/transport/adapters/bun/bun_transport.ts")).bunTransport({ url: env.CHAOS_URL });
  }
  if (kind === "upstash") {
    const { upstashTransport } = await import("../../src/transport/adapters/upstash/upstash_transport.ts");
    return upstashTransport({ url: env.CHAOS_UPSTASH_URL, token: env.CHAOS_UPSTASH_TOKEN, timeoutMs: 5000 });
  }
  if (kind !== "ioredis") throw new Error(`CHAOS_TRANSPORT must be ioredis, bun or upstash: got ${kind}`);
  return ioredisTransport({ url: env.CHAOS_URL });
}

// Orphan guard: if the suite dies, its children must not run on forever.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(3);
}, 500).unref();

const transport = await openTransport();
const logger = createLogger({ level: "info" });
if (env.CHAOS_MODE === "drain") {
  // A serverless function's cron, called again as soon as it returns.
  let stopping = false;
  process.once("SIGTERM", () => void (stopping = true));
  const client = createClient({ transport });
  const budgetMs = number("CHAOS_DRAIN_BUDGET", 2000);
  console.log(`ready drain:${process.pid}`);
  while (!stopping) {
    const poll = await pollOnce({ client, logger, onError: (e) => logger.error("poll", { error: String(e) }) })
      .catch((error) => void logger.error("poll failed", { error: String(error) }));
    const drained = await drain({
      transport,
      jobs: [ChaosJob, ChaosBatchDone],
      features: [batches],
      budgetMs,
      concurrency: number("CHAOS_CONCURRENCY", 4),
      logger,
    }).catch((error) => void logger.error("drain failed", { error: String(error) }));
    if (!drained?.processed && !poll?.promoted) await sleep(200);
  }
  await transport.close();
  process.exit(0);
}
const worker = createWorker({
  transport,
  jobs: [ChaosJob, ChaosBatchDone],
  features: [batches],
  capsules: {
    default: {
      queues: ["default"],
      concurrency: number("CHAOS_CONCURRENCY", 4),
      prefetch: number("CHAOS_PREFETCH", 4),
    },
  },
  heartbeatInterval: number("CHAOS_HB", 1),
  heartbeatTtl: number("CHAOS_TTL", 5),
  pollIntervalAverage: number("CHAOS_POLL", 1),
  pollInitialWait: 0.2,
  timeout: number("CHAOS_TIMEOUT", 2),
  blockSeconds: number("CHAOS_BLOCK", 1),
  logger,
  jobLogging: false,
});

await serveWorker(worker, transport);
