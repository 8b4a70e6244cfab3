/**
 * The chaos scenarios. Each pushes known jobs, does its faults while the
 * fleet drains them, and records each fault with the number of worker
 * processes it hit (the duplicate bound is processes x (concurrency +
 * prefetch) per fault). `ctx.short` makes each one small and fast for CI.
 */
import { readFileSync } from "node:fs";
import { createClient } from "../../mod.ts";
import { batchJobs } from "../../src/features/batches/mod.ts";
import { BatchSet } from "../../src/features/batches/mod.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import { TransportError } from "../../src/transport/transport_error.ts";
import { digest } from "../../src/features/periodic/spec_digest.ts";
import { sleep } from "../bench/support.ts";
import { type JobArgs, okJobs, type Scenario, type ScenarioContext } from "./harness.ts";
import type { ChaosRedis } from "./redis.ts";

const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)];
const slots = (ctx: ScenarioContext) => Array.from({ length: ctx.fleet.size }, (_, i) => i);

/** Repeats `fault` every `everyMs` (jittered ±30%) until `fraction` of the jobs are done or `limitMs` passes. */
async function faultLoop(
  ctx: ScenarioContext,
  options: { everyMs: number; fraction: number; limitMs: number },
  fault: () => Promise<void> | void,
): Promise<void> {
  const deadline = Date.now() + options.limitMs;
  while (ctx.progress() < options.fraction && Date.now() < deadline) {
    await sleep(options.everyMs * (0.7 + 0.6 * Math.random()));
    await fault();
  }
}

const sigkillLoop: Scenario = {
  id: "sigkill-loop",
  async run(ctx) {
    await ctx.push(okJobs(ctx.short ? 6000 : 30_000, 4));
    await faultLoop(ctx, { everyMs: ctx.short ? 700 : 1000, fraction: 0.9, limitMs: 60_000 }, () => {
      ctx.fleet.signal(pick(slots(ctx)), "SIGKILL");
      ctx.fault(1);
    });
  },
};

/**
 * SIGSTOP one worker for longer than the heartbeat TTL (others recover its
 * jobs), SIGCONT it (it must notice and register again), let it fetch, then
 * SIGKILL it: what it fetched after coming back must be recovered too.
 */
const sigstop: Scenario = {
  id: "sigstop-past-ttl",
  async run(ctx) {
    await ctx.push(okJobs(ctx.short ? 12_000 : 30_000, 10));
    await sleep(1000);
    for (let cycle = 0; cycle < (ctx.short ? 1 : 2); cycle++) {
      const i = cycle % ctx.fleet.size;
      ctx.fleet.signal(i, "SIGSTOP");
      ctx.fault(1);
      await sleep((ctx.settings.ttl + 3) * 1000);
      const log = ctx.fleet.current(i).log;
      const ledger = ctx.fleet.current(i).ledger;
      const before = lines(ledger);
      const logBefore = readFileSync(log, "utf8").length;
      ctx.fleet.signal(i, "SIGCONT");
      await sleep(2000);
      const ranAfter = lines(ledger) - before;
      const logAfter = readFileSync(log, "utf8").slice(logBefore);
      ctx.fleet.signal(i, "SIGKILL");
      ctx.fault(1);
      const noticed = /registering again|recovered by another/.test(logAfter);
      ctx.note(
        `cycle ${cycle + 1}: worker ${i} stopped ${ctx.settings.ttl + 3} s; after SIGCONT it ${
          noticed ? "logged that its entry had expired" : "logged nothing about its expired entry"
        } and finished ${ranAfter} jobs in 2 s before SIGKILL`,
      );
      if (ranAfter === 0) ctx.note(`cycle ${cycle + 1}: worker ${i} fetched nothing after SIGCONT (no new jobs held)`);
      await sleep(1000);
    }
  },
};

const lines = (file: string): number => {
  try {
    return readFileSync(file, "utf8").split("\n").length - 1;
  } catch {
    return 0;
  }
};

