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
 * - `poison`: writes `poison <jid>` and SIGKILLs its own process.
 *
 * env: CHAOS_URL, CHAOS_LEDGER (file), CHAOS_CONCURRENCY, CHAOS_PREFETCH,
 * CHAOS_HB, CHAOS_TTL, CHAOS_POLL, CHAOS_TIMEOUT, CHAOS_BLOCK (seconds).
 * Prints `ready <identity>` once running. Signals are the worker's own:
 * TERM stops (hard shutdown after CHAOS_TIMEOUT), TSTP quiets.
 */
import { openSync, writeSync } from "node:fs";
import process from "node:process";
import { createLogger, createWorker, defineJob } from "../../mod.ts";
import { ioredisTransport } from "../../src/transport/ioredis.ts";

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
  async perform(ctx, ms: number, kind: string, _pad?: string) {
    if (kind === "poison") {
      note(`poison ${ctx.jid}`);
      process.kill(process.pid, "SIGKILL");
      await new Promise(() => {});
    }
    if (kind === "ignore") note(`start ${ctx.jid}`);
    if (ms > 0) await sleep(ms);
    note(`done ${ctx.jid}`);
  },
});

const transport = ioredisTransport({ url: env.CHAOS_URL });
const worker = createWorker({
  transport,
  jobs: [ChaosJob],
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
  logger: createLogger({ level: "info" }),
  jobLogging: false,
});

// Orphan guard: if the suite dies, its children must not run on forever.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(3);
}, 500).unref();

await worker.run();
console.log(`ready ${worker.identity}`);
await worker.stopped;
await transport.close();
