/**
 * What the issue-29 features cost those who do not use them (issue 29:
 * "no measurable cost for users who do not turn it on"), in commands, the
 * number every runtime and every Redis bill counts alike: a worker or drain
 * without them, or with expiring jobs and encrypted arguments on but no job
 * using them, sends exactly the same commands; with cancellation on, a
 * worker sends none more while nothing is cancelled and a drain one (it has
 * no heartbeat to learn from: it reads the cancelled set once). Speed is
 * measured in test/bench/operations-cost.ts, not here.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, drain, type Feature, type Transport } from "../mod.ts";
import { encryptedArgs, expiringJobs, jobCancellation } from "../src/features/mod.ts";
import { matrix, waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const Work = defineJob({ name: "Work", perform(_ctx, _n: number) {} });

/** Wraps a transport, recording the name of every command and script it sends. */
function spying(target: Transport): { transport: Transport; sent: string[] } {
  const sent: string[] = [];
  const transport = new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === "call") return (c: string, ...a: never[]) => (sent.push(c), t.call(c, ...a));
      if (prop === "pipeline") {
        return (cmds: [string][], o?: never) => (sent.push(...cmds.map((c) => c[0])), t.pipeline(cmds as never, o));
      }
      if (prop === "script") {
        return (s: { name: string }, k: never, a: never) => (sent.push(s.name), t.script(s as never, k, a));
      }
      if (prop === "withSignal") return undefined; // a drain's budget view would bypass the spy
      const value = Reflect.get(t, prop, receiver);
      return typeof value === "function" ? value.bind(t) : value;
    },
  }) as Transport;
  return { transport, sent };
}

/** Command names and how often each was sent. */
const tally = (sent: string[]) =>
  Object.fromEntries([...new Set(sent)].sort().map((c) => [c, sent.filter((s) => s === c).length]));

for (const target of matrix(["memory", "ioredis"])) {
  describe(`issue 29 features off cost nothing, on ${target.name}`, () => {
    let transport: Transport;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
    });

    const drained = async (features: Feature[]) => {
      await target.flush();
      await createClient({ transport }).pushBulk(Work, Array.from({ length: 200 }, (_, i) => [i]));
      const spy = spying(transport);
      const result = await drain({
        transport: spy.transport,
        jobs: [Work],
        features,
        budgetMs: 10_000,
        concurrency: 10,
      });
      assert.equal(result.processed, 200);
      // How many fetch rounds 200 jobs take depends on timing (the prefetch adapts to how fast they
      // run): sent in every run, it is left out of the exact comparison.
      const { fetch, ...rest } = tally(spy.sent);
      assert.ok(fetch > 0);
      return rest;
    };

    it("a drain: the same commands without them, with expiry and encryption unused; one more with cancel", async () => {
      const off = await drained([]);
      assert.deepEqual(await drained([expiringJobs(), encryptedArgs({ keys: { 1: KEY } })]), off);
      const cancel = await drained([jobCancellation()]);
      assert.deepEqual(cancel, { ...off, ZRANGEBYSCORE: 1 }, "the cancelled set, read once");
    });

    it("a worker: the same commands over its beats with cancellation on, while nothing is cancelled", async () => {
      const worked = async (features: Feature[]) => {
        await target.flush();
        await createClient({ transport }).pushBulk(Work, Array.from({ length: 100 }, (_, i) => [i]));
        const spy = spying(transport);
        const worker = testWorker(spy.transport, { jobs: [Work], features, heartbeatInterval: 0.05, metrics: false });
        await worker.run();
        await waitFor(async () => Number(await transport.call("LLEN", "queue:default")) === 0, "drained");
        await waitFor(() => spy.sent.filter((c) => c === "heartbeat").length >= 10, "ten beats");
        await worker.stop();
        const counts = tally(spy.sent);
        // Beats and idle fetches vary with timing; what must not appear is any command of the features.
        return Object.keys(counts);
      };
      const off = await worked([]);
      assert.deepEqual(await worked([jobCancellation(), expiringJobs(), encryptedArgs({ keys: { 1: KEY } })]), off);
      assert.ok(!off.includes("ZRANGEBYSCORE"));
    });
  });
}
