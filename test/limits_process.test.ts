/**
 * Flow limits across real worker processes on a real redis-server, from a
 * ledger of start and end times the jobs print (outside Redis, in real
 * time): a concurrency limit never exceeded across processes, a SIGKILLed
 * holder's slot back within its lease and its job not lost; window,
 * bucket, leaky and points limits never over budget in any window with
 * the processes' clocks skewed apart (the limiters read Redis's clock);
 * and a job waiting for its limit costing no Redis commands while it
 * waits (INFO commandstats).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, createWorker, defineJob, silentLogger } from "../mod.ts";
import { flowLimits } from "../src/features/mod.ts";
import { ioredisTransport } from "../src/transport/adapters/ioredis/ioredis_transport.ts";
import type { Transport } from "../src/transport/transport.ts";
import { type Child, spawnFixture } from "./support/child.ts";
import { type TestRedis, testRedis } from "./support/redis.ts";
import { waitFor } from "./support/matrix.ts";

const realNow = () => performance.timeOrigin + performance.now();
// The CI run is small; EDGEKIQ_LIMITS_JOBS=2000 EDGEKIQ_LIMITS_PROCS=4 is the larger run.
const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
const JOBS = Number(env.EDGEKIQ_LIMITS_JOBS ?? 300);
const PROCS = Number(env.EDGEKIQ_LIMITS_PROCS ?? 2);

interface Run {
  cls: string;
  jid: string;
  start: number;
  end?: number;
}

/** The ledger: every job run the children printed. */
function ledger(children: Child[]): Run[] {
  const runs = new Map<string, Run>();
  for (const child of children) {
    for (const [, kind, cls, jid, at] of child.output().matchAll(/^([SE]) (\S+) (\S+) (\S+)$/gm)) {
      if (kind === "S") runs.set(`${jid} ${at}`, { cls, jid, start: Number(at) });
      else {
        const open = [...runs.values()].find((r) => r.jid === jid && r.end === undefined);
        if (open) open.end = Number(at);
      }
    }
  }
  return [...runs.values()];
}

/** The most runs overlapping at any instant, and when that many first overlapped after `from`. */
function overlap(
  runs: Run[],
  endOf: (r: Run) => number,
): { peak: number; firstAt: (n: number, from: number) => number } {
  const events = runs.flatMap((r) => [[r.start, 1], [endOf(r), -1]] as [number, number][]).sort((a, b) =>
    a[0] - b[0] || a[1] - b[1]
  );
  let now = 0;
  let peak = 0;
  const reached: [number, number][] = [];
  for (const [at, d] of events) {
    now += d;
    peak = Math.max(peak, now);
    reached.push([at, now]);
  }
  return { peak, firstAt: (n, from) => reached.find(([at, c]) => at >= from && c >= n)?.[0] ?? Infinity };
}

