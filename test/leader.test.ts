/**
 * Leader election: the lease taken at run, renewed on the heartbeat and
 * given up at stop, the fencing token, callbacks and their off-callbacks,
 * on the memory transport; then real worker processes on a real
 * redis-server with wall clocks skewed by ±40 s: never two leaders at once
 * (each process samples `isLeader()` every 5 ms, including one frozen with
 * SIGSTOP past its lease), and leadership moving within the lease after a
 * SIGKILL.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, createWorker, memoryTransport, silentLogger, type Transport, type Worker } from "../mod.ts";
import { type LeaderElection, leaderElection } from "../src/features/mod.ts";
import { type Child, spawnFixture } from "./support/child.ts";
import { type TestRedis, testRedis } from "./support/redis.ts";
import { waitFor } from "./support/matrix.ts";

const realNow = () => performance.timeOrigin + performance.now();

function worker(transport: Transport, leader: LeaderElection | undefined): Worker {
  return createWorker({
    transport,
    jobs: [],
    queues: ["nothing"],
    heartbeatInterval: 3000, // beats are called by hand
    heartbeatTtl: 3600,
    poller: false,
    handleSignals: false,
    features: leader ? [leader] : [],
    logger: silentLogger,
  });
}

describe("leader election on the memory transport", () => {
  it("takes the lease at run, keeps it across beats, gives it up at stop; the next leader gets the next term", async () => {
    const transport = memoryTransport();
    const [a, b] = [leaderElection({ lease: 30 }), leaderElection({ lease: 30 })];
    const events: string[] = [];
    a.onLeader(({ token, signal }) => {
      events.push(`a up ${token}`);
      signal.addEventListener("abort", () => events.push(`a signal ${token}`));
      return () => events.push(`a off ${token}`);
    });
    const wa = worker(transport, a);
    const wb = worker(transport, b);
    await wa.run();
    await wb.run();
    assert.equal(a.isLeader(), true);
    assert.equal(a.term, 1);
    assert.equal(b.isLeader(), false);
    assert.equal(b.term, undefined);
    for (let i = 0; i < 3; i++) {
      await wa.beat();
      await wb.beat();
    }
    await waitFor(() => a.isLeader() && !b.isLeader(), "a still leads");
    assert.equal(a.term, 1, "renewals keep the term");
    const late: number[] = [];
    b.onLeader(({ token }) => void late.push(token));
    await wa.stop();
    assert.deepEqual(events, ["a up 1", "a signal 1", "a off 1"]);
    assert.equal(a.isLeader(), false);
    assert.equal(await transport.call("GET", "edgekiq:leader:default"), null, "released at stop");
    await wb.beat();
    await waitFor(() => b.isLeader(), "b leads after a stopped");
    assert.equal(b.term, 2, "a new leader, a new fencing token");
    assert.deepEqual(late, [2]);
    await wb.stop();
  });

  it("ends the term when another holds the lease (a Redis that lost it), and runs a late subscriber at once", async () => {
    const transport = memoryTransport();
    const a = leaderElection({ lease: 30 });
    const wa = worker(transport, a);
    await wa.run();
    assert.equal(a.isLeader(), true);
    const offs: number[] = [];
    const unsubscribe = a.onLeader(({ token }) => () => void offs.push(token));
    await transport.call("SET", "edgekiq:leader:default", "7|someone-else", "PX", 30_000);
    await wa.beat();
    await waitFor(() => !a.isLeader(), "a sees it lost the lease");
    assert.deepEqual(offs, [1]);
    unsubscribe();
    await wa.stop();
    assert.equal(await transport.call("GET", "edgekiq:leader:default"), "7|someone-else", "not ours: left alone");
  });

  it("trusts its lease only as long as its own monotonic clock allows, renewal or not", async () => {
    const transport = memoryTransport();
    const a = leaderElection({ lease: 0.3 });
    const wa = worker(transport, a);
    await wa.run(); // claims at start and renews with its first beat
    const start = performance.now(); // after both were sent
    assert.equal(a.isLeader(), true);
    while (performance.now() - start < 300) await new Promise((r) => setTimeout(r, 300 - (performance.now() - start)));
    assert.equal(a.isLeader(), false, "300 ms after the claim was sent, a 300 ms lease is not trusted any more");
    await wa.stop();
  });

  it("costs one script call per heartbeat, and nothing to a worker without it", async () => {
    const memory = memoryTransport();
    const scripts: string[] = [];
    const transport: Transport = Object.create(memory, {
      script: {
        value: (script: { name: string }, ...rest: unknown[]) => {
          scripts.push(script.name);
          return (memory.script as (...a: unknown[]) => unknown)(script, ...rest);
        },
      },
    });
    const beatScripts = async (w: Worker) => {
      await w.run();
      scripts.length = 0;
      await w.beat();
      await w.beat();
      const seen = scripts.filter((name) => name !== "fetch");
      await w.stop();
      return seen;
    };
    assert.deepEqual(await beatScripts(worker(transport, undefined)), ["heartbeat", "heartbeat"]);
    assert.deepEqual(await beatScripts(worker(transport, leaderElection())), [
      "heartbeat",
      "leaderClaim",
      "heartbeat",
      "leaderClaim",
    ]);
  });

  it("refuses bad options and callbacks", () => {
    assert.throws(
      () => leaderElection({ lease: 0 }),
      (e) => e instanceof ConfigError && /'lease' must be/.test(e.message),
    );
    assert.throws(() => leaderElection({ name: "a b" }), /'name' must be 1 to 100 characters/);
    assert.throws(() => leaderElection().onLeader(42 as never), /callback must be a function: current value is 42/);
    assert.equal(leaderElection({ name: "cron" }).name, "leader:cron");
  });
});

describe("leader election across processes", () => {
  let redis: TestRedis | null = null;
  const children: Child[] = [];
  before(async () => (redis = await testRedis()));
  after(async () => {
    for (const child of children) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.signal("SIGKILL");
    }
    await Promise.all(children.map((c) => c.exited));
    await redis?.stop();
  });

  it("never has two leaders with clocks 40 s apart, even after a SIGSTOP past the lease; moves within the lease after a SIGKILL", async (t) => {
    if (!redis) return t.skip("no redis");
    const lease = 1.5;
    const skews = [40_000, -40_000, 0];
    const procs = skews.map((skew) =>
      spawnFixture("leader-worker.ts", {
        EDGEKIQ_TEST_URL: redis!.url,
        LEASE: String(lease),
        HB: "0.2",
        SKEW_MS: String(skew),
      })
    );
    children.push(...procs);
    await Promise.all(procs.map((p) => p.waitFor(/^ready /m, 30_000)));
    const leaderOf = (token: number) => procs.find((p) => new RegExp(`^up ${token} `, "m").test(p.output()));
    const latestToken = () =>
      Math.max(0, ...procs.flatMap((p) => [...p.output().matchAll(/^up (\d+) /gm)].map((m) => Number(m[1]))));
    await waitFor(() => latestToken() > 0, "a first leader", 10_000);

    // Freeze the leader past its lease: another takes over; when it wakes it must not act as leader.
    const first = latestToken();
    const frozen = leaderOf(first)!;
    // Acting as leader (a sample logged) before the freeze: a term with no sample would not count as one.
    await waitFor(() => new RegExp(`^L ${first} `, "m").test(frozen.output()), "the first leader acting", 10_000);
    frozen.signal("SIGSTOP");
    await waitFor(() => latestToken() > first, "a leader while the first is frozen", 10_000);
    await new Promise((r) => setTimeout(r, 500));
    frozen.signal("SIGCONT");
    await new Promise((r) => setTimeout(r, 1_000));

    // SIGKILL the leader: another must lead within the lease.
    const second = latestToken();
    const victim = leaderOf(second)!;
    const killedAt = realNow();
    victim.signal("SIGKILL");
    await waitFor(() => latestToken() > second, "a leader after the SIGKILL", 10_000);
    const third = latestToken();
    const takeover = Number(new RegExp(`^up ${third} (\\S+)$`, "m").exec(leaderOf(third)!.output())![1]) - killedAt;
    await new Promise((r) => setTimeout(r, 500));
    for (const p of procs) if (p !== victim) p.signal("SIGTERM");
    await Promise.all(procs.map((p) => p.exited));

    // Every sample of being leader, from every process, by real time.
    const spans = new Map<number, { from: number; to: number; by: Set<Child> }>();
    for (const p of procs) {
      for (const [, token, at] of p.output().matchAll(/^L (\d+) (\S+)$/gm)) {
        const span = spans.get(Number(token)) ?? { from: Infinity, to: -Infinity, by: new Set<Child>() };
        span.from = Math.min(span.from, Number(at));
        span.to = Math.max(span.to, Number(at));
        span.by.add(p);
        spans.set(Number(token), span);
      }
    }
    const ordered = [...spans.entries()].sort((a, b) => a[1].from - b[1].from);
    assert.ok(ordered.length >= 3, `at least three terms: ${ordered.map(([k]) => k).join(", ")}`);
    for (const [token, span] of ordered) assert.equal(span.by.size, 1, `term ${token} held by one process`);
    for (let i = 1; i < ordered.length; i++) {
      const [prevToken, prev] = ordered[i - 1];
      const [token, span] = ordered[i];
      assert.ok(token > prevToken, `terms grow: ${prevToken} then ${token}`);
      assert.ok(
        span.from > prev.to,
        `term ${token} began at ${span.from.toFixed(1)} while term ${prevToken} still acted until ${
          prev.to.toFixed(1)
        }`,
      );
    }
    assert.ok(takeover > 0 && takeover <= lease * 1000 + 1_000, `took over ${Math.round(takeover)} ms after SIGKILL`);
    console.log(
      `leader terms ${ordered.map(([k]) => k).join(", ")}; takeover ${Math.round(takeover)} ms after SIGKILL ` +
        `(lease ${lease * 1000} ms); gaps between terms: ${
          ordered.slice(1).map(([, s], i) => Math.round(s.from - ordered[i][1].to)).join(", ")
        } ms`,
    );
  });
});