/** Crash Redis (SIGKILL) with AOF always, keep it down `outage` s, start it again. */
function redisRestart(outageSeconds: number): Scenario {
  return {
    id: `redis-restart-${outageSeconds}s`,
    aof: "always",
    async run(ctx) {
      await ctx.push(okJobs(ctx.short ? 5000 : 15_000, 4));
      for (let cycle = 0; cycle < (ctx.short ? 1 : 2); cycle++) {
        const at = ctx.progress();
        await ctx.until(() => ctx.progress() >= at + 0.2, "20% more jobs done", 30_000);
        await ctx.redis.crash();
        ctx.fault(ctx.fleet.size);
        await sleep(outageSeconds * 1000);
        await ctx.redis.restart();
      }
    },
  };
}

/** Kill every worker connection every ~150 ms while jobs drain and more are pushed. */
const clientKillStorm: Scenario = {
  id: "client-kill-storm",
  // The AOF is the post-mortem: every write of every script, in order.
  aof: "everysec",
  async run(ctx) {
    const total = ctx.short ? 6000 : 20_000;
    await ctx.push(okJobs(total / 2, 4));
    const seconds = ctx.short ? 3 : 8;
    let killed = 0;
    let pushErrors = 0;
    let stormOver = false;
    const storm = (async () => {
      const end = Date.now() + seconds * 1000;
      while (Date.now() < end) {
        killed += Number(await ctx.redis.call("CLIENT", "KILL", "TYPE", "normal"));
        ctx.fault(ctx.fleet.size);
        await sleep(100 + 100 * Math.random());
      }
      stormOver = true;
    })();
    // The other half is pushed during the storm, in small batches: pushes lose replies too.
    for (let sent = 0; sent < total / 2; sent += 200) {
      const { error } = await ctx.push(okJobs(200, 4), 100);
      if (error) pushErrors++;
      if (!stormOver) await sleep(seconds * 1000 / (total / 400));
    }
    await storm;
    ctx.note(`${killed} connections killed over ${seconds} s; ${pushErrors} of ${total / 200} push calls failed`);
  },
};

/** SCRIPT FLUSH every ~200 ms: every script call meets NOSCRIPT and must load and run exactly once. */
const scriptFlush: Scenario = {
  id: "script-flush",
  async run(ctx) {
    await ctx.push(okJobs(ctx.short ? 5000 : 15_000, 4));
    let flushes = 0;
    await faultLoop(ctx, { everyMs: 200, fraction: 0.9, limitMs: ctx.short ? 4000 : 12_000 }, async () => {
      await ctx.redis.call("SCRIPT", "FLUSH");
      flushes++;
      ctx.fault(ctx.fleet.size);
    });
    ctx.note(`${flushes} SCRIPT FLUSHes`);
  },
};

/** CLIENT PAUSE ALL for 3-4 s (under the TTL): every command waits, nothing may time out into a duplicate or loss. */
const clientPause: Scenario = {
  id: "client-pause",
  async run(ctx) {
    await ctx.push(okJobs(ctx.short ? 5000 : 15_000, 4));
    const pauseMs = ctx.short ? 3000 : 4000;
    for (let cycle = 0; cycle < (ctx.short ? 1 : 2); cycle++) {
      const at = ctx.progress();
      await ctx.until(() => ctx.progress() >= at + 0.2, "20% more jobs done", 30_000);
      await ctx.redis.call("CLIENT", "PAUSE", pauseMs, "ALL");
      ctx.fault(ctx.fleet.size);
      await sleep(pauseMs + 500);
    }
  },
};

/**
 * maxmemory + noeviction: push until Redis refuses, hold the OOM (past the
 * TTL in the full run), then free memory. Refused pushes must say "out of
 * memory" clearly; everything that landed must run once memory frees.
 */
const oom: Scenario = {
  id: "oom-noeviction",
  async run(ctx) {
    const pad = "x".repeat(300);
    await ctx.push(okJobs(ctx.short ? 1000 : 3000, 20));
    const used = Number((await ctx.redis.info("memory")).get("used_memory"));
    await ctx.redis.call("CONFIG", "SET", "maxmemory-policy", "noeviction");
    await ctx.redis.call("CONFIG", "SET", "maxmemory", used + 4 * 1024 * 1024);
    const refusals: string[] = [];
    for (let batch = 0; batch < 200 && refusals.length < 3; batch++) {
      const jobs: JobArgs[] = okJobs(500, 20).map(([ms, kind]) => [ms, kind, pad]);
      const { error } = await ctx.push(jobs, 500);
      if (error) refusals.push(describeOom(error));
    }
    if (refusals.length === 0) ctx.fail("Redis never refused a push under maxmemory");
    ctx.fault(ctx.fleet.size);
    const clear = refusals.filter((r) => r.startsWith("clear")).length;
    ctx.note(`${refusals.length} pushes refused; ${clear} with a clear OOM error`);
    if (clear < refusals.length) {
      ctx.fail(`a refused push did not say Redis is out of memory: ${[...new Set(refusals)].join(" | ")}`);
    }
    await sleep((ctx.short ? 3 : ctx.settings.ttl + 2) * 1000);
    await ctx.redis.call("CONFIG", "SET", "maxmemory", 0);
  },
};

