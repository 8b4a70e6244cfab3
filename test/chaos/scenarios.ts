/**
 * The chaos scenarios. Each pushes known jobs, does its faults while the
 * fleet drains them, and records each fault with the number of worker
 * processes it hit (the duplicate bound is processes x (concurrency +
 * prefetch) per fault). `ctx.short` makes each one small and fast for CI.
 */
import { readFileSync } from "node:fs";
import { TransportError } from "../../src/errors.ts";
import { sleep } from "../bench/support.ts";
import { type JobArgs, okJobs, type Scenario, type ScenarioContext } from "./harness.ts";

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
];
