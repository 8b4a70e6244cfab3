import { beforeEach, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, drain, pollOnce } from "../mod.ts";
import { keysFor } from "../src/keys.ts";
import { eachTarget } from "./support/targets.ts";
import { failingJob, okJob } from "./support/jobs.ts";

eachTarget("serverless drain", (t) => {
  // Sidekiq's key names as the target's layout spells them: unchanged, or under the cluster layout's hash tag.
  let tag = "";
  beforeEach(() => void (tag = keysFor(t.redis, {}).prefix));
  const key = (name: string) => tag ? `${tag}:${name}` : name;

  it("runs queued jobs until empty and reports counts and commands", async () => {
    const { job: Ok, runs } = okJob();
    const Bad = failingJob();
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Ok, Array.from({ length: 50 }, () => []));
    await client.push(Bad, []);
    const result = await drain({ transport: t.redis, jobs: [Ok, Bad], budgetMs: 20_000, concurrency: 5 });
    assert.equal(runs.count, 50);
    assert.deepEqual([result.processed, result.failed, result.remaining, result.requeued], [51, 1, 0, 0]);
    assert.ok(result.commandsPerJob > 0 && result.commandsPerJob < 0.6, `commands per job ${result.commandsPerJob}`);
    assert.deepEqual(await t.redis.call("SMEMBERS", key("processes")), [], "its process entry is gone");
    assert.equal(await t.redis.call("HLEN", key("edgekiq:inflight")), 0);
    assert.equal(await t.redis.call("GET", key("stat:processed")), "51");
  });

  it("stops taking work before the budget ends and puts a job still running back", async () => {
    const Slow = defineJob({
      name: "Slow",
      perform: (ctx) =>
        new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))),
    });
    const Quick = defineJob({ name: "Quick", perform() {} });
    const client = createClient({ transport: t.redis });
    const slow = await client.push(Slow, []);
    const t0 = Date.now();
    const result = await drain({
      transport: t.redis,
      jobs: [Slow, Quick],
      budgetMs: 600,
      reserveMs: 300,
      concurrency: 1,
    });
    assert.ok(Date.now() - t0 < 2000, "returns within the budget (plus a round trip)");
    assert.equal(result.processed, 0);
    assert.equal(result.remaining, 1);
    const [raw] = (await t.redis.call("LRANGE", key("queue:default"), 0, -1)) as string[];
    assert.equal(JSON.parse(raw).jid, slow, "the cut-off job is back on its queue");
    assert.equal(await t.redis.call("ZCARD", key("retry")), 0, "not counted as a failure");
  });

  it("pollOnce promotes due jobs for the next drain", async () => {
    const client = createClient({ transport: t.redis });
    await t.redis.call(
      "ZADD",
      key("schedule"),
      Date.now() / 1000 - 1,
      JSON.stringify({ class: "Quick", args: [], queue: "default", jid: "due1" }),
    );
    const poll = await pollOnce({ client });
    assert.equal(poll.promoted, 1);
    assert.equal(await t.redis.call("LLEN", key("queue:default")), 1);
  });
}, ["memory", "ioredis", "upstash", "cluster"]);