/** "clear: ..." when the error (or its cause) is a TransportError of kind oom naming memory; else "unclear: ...". */
function describeOom(error: unknown): string {
  const chain: unknown[] = [];
  for (let e: unknown = error; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  const oomError = chain.find((e) => e instanceof TransportError && e.kind === "oom") as TransportError | undefined;
  const top = error as Error;
  const text = `${top.name}: ${top.message.slice(0, 160)}`;
  const clear = oomError && /out of memory|OOM/i.test(`${top.message} ${oomError.message}`);
  return `${clear ? "clear" : "unclear"}: ${text}${
    oomError ? "" : ` (kinds: ${chain.map((e) => (e as TransportError).kind ?? (e as Error).name).join(" <- ")})`
  }`;
}

/**
 * Jobs that ignore ctx.signal and outlast the shutdown timeout, then TERM
 * to every worker: each must put them back and exit within timeout + the
 * 3 s abort wait; the jobs run again elsewhere, once.
 */
const hardShutdown: Scenario = {
  id: "hard-shutdown",
  worker: { timeout: 1 },
  drainMs: 90_000,
  async run(ctx) {
    const { size } = ctx.fleet;
    const ignoring = ctx.short ? size * ctx.settings.concurrency : size * (ctx.settings.concurrency * 2);
    const ms = ctx.short ? 6000 : 8000;
    await ctx.push(Array.from({ length: ignoring }, (): JobArgs => [ms, "ignore"]));
    await ctx.push(okJobs(ctx.short ? 2000 : 6000, 4));
    const started = () => ctx.ledger().started.size;
    await ctx.until(
      () => started() >= Math.min(ignoring, size * ctx.settings.concurrency) - size,
      "slow jobs running",
      20_000,
    );
    const limit = ctx.settings.timeout + 3 + 2;
    const exits = await Promise.all(slots(ctx).map((i) => ctx.fleet.signalAndWait(i, "SIGTERM", limit * 1000)));
    ctx.fault(size);
    exits.forEach((s, i) => {
      if (s === null) ctx.fail(`worker ${i} still running ${limit} s after TERM (timeout ${ctx.settings.timeout} s)`);
    });
    ctx.note(
      `${started()} signal-ignoring ${ms / 1000} s jobs started before TERM; workers exited ${
        exits.map((s) => (s === null ? "never" : `${s.toFixed(1)} s`)).join(", ")
      } after TERM (limit ${limit} s)`,
    );
  },
};

/** Poison pills (jobs that SIGKILL their process) among normal jobs: they end in dead, innocents do not. */
const poison: Scenario = {
  id: "poison-pill",
  aof: "everysec",
  worker: { ttl: 3, block: 1 },
  drainMs: 90_000,
  async run(ctx) {
    const pills = ctx.short ? 1 : 3;
    const normal = ctx.short ? 3000 : 9000;
    for (let p = 0; p < pills; p++) {
      await ctx.push(okJobs(normal / (pills + 1), 4));
      const { jids } = await ctx.push([[0, "poison"]]);
      if (jids[0]) ctx.expectDead.add(jids[0]);
    }
    await ctx.push(okJobs(normal / (pills + 1), 4));
    await ctx.until(
      async () => {
        const dead = (await ctx.redis.callPatiently(10_000, "ZRANGE", "dead", 0, -1)) as string[];
        return [...ctx.expectDead].every((jid) => dead.some((raw) => raw.includes(`"jid":"${jid}"`)));
      },
      "every poison pill in the dead set",
      80_000,
    );
    const dead = (await ctx.redis.call("ZRANGE", "dead", 0, -1)) as string[];
    for (const raw of dead) {
      const job = JSON.parse(raw) as { jid: string; error_class?: string };
      if (ctx.expectDead.has(job.jid) && job.error_class !== "Edgekiq::PoisonPill") {
        ctx.fail(`poison pill ${job.jid} is dead with error_class ${job.error_class}`);
      }
    }
    const runs = [...ctx.ledger().poison.values()];
    for (let i = runs.reduce((a, b) => a + b, 0); i > 0; i--) ctx.fault(1);
    const counted = dead.map((raw) => /running in (\d+) processes/.exec(raw)?.[1]).filter(Boolean);
    ctx.note(
      `${pills} poison pill(s) ran ${runs.join(", ")} times (each run killed its process); ` +
        `buried as running in ${counted.join(", ")} dead processes`,
    );
  },
};

/**
 * Jobs that fail (throw) while Redis is over maxmemory and while every
 * worker connection is killed again and again. A failing job settles once:
 * `fail` jobs in the retry set (retry due in an hour), `die` jobs in the dead
 * set (`retryIn` says "kill"), each exactly once and with `retry_count` 0 (it
 * failed once). A retry written twice, a count walked up by repeated writes,
 * or a job lost on the way is a failure (issue 25, finding 1).
 */
const failUnderFaults: Scenario = {
  id: "fail-under-faults",
  fullOnly: true,
  aof: "everysec",
  drainMs: 90_000,
  async run(ctx) {
    const pad = "x".repeat(300);
    const failing = (n: number, kind: "fail" | "die"): JobArgs[] => Array.from({ length: n }, () => [20, kind, pad]);
    const pushFailing = async (n: number) => {
      for (const kind of ["fail", "die"] as const) {
        const { jids } = await ctx.push(failing(n, kind), 100);
        for (const jid of jids) if (jid) (kind === "fail" ? ctx.expectRetry : ctx.expectDead).add(jid);
      }
    };
    // OOM: failing jobs run while every write is refused; 3 s, under the 5 s TTL (no process is presumed dead).
    await ctx.push(okJobs(4000, 20));
    await pushFailing(150);
    await ctx.until(() => ctx.ledger().failed.size >= 20, "failing jobs running", 30_000);
    const used = Number((await ctx.redis.info("memory")).get("used_memory"));
    await ctx.redis.call("CONFIG", "SET", "maxmemory-policy", "noeviction");
    await ctx.redis.call("CONFIG", "SET", "maxmemory", Math.max(1024 * 1024, used - 512 * 1024));
    ctx.fault(ctx.fleet.size);
    const failedBefore = ctx.ledger().failed.size;
    await sleep(3000);
    await ctx.redis.call("CONFIG", "SET", "maxmemory", 0);
    const failedDuring = ctx.ledger().failed.size - failedBefore;
    // Connection kills: replies lost, some after their write was applied.
    await pushFailing(150);
    await ctx.push(okJobs(2000, 20), 100);
    let killed = 0;
    const end = Date.now() + 4000;
    while (Date.now() < end) {
      killed += Number(await ctx.redis.call("CLIENT", "KILL", "TYPE", "normal"));
      ctx.fault(ctx.fleet.size);
      await sleep(100 + 100 * Math.random());
    }
    ctx.note(
      `${failedDuring} failing runs while over maxmemory for 3 s; ${killed} connections killed over 4 s; ` +
        `${ctx.expectRetry.size} jobs should end in retry, ${ctx.expectDead.size} in dead, once each`,
    );
  },
  async after(ctx) {
    const entries = async (set: string) => {
      const byJid = new Map<string, { retry_count?: number; error_message?: string }[]>();
      for (const raw of (await ctx.redis.callPatiently(10_000, "ZRANGE", set, 0, -1)) as string[]) {
        const job = JSON.parse(raw);
        byJid.set(job.jid, [...(byJid.get(job.jid) ?? []), job]);
      }
      return byJid;
    };
    const retry = await entries("retry");
    const dead = await entries("dead");
    const problems: string[] = [];
    for (
      const [expected, here, other, name] of [
        [ctx.expectRetry, retry, dead, "retry"],
        [ctx.expectDead, dead, retry, "dead"],
      ] as const
    ) {
      for (const jid of expected) {
        const found = here.get(jid) ?? [];
        const elsewhere = other.get(jid)?.length ?? 0;
        if (found.length !== 1 || elsewhere > 0) {
          problems.push(`${jid}: ${found.length} in ${name}, ${elsewhere} in the other set`);
        } else if (found[0].retry_count !== 0) {
          problems.push(`${jid}: in ${name} with retry_count ${found[0].retry_count} (it failed once: 0)`);
        }
      }
    }
    const runs = [...ctx.ledger().failed.values()];
    ctx.note(
      `failing jobs ran ${runs.reduce((a, b) => a + b, 0)} times for ${runs.length} jobs; ` +
        `${problems.length} did not settle exactly once with retry_count 0`,
    );
    if (problems.length) {
      ctx.fail(`${problems.length} failing jobs did not settle once: ${problems.slice(0, 4).join("; ")}`);
    }
  },
};

/**
 * Writes periodic schedules no process can enqueue, as another tool or
 * another version might: one in a time zone this runtime does not know, one
 * whose queue key holds a string (WRONGTYPE on every push). Both are due now
 * and stay due.
 */
async function plantBrokenSchedules(redis: ChaosRedis): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const plant = async (name: string, timing: Record<string, unknown>, queue: string) => {
    const spec = JSON.stringify({
      ...timing,
      missed: "skip",
      grace: 60,
      payload: { class: "ChaosJob", queue, args: [0, "ok"], retry: true },
    });
    const key = `edgekiq:periodic:schedule:${name}`;
    await redis.call("HSET", key, "name", name, "spec", spec, "sdig", digest(spec), "timing", digest(name));
    await redis.call("HSET", key, "lease:chaos-other-tool", now + 3600);
    await redis.call("ZADD", "edgekiq:periodic:due", now - 1, name);
  };
  await plant("chaos-mars", { cron: "* * * * *", tz: "Mars/Olympus_Mons" }, "default");
  await plant("chaos-wrongtype", { every: 1 }, "chaos-wrongtype");
  await redis.call("SET", "queue:chaos-wrongtype", "a string where a list belongs");
}

