import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, drain, pollOnce, type Transport } from "../mod.ts";
import { matrix } from "./support/matrix.ts";

for (const target of matrix(["memory", "ioredis", "upstash"])) {
  describe(`serverless drain on ${target.name}`, () => {
    let redis: Transport;
    beforeEach(async () => {
      redis ??= await target.open();
      await target.flush();
    });

    it("runs queued jobs until empty and reports counts and commands", async () => {
      let ran = 0;
      const Ok = defineJob({
        name: "Ok",
        perform() {
          ran++;
        },
      });
      const Bad = defineJob({
        name: "Bad",
        retry: false,
        perform() {
          throw new Error("x");
        },
      });
      const client = createClient({ transport: redis });
      await client.pushBulk(Ok, Array.from({ length: 50 }, () => []));
      await client.push(Bad, []);
      const result = await drain({ transport: redis, jobs: [Ok, Bad], budgetMs: 20_000, concurrency: 5 });
      assert.equal(ran, 50);
      assert.deepEqual([result.processed, result.failed, result.remaining, result.requeued], [51, 1, 0, 0]);
      assert.ok(result.commandsPerJob > 0 && result.commandsPerJob < 0.6, `commands per job ${result.commandsPerJob}`);
      assert.deepEqual(await redis.call("SMEMBERS", "processes"), [], "its process entry is gone");
      assert.equal(await redis.call("HLEN", "edgekiq:inflight"), 0);
      assert.equal(await redis.call("GET", "stat:processed"), "51");
    });

    it("stops taking work before the budget ends and puts a job still running back", async () => {
      const Slow = defineJob({
        name: "Slow",
        perform: (ctx) =>
          new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))),
      });
      const Quick = defineJob({ name: "Quick", perform() {} });
      const client = createClient({ transport: redis });
      const slow = await client.push(Slow, []);
      const t0 = Date.now();
      const result = await drain({
        transport: redis,
        jobs: [Slow, Quick],
        budgetMs: 600,
        reserveMs: 300,
        concurrency: 1,
      });
      assert.ok(Date.now() - t0 < 2000, "returns within the budget (plus a round trip)");
      assert.equal(result.processed, 0);
      assert.equal(result.remaining, 1);
      const [raw] = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.equal(JSON.parse(raw).jid, slow, "the cut-off job is back on its queue");
      assert.equal(await redis.call("ZCARD", "retry"), 0, "not counted as a failure");
    });

    it("pollOnce promotes due jobs for the next drain", async () => {
      const client = createClient({ transport: redis });
      await redis.call(
        "ZADD",
        "schedule",
        Date.now() / 1000 - 1,
        JSON.stringify({ class: "Quick", args: [], queue: "default", jid: "due1" }),
      );
      const poll = await pollOnce({ client });
      assert.equal(poll.promoted, 1);
      assert.equal(await redis.call("LLEN", "queue:default"), 1);
    });
  });
}
