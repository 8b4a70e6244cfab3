/**
 * Queue pause (Sidekiq Pro's `pause!`, issue 29): a paused queue's jobs are
 * not fetched by any process (reliable or basic fetch, worker or drain)
 * within one fetch round trip; running jobs finish; resume is instant; and
 * while nothing is paused a fetch costs no extra command.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, drain } from "../mod.ts";
import { Queue } from "../src/api/mod.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";

eachTarget("queue pause", (t) => {
  for (const fetch of ["reliable", "basic"] as const) {
    it(`a worker (${fetch} fetch) takes nothing from a paused queue and resumes at once`, async () => {
      const ran: string[] = [];
      const Work = defineJob({ name: "Work", perform: (ctx) => void ran.push(ctx.queue) });
      const client = createClient({ transport: t.redis });
      const mail = new Queue(client, "mail");
      assert.equal(await mail.pause(), true);
      assert.equal(await mail.pause(), false, "pausing twice changes nothing");
      assert.deepEqual(await Queue.paused(client), ["mail"]);
      await client.pushBulk(Work, [[], [], []], { queue: "mail" });
      await client.pushBulk(Work, [[], []], { queue: "other" });
      t.worker = testWorker(t.redis, { jobs: [Work], queues: ["mail", "other"], fetch });
      await t.worker.run();
      await waitFor(() => ran.length === 2, "the other queue's jobs");
      await new Promise((r) => setTimeout(r, 300)); // several blocking rounds: the paused queue is never watched
      assert.deepEqual(ran, ["other", "other"]);
      assert.equal(await mail.size(), 3);
      assert.equal(await mail.resume(), true);
      assert.equal(await mail.isPaused(), false);
      await waitFor(() => ran.length === 5, "the paused queue's jobs once resumed");
    });
  }

  it("a drain skips a paused queue and reports its jobs as remaining", async () => {
    const Work = defineJob({ name: "Work", perform() {} });
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Work, [[], []], { queue: "mail" });
    await new Queue(client, "mail").pause();
    const result = await drain({ transport: t.redis, jobs: [Work], queues: ["mail"], budgetMs: 2000, reserveMs: 0 });
    assert.equal(result.processed, 0);
    assert.equal(result.remaining, 2);
  });

  it("costs no command of its own: the check rides the fetch script", async () => {
    const Work = defineJob({ name: "Work", perform() {} });
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Work, Array.from({ length: 50 }, () => []));
    const sent: string[] = [];
    const spy = new Proxy(t.redis, {
      get(target, prop, receiver) {
        if (prop === "call") return (c: string, ...a: never[]) => (sent.push(c), target.call(c, ...a));
        if (prop === "pipeline") {
          return (
            cmds: [string][],
            o?: never,
          ) => (sent.push(...cmds.map((c) => c[0])), target.pipeline(cmds as never, o));
        }
        if (prop === "script") {
          return (s: { name: string }, k: never, a: never) => (sent.push(s.name), target.script(s as never, k, a));
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as typeof t.redis;
    const result = await drain({ transport: spy, jobs: [Work], budgetMs: 5000, reserveMs: 0, metrics: false });
    assert.equal(result.processed, 50);
    assert.deepEqual(sent.filter((c) => /^(SCARD|SMEMBERS|SISMEMBER)$/.test(c)), [], sent.join(" "));
  });
}, ["memory", "ioredis", "cluster"]);