/**
 * SIGKILL a worker again and again while broken periodic schedules are due:
 * every poll meets them, and the killed workers' jobs must still be
 * recovered by the survivors' pollers (issue 25, finding 2: the periodic
 * step's failure used to stop the whole poll, recovery included).
 */
const periodicBroken: Scenario = {
  id: "periodic-broken-sigkill",
  drainMs: 45_000,
  async run(ctx) {
    await plantBrokenSchedules(ctx.redis);
    await ctx.push(okJobs(ctx.short ? 5000 : 12_000, 4));
    await faultLoop(ctx, { everyMs: ctx.short ? 700 : 1000, fraction: 0.9, limitMs: 30_000 }, () => {
      ctx.fleet.signal(pick(slots(ctx)), "SIGKILL");
      ctx.fault(1);
    });
  },
  async after(ctx) {
    const marks: string[] = [];
    for (const name of ["chaos-mars", "chaos-wrongtype"]) {
      const broken = await ctx.redis.callPatiently(10_000, "HGET", `edgekiq:periodic:schedule:${name}`, "broken");
      if (typeof broken !== "string") ctx.fail(`no worker marked periodic schedule ${name} as broken`);
      else marks.push(`${name}: ${broken.slice(0, 70)}`);
    }
    if (marks.length) ctx.note(`marked broken by the workers: ${marks.join(" | ")}`);
  },
};

