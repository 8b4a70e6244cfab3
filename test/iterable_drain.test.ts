/**
 * The serverless case the issue is about: a long backfill that no single
 * cron invocation can finish, carried across many short `drain()` calls.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { createClient, createLogger, defineIterableJob, drain, type DrainResult, iterateRange } from "../mod.ts";
import { eachTarget } from "./support/targets.ts";
import { sleep } from "./support/iterable.ts";

const ITEMS = 5000;

eachTarget("iterable jobs across serverless drains", (t) => {
  it(`a ${ITEMS}-item job completes across repeated drain({ budgetMs: 300 }) calls, every item exactly once`, async () => {
    const counts = new Array<number>(ITEMS).fill(0);
    const runs: number[] = [];
    const Backfill = defineIterableJob({
      name: "Backfill",
      each: (_ctx, cursor: number | null) => iterateRange({ from: 0, to: ITEMS }, cursor),
      async perItem(_ctx, n) {
        counts[n]++;
        if (n % 4 === 0) await sleep(1); // about 1.5 s of work in all: several drains' worth
      },
      onStart: (ctx) => void runs.push(ctx.executions),
      onResume: (ctx) => void runs.push(ctx.executions),
    });
    const jid = (await Backfill.performAsync(createClient({ transport: t.redis })))!;
    const results: Array<DrainResult & { wall: number }> = [];
    // A save the budget cut off (a starved machine: the job gets the last
    // quarter of the budget to stop) means repeats; say so if it happens.
    const warnings: string[] = [];
    const logger = createLogger({ level: "warn", write: (line) => void warnings.push(line) });
    for (let i = 0; i < 100; i++) {
      const t0 = Date.now();
      const result = await drain({ transport: t.redis, jobs: [Backfill], budgetMs: 300, logger });
      results.push({ ...result, wall: Date.now() - t0 });
      if (result.processed === 1) break;
    }
    const last = results.at(-1)!;
    assert.equal(last.processed, 1, `finished within 100 drains: ${results.length} drains`);
    assert.ok(results.length >= 3, `it took several drains (${results.length})`);
    const wrong = counts.flatMap((c, n) => (c === 1 ? [] : [`${n}:${c}`]));
    assert.deepEqual(wrong, [], `every item exactly once; warnings: ${warnings.join("\n") || "none"}`);
    for (const r of results.slice(0, -1)) {
      assert.deepEqual([r.processed, r.failed, r.remaining], [0, 0, 1], "an interrupted drain: put back, not failed");
    }
    assert.deepEqual(runs, results.map((_, i) => i + 1), "one run per drain, resuming each time");
    const slowest = Math.max(...results.map((r) => r.wall));
    assert.ok(slowest < 600, `each drain kept to its budget (slowest ${slowest} ms)`);
    assert.equal(await t.redis.call("EXISTS", `it-${jid}`), 0);
    assert.equal(await t.redis.call("LLEN", "queue:default"), 0);
    assert.equal(await t.redis.call("ZCARD", "retry"), 0);
    console.log(
      `${t.target.name}: ${ITEMS} items in ${results.length} drains, slowest ${slowest} ms, ${
        results.reduce((n, r) => n + r.commands, 0)
      } commands`,
    );
  });
}, ["memory", "ioredis", "bun", "upstash"]);