describe("flow limits across processes", () => {
  let redis: TestRedis | null = null;
  let admin: Transport;
  const children: Child[] = [];
  const spawn = (env: Record<string, string>) => {
    const child = spawnFixture("limits-worker.ts", { EDGEKIQ_TEST_URL: redis!.url, ...env });
    children.push(child);
    return child;
  };
  before(async () => {
    redis = await testRedis();
    if (redis) admin = ioredisTransport({ url: redis.url });
  });
  after(async () => {
    for (const child of children) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.signal("SIGKILL");
    }
    await Promise.all(children.map((c) => c.exited));
    await admin?.close();
    await redis?.stop();
  });

  it(`concurrency 5 is never exceeded across ${PROCS} processes and ${JOBS} jobs; a SIGKILLed holder's slot is back within its lease, its job not lost`, async (t) => {
    if (!redis) return t.skip("no redis");
    await admin.call("FLUSHDB");
    const lease = 2000;
    const limits = JSON.stringify({ Limited: [{ concurrency: 5, lease: "2s" }] });
    const client = createClient({ transport: admin });
    const Limited = defineJob({ name: "Limited", perform(_ctx, _what: string) {} });
    // The victim starts alone and takes the job that hangs.
    const victim = spawn({ LIMITS: limits, HANG: "1", SLEEP_MS: "30", CONCURRENCY: "10" });
    await victim.waitFor(/^ready /m, 30_000);
    const hung = (await client.push(Limited, ["hang"]))!;
    await victim.waitFor(new RegExp(`^S Limited ${hung} `, "m"), 10_000);
    const others = Array.from(
      { length: PROCS },
      (_, i) => spawn({ LIMITS: limits, SLEEP_MS: "30", CONCURRENCY: "10", SKEW_MS: String(i % 2 ? -700 : 700) }),
    );
    await Promise.all(others.map((c) => c.waitFor(/^ready /m, 30_000)));
    victim.signal("SIGKILL");
    const killedAt = realNow();
    await victim.exited;
    const jids = await client.pushBulk(Limited, Array.from({ length: JOBS }, () => ["work"]));
    const all = new Set([...jids.filter((j): j is string => j !== null), hung]);
    await waitFor(
      () => ledger(others).filter((r) => r.end !== undefined && all.has(r.jid)).length >= all.size,
      "every job, the hung one included, ends",
      45_000 + JOBS * 30,
    );
    const runs = ledger(children);
    // The hung run held its slot from its start until its process died.
    const { peak } = overlap(runs, (r) => r.end ?? killedAt);
    assert.ok(peak <= 5, `at most 5 at once across processes: peak ${peak}`);
    assert.equal(peak, 5, "the limit, not the workers, was the bottleneck");
    const back = overlap(ledger(others), (r) => r.end ?? Infinity).firstAt(5, killedAt) - killedAt;
    assert.ok(
      back <= lease + 1000,
      `five run at once again ${Math.round(back)} ms after the SIGKILL (lease ${lease} ms)`,
    );
    const ended = new Set(ledger(others).filter((r) => r.end !== undefined).map((r) => r.jid));
    assert.ok([...all].every((jid) => ended.has(jid)), "nothing lost: the hung job ran again elsewhere");
    console.log(
      `concurrency: peak ${peak} of 5 over ${runs.length} runs; slot back ${Math.round(back)} ms after SIGKILL`,
    );
    for (const c of others) c.signal("SIGTERM");
    await Promise.all(others.map((c) => c.exited));
  });

  it("window, bucket, leaky and points limits stay within budget in every window, clocks skewed ±1.5 s", async (t) => {
    if (!redis) return t.skip("no redis");
    await admin.call("FLUSHDB");
    const spec = {
      Win: [{ rate: 8, per: "300ms" }],
      Bkt: [{ rate: 8, per: "300ms", kind: "bucket" }],
      Lky: [{ rate: 20, per: "1s", kind: "leaky", burst: 4 }],
      Pts: [{ points: 100, per: "1s", cost: 10 }],
    };
    const counts = { Win: 40, Bkt: 40, Lky: 30, Pts: 20 };
    const env = { LIMITS: JSON.stringify(spec), CONCURRENCY: "10" };
    const procs = [spawn({ ...env, SKEW_MS: "1500" }), spawn({ ...env, SKEW_MS: "-1500" })];
    await Promise.all(procs.map((c) => c.waitFor(/^ready /m, 30_000)));
    const client = createClient({ transport: admin });
    for (const [name, n] of Object.entries(counts)) {
      await client.pushBulk(name, Array.from({ length: n }, () => []));
    }
    const total = Object.values(counts).reduce((a, b) => a + b);
    await waitFor(() => ledger(procs).filter((r) => r.end !== undefined).length >= total, "every job ran", 45_000);
    for (const c of procs) c.signal("SIGTERM");
    await Promise.all(procs.map((c) => c.exited));
    // A start is printed a little after Redis admitted it: windows are
    // measured with that much slack, in the limit's favour only by it.
    const slack = 25;
    const starts = (cls: string) =>
      ledger(procs).filter((r) => r.cls === cls).map((r) => r.start).sort((a, b) => a - b);
    const most = (ts: number[], span: number) =>
      Math.max(...ts.map((t, i) => ts.filter((u, j) => j >= i && u < t + span).length));

    const win = starts("Win");
    assert.equal(win.length, counts.Win);
    assert.ok(most(win, 300 - slack) <= 8, `window: ${most(win, 300 - slack)} in some 300 ms`);
    const bkt = starts("Bkt");
    assert.equal(bkt.length, counts.Bkt);
    for (let k = Math.floor(bkt[0] / 300); k <= Math.floor(bkt.at(-1)! / 300); k++) {
      const n = bkt.filter((t) => t >= k * 300 + slack && t < (k + 1) * 300).length;
      assert.ok(n <= 8, `bucket: ${n} in the interval from ${k * 300}`);
    }
    assert.ok(most(bkt, 300 - slack) <= 16, "bucket: at most two intervals' worth in any sliding interval");
    for (const [cls, burst, perMs] of [["Lky", 4, 50], ["Pts", 10, 100]] as const) {
      const ts = starts(cls);
      assert.equal(ts.length, counts[cls]);
      for (let i = 0; i < ts.length; i++) {
        for (let j = i; j < ts.length; j++) {
          const allowed = burst + Math.max(0, ts[j] - ts[i] + slack) / perMs;
          assert.ok(j - i + 1 <= allowed, `${cls}: ${j - i + 1} starts in ${Math.round(ts[j] - ts[i])} ms`);
        }
      }
    }
    const spanOf = (ts: number[]) => Math.round(ts.at(-1)! - ts[0]);
    console.log(
      `rates: window ${win.length} in ${spanOf(win)} ms, bucket ${bkt.length} in ${spanOf(bkt)} ms, leaky ${
        starts("Lky").length
      } in ${spanOf(starts("Lky"))} ms, points ${starts("Pts").length} in ${spanOf(starts("Pts"))} ms`,
    );
  });

  it("a job waiting for its limit costs no Redis command while it waits (INFO commandstats)", async (t) => {
    if (!redis) return t.skip("no redis");
    await admin.call("FLUSHDB");
    const ran: number[] = [];
    const Once = defineJob({
      name: "Once",
      limits: [{ rate: 1, per: "1m" }],
      perform: (_ctx, n: number) => void ran.push(n),
    });
    const transport = ioredisTransport({ url: redis.url });
    const worker = createWorker({
      transport,
      jobs: [Once],
      features: [flowLimits()],
      concurrency: 2,
      heartbeatInterval: 30,
      heartbeatTtl: 90,
      blockSeconds: 0.5,
      handleSignals: false,
      logger: silentLogger,
    });
    const commands = async () => {
      const info = String(await admin.call("INFO", "commandstats"));
      return [...info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].reduce(
        (n, [, name, c]) => name === "info" ? n : n + Number(c),
        0,
      );
    };
    await worker.run();
    const idle = async () => {
      const before = await commands();
      await new Promise((r) => setTimeout(r, 1500));
      return (await commands()) - before;
    };
    const baseline = await idle();
    await createClient({ transport: admin }).pushBulk(Once, [[1], [2], [3]]);
    await waitFor(async () => ran.length === 1 && Number(await admin.call("ZCARD", "schedule")) === 2, "two wait");
    const waiting = await idle();
    await worker.stop();
    await transport.close();
    assert.ok(waiting <= baseline + 2, `while two jobs wait: ${waiting} commands in 1.5 s; idle: ${baseline}`);
    console.log(`waiting: ${waiting} commands in 1.5 s with two jobs waiting, ${baseline} idle`);
  });
});