/**
 * The serverless path on Upstash: three "functions" call `pollOnce()` and
 * `drain()` (2 s budget) in a loop through @upstash/redis and the REST
 * gateway, while the gateway drops replies (a request applied, its answer
 * lost), holds replies past the client's 5 s timeout, and a function is
 * SIGKILLed mid-drain (its held jobs come back once its entry expires:
 * budget + 60 s).
 */
const upstashDrain: Scenario = {
  id: "upstash-drain",
  fullOnly: true,
  upstash: true,
  drainBudgetMs: 2000,
  drainMs: 120_000,
  async run(ctx) {
    const gateway = ctx.gateway!;
    // A drain holds up to concurrency + its prefetch ceiling (100).
    const inFlight = ctx.settings.concurrency + 100;
    await ctx.push(okJobs(6000, 4));
    await ctx.until(() => ctx.progress() >= 0.1, "10% of the jobs done", 30_000);
    ctx.fleet.signal(pick(slots(ctx)), "SIGKILL");
    ctx.fault(1, inFlight);
    let dropped = 0;
    const end = Date.now() + 4000;
    while (Date.now() < end) {
      gateway.dropNextReply();
      dropped++;
      ctx.fault(0);
      await sleep(50 + 100 * Math.random());
    }
    gateway.delayMs = 6000;
    ctx.fault(0);
    await sleep(2500);
    gateway.delayMs = 0;
    await ctx.push(okJobs(2000, 4), 200);
    ctx.note(
      `workers: serverless drains over @upstash/redis and the REST gateway; 1 drain SIGKILLed; ${dropped} replies ` +
        `dropped; replies held 6 s (past the 5 s timeout) for 2.5 s; gateway commands ${gateway.commands}`,
    );
  },
};

