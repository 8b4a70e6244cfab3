/**
 * Unique jobs against a model: seeded random sequences of pushes (skip,
 * replace, reschedule; now or scheduled), drains whose jobs succeed or fail
 * (retry, then death), promotions, admin API deletes, kills, retries and
 * clears, jobs lost behind the API's back, and orphan sweeps. After every
 * step the locks and every job's place in Redis must be what the model says.
 *
 * UNIQUE_SEED=<n> replays one seed; UNIQUE_STEPS=<n> lengthens the runs.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Client, createClient, defineJob, drain, pollOnce, type PushResult, type Transport } from "../mod.ts";
import { type UniqueConflict, uniqueJobs } from "../src/features/mod.ts";
import { DeadSet, Queue, RetrySet, ScheduledSet } from "../src/api/mod.ts";
import { UniqueLocks } from "../src/features/mod.ts";
import { uniqueDigest } from "../src/features/unique/unique_digest.ts";
import { matrix } from "./support/matrix.ts";

const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
const unique = uniqueJobs();
/** Failures still to come, by jid: a job fails that many runs before it succeeds. */
const failures = new Map<string, number>();
const perform = (ctx: { jid: string }, _k: number) => {
  const left = failures.get(ctx.jid) ?? 0;
  if (left > 0) {
    failures.set(ctx.jid, left - 1);
    throw new Error("planned failure");
  }
};
const CLASSES = {
  PStart: defineJob({ name: "PStart", unique: { for: 600, until: "start" }, retry: 1, retryIn: () => 0, perform }),
  PSuccess: defineJob({
    name: "PSuccess",
    unique: { for: 600, until: "success" },
    retry: 1,
    retryIn: () => 0,
    perform,
  }),
};
type ClassName = keyof typeof CLASSES;
const KEYS_PER_CLASS = 3;

/** A small seeded generator (mulberry32): the same seed replays the same run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Where = "queue" | "schedule" | "retry" | "dead" | "gone";
interface ModelJob {
  jid: string;
  cls: ClassName;
  k: number;
  where: Where;
  /** Its payload is still exactly as pushed with replace/reschedule (the copy beside the lock finds it). */
  copy: boolean;
  /** Failures so far (retry: 1 means the second one kills it). */
  failed: number;
}

class Model {
  jobs = new Map<string, ModelJob>();
  /** Lock holder by `cls:k`. */
  locks = new Map<string, string>();

  release(job: ModelJob): void {
    const ck = `${job.cls}:${job.k}`;
    if (this.locks.get(ck) === job.jid) this.locks.delete(ck);
  }

  retake(job: ModelJob): void {
    const ck = `${job.cls}:${job.k}`;
    if (!this.locks.has(ck)) this.locks.set(ck, job.jid);
  }

  at(...places: Where[]): ModelJob[] {
    return [...this.jobs.values()].filter((j) => places.includes(j.where));
  }

  /** What a push must return, and the model after it. */
  push(cls: ClassName, k: number, mode: UniqueConflict, later: boolean, result: PushResult): Partial<PushResult> {
    const ck = `${cls}:${k}`;
    const holderJid = this.locks.get(ck);
    const place: Where = later ? "schedule" : "queue";
    const add = () => {
      this.jobs.set(result.jid!, { jid: result.jid!, cls, k, where: place, copy: mode !== "skip", failed: 0 });
      this.locks.set(ck, result.jid!);
    };
    if (!holderJid) {
      add();
      return { status: "pushed" };
    }
    const holder = this.jobs.get(holderJid)!;
    const found = mode !== "skip" && holder.copy && (holder.where === "queue" || holder.where === "schedule");
    if (!found) return { jid: null, status: "duplicate", existing: holderJid };
    if (mode === "replace") {
      holder.where = "gone";
      add();
      return { status: "replaced", existing: holderJid };
    }
    holder.where = place;
    return { jid: holderJid, status: "rescheduled", existing: holderJid };
  }