/**
 * A 10,000-job batch drained by the fleet while one worker is SIGKILLed
 * every 2 s (issue 27): its success callback must fire exactly once (one
 * callback jid, however many runs the SIGKILLs cause), only after every
 * job's `done` line is in the ledgers (the callback counts them when it
 * runs), and the batch's counts must be exact (10,000 total, none pending,
 * no failure) though jobs were run twice and outcomes resent.
 */
const batchSigkill: Scenario = {
  id: "batch-sigkill",
  fullOnly: true,
  drainMs: 90_000,
  async run(ctx) {
    const size = ctx.short ? 2000 : 10_000;
    const batches = batchJobs();
    const transport = ioredisTransport({ url: ctx.redis.url });
    try {
      const client = createClient({ transport, features: [batches] });
      const batch = batches.open(client, {
        description: "chaos batch",
        callbacks: { success: ["ChaosBatchDone", []] },
      });
      await batch.add(async (b) => {
        for (const jid of await b.pushBulk("ChaosJob", okJobs(size, 15))) if (jid) ctx.pushed.add(jid);
      });
      batchOf.set(ctx, batch.bid);
    } finally {
      await transport.close();
    }
    await faultLoop(ctx, { everyMs: 2000, fraction: 0.98, limitMs: 120_000 }, () => {
      ctx.fleet.signal(pick(slots(ctx)), "SIGKILL");
      ctx.fault(1);
    });
  },
  async after(ctx) {
    const bid = batchOf.get(ctx)!;
    const transport = ioredisTransport({ url: ctx.redis.url });
    const status = await new BatchSet(createClient({ transport })).get(bid).finally(() => transport.close());
    const { total, pending, failures } = status ?? { total: NaN, pending: NaN, failures: NaN };
    const runs = ctx.ledger().callbacks.map((line) => line.split(" "));
    const fired = new Set(runs.map(([jid]) => jid));
    const early = runs.filter(([, , seen]) => Number(seen) < ctx.pushed.size);
    ctx.note(
      `batch of ${ctx.pushed.size}: total ${total}, pending ${pending}, failures ${failures}; success callback ` +
        `fired ${fired.size} time(s), ran ${runs.length} time(s), each seeing ${
          runs.map(([, , seen]) => seen).join(", ")
        } jobs done in the ledgers`,
    );
    if (total !== ctx.pushed.size || pending !== 0 || failures !== 0) {
      ctx.fail(
        `batch counts not exact: total ${total} (pushed ${ctx.pushed.size}), pending ${pending}, failures ${failures}`,
      );
    }
    if (fired.size !== 1) {
      ctx.fail(`the success callback fired ${fired.size} times (callback jids: ${[...fired].join(", ")})`);
    }
    if (runs.some(([, b]) => b !== bid)) ctx.fail("a callback ran for another batch");
    if (early.length) ctx.fail(`the callback ran before every job's outcome was recorded (saw ${early[0][2]})`);
  },
};

/** Each batch scenario run's batch id. */
const batchOf = new WeakMap<ScenarioContext, string>();

/** Every scenario, in the order they run. */
export const scenarios: Scenario[] = [
  sigkillLoop,
  sigstop,
  redisRestart(2),
  redisRestart(6),
  clientKillStorm,
  scriptFlush,
  clientPause,
  oom,
  hardShutdown,
  poison,
  periodicBroken,
  failUnderFaults,
  upstashDrain,
  batchSigkill,
];