  /** A drain runs every queued job once. */
  drain(): void {
    for (const job of this.at("queue")) {
      const until = job.cls === "PStart" ? "start" : "success";
      if (until === "start") this.release(job);
      job.copy = false;
      if ((failures.get(job.jid) ?? 0) > 0) {
        job.failed++;
        if (job.failed >= 2) {
          job.where = "dead";
          if (until === "success") this.release(job);
        } else job.where = "retry";
      } else {
        job.where = "gone";
        if (until === "success") this.release(job);
      }
    }
  }

  orphans(): Set<string> {
    const out = new Set<string>();
    for (const jid of this.locks.values()) {
      const where = this.jobs.get(jid)?.where;
      if (where !== "queue" && where !== "schedule" && where !== "retry") out.add(jid);
    }
    return out;
  }
}

for (const target of matrix(["memory", "ioredis", "bun", "upstash"])) {
  describe(`unique jobs against a model on ${target.name}`, () => {
    let redis: Transport;
    let client: Client;
    const lockKeys = new Map<string, string>();
    beforeEach(async () => {
      redis ??= await target.open();
      await target.flush();
      failures.clear();
      client = createClient({ transport: redis, features: [unique] });
      for (const cls of Object.keys(CLASSES)) {
        for (let k = 0; k < KEYS_PER_CLASS; k++) {
          lockKeys.set(client.keys.uniqueLock(await uniqueDigest(cls, "default", [k])), `${cls}:${k}`);
        }
      }
    });

    const real = target.name !== "memory";
    const seeds = env.UNIQUE_SEED ? [Number(env.UNIQUE_SEED)] : real ? [101] : [1, 2, 3, 4];
    const steps = Number(env.UNIQUE_STEPS ?? (real ? 120 : 250));
    for (const seed of seeds) {
      it(`seed ${seed}: ${steps} random steps agree with the model`, async () => {
        const random = rng(seed);
        const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
        const model = new Model();
        const log: string[] = [];
        const fail = (step: number, why: string) => {
          throw new Error(`seed ${seed}, step ${step}: ${why}\nlast steps:\n  ${log.slice(-12).join("\n  ")}`);
        };
        const raw = async (job: ModelJob): Promise<string | undefined> => {
          const key = job.where === "queue" ? "queue:default" : job.where;
          const all = (await redis.call(job.where === "queue" ? "LRANGE" : "ZRANGE", key, 0, -1)) as string[];
          return all.find((r) => JSON.parse(r).jid === job.jid);
        };
        for (let step = 0; step < steps; step++) {
          const roll = random();
          if (roll < 0.4) {
            const cls = pick(Object.keys(CLASSES) as ClassName[]);
            const k = Math.floor(random() * KEYS_PER_CLASS);
            const mode = pick(["skip", "skip", "replace", "reschedule"] as const);
            const later = random() < 0.3;
            const fails = pick([0, 0, 1, 2]);
            const result = await client.pushDetailed(CLASSES[cls], [k], {
              uniqueConflict: mode,
              ...(later ? { in: 3600 } : {}),
            });
            if (result.status === "pushed" || result.status === "replaced") failures.set(result.jid!, fails);
            log.push(`push ${cls}[${k}] ${mode}${later ? " later" : ""} -> ${JSON.stringify(result)}`);
            const expected = model.push(cls, k, mode, later, result);
            for (const [field, value] of Object.entries(expected)) {
              if ((result as unknown as Record<string, unknown>)[field] !== value) {
                fail(step, `push ${field}: expected ${JSON.stringify(value)}, got ${JSON.stringify(result)}`);
              }
            }
          } else if (roll < 0.55) {
            log.push("drain");
            model.drain();
            await drain({
              transport: redis,
              jobs: Object.values(CLASSES),
              budgetMs: 20_000,
              features: [unique],
              jobLogging: false,
              metrics: false,
            });
          } else if (roll < 0.62) {
            log.push("promote");
            for (const job of model.at("schedule", "retry")) Object.assign(job, { where: "queue", copy: false });
            await pollOnce({ client, now: Date.now() + 7200_000 });
          } else if (roll < 0.72) {
            const victims = model.at("queue", "schedule", "retry");
            if (victims.length === 0) continue;
            const job = pick(victims);
            log.push(`api delete ${job.jid} from ${job.where}`);
            const value = (await raw(job))!;
            const deleted = job.where === "queue"
              ? await new Queue(client).delete(value)
              : await (job.where === "schedule" ? new ScheduledSet(client) : new RetrySet(client)).deleteByValue(value);
            if (!deleted) fail(step, "delete found nothing");
            job.where = "gone";
            model.release(job);
          } else if (roll < 0.77) {
            const victims = model.at("schedule", "retry");
            if (victims.length === 0) continue;
            const job = pick(victims);
            log.push(`api kill ${job.jid} from ${job.where}`);
            const set = job.where === "schedule" ? new ScheduledSet(client) : new RetrySet(client);
            if (!await (await set.findJob(job.jid))!.kill()) fail(step, "kill found nothing");
            job.where = "dead";
            model.release(job);
          } else if (roll < 0.84) {
            const victims = model.at("dead", "retry");
            if (victims.length === 0) continue;
            const job = pick(victims);
            log.push(`api retry ${job.jid} from ${job.where}`);
            const set = job.where === "dead" ? new DeadSet(client) : new RetrySet(client);
            if (!await (await set.findJob(job.jid))!.retry()) fail(step, "retry found nothing");
            // A manual retry does not count as one of the job's retries (Sidekiq's rule).
            // Only a dead job takes its lock again (if free): a retrying one holds it still, or let it go at start.
            if (job.where === "dead") model.retake(job);
            Object.assign(job, { where: "queue", copy: false, failed: Math.max(0, job.failed - 1) });
          } else if (roll < 0.89) {
            const victims = model.at("queue", "schedule");
            if (victims.length === 0) continue;
            const job = pick(victims);
            log.push(`lost ${job.jid} from ${job.where} behind the API's back`);
            const value = (await raw(job))!;
            if (job.where === "queue") await redis.call("LREM", "queue:default", 1, value);
            else await redis.call("ZREM", "schedule", value);
            job.where = "gone";
          } else if (roll < 0.95) {
            log.push("orphan sweep and clean");
            const expected = model.orphans();
            const locks = new UniqueLocks(client);
            const found = new Set((await locks.orphans()).map((l) => l.jid));
            if ([...expected].sort().join() !== [...found].sort().join()) {
              fail(step, `orphans: expected ${[...expected]}, found ${[...found]}`);
            }
            const cleaned = await locks.cleanOrphans({ confirmAfterMs: 0 });
            if (cleaned.length !== expected.size) fail(step, `cleaned ${cleaned.length} of ${expected.size}`);
            for (const [ck, jid] of [...model.locks]) if (expected.has(jid)) model.locks.delete(ck);
          } else {
            const which = pick(["queue", "schedule"] as const);
            log.push(`api clear ${which}`);
            for (const job of model.at(which)) {
              job.where = "gone";
              model.release(job);
            }
            await (which === "queue" ? new Queue(client) : new ScheduledSet(client)).clear();
          }
          // Invariants: the locks, and where every job is.
          const locks = new Map<string, string>();
          for await (const lock of new UniqueLocks(client).each()) locks.set(lockKeys.get(lock.key)!, lock.jid);
          const want = [...model.locks].sort().join();
          const have = [...locks].sort().join();
          if (want !== have) fail(step, `locks: model ${want} | redis ${have}`);
          for (
            const [where, command, key] of [
              ["queue", "LRANGE", "queue:default"],
              ["schedule", "ZRANGE", "schedule"],
              ["retry", "ZRANGE", "retry"],
              ["dead", "ZRANGE", "dead"],
            ] as const
          ) {
            const jids = ((await redis.call(command, key, 0, -1)) as string[]).map((r) => JSON.parse(r).jid).sort();
            const expected = model.at(where).map((j) => j.jid).sort();
            if (jids.join() !== expected.join()) fail(step, `${where}: model ${expected} | redis ${jids}`);
          }
        }
        assert.ok(log.length > steps / 2, "the run did things");
      });
    }
  });
}
