import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { createClient, defineJob, JobArgsError, PayloadError, type Transport } from "../mod.ts";
import { matrix } from "./support/matrix.ts";

const HardJob = defineJob({
  name: "HardJob",
  args: v.tuple([v.string(), v.number()]),
  perform() {},
});
const Mailer = defineJob({ name: "Mailer", queue: "mailers", retry: 3, tags: ["mail"], perform(_ctx, _to: string) {} });

for (const target of matrix(["memory", "ioredis", "bun", "upstash"])) {
  describe(`client on ${target.name}`, () => {
    let redis: Transport;
    beforeEach(async () => {
      redis ??= await target.open();
      await target.flush();
    });

    it("pushes with SADD queues + LPUSH queue:<q> and returns the jid", async () => {
      const client = createClient({ transport: redis });
      const before = Date.now() / 1000;
      const jid = await client.push(HardJob, ["bob", 5]);
      assert.match(jid!, /^[0-9a-f]{24}$/);
      assert.deepEqual(await redis.call("SMEMBERS", "queues"), ["default"]);
      const raw = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.equal(raw.length, 1);
      const job = JSON.parse(raw[0]);
      assert.equal(job.class, "HardJob");
      assert.deepEqual(job.args, ["bob", 5]);
      assert.equal(job.queue, "default");
      assert.equal(job.jid, jid);
      assert.equal(job.retry, true);
      assert.equal(typeof job.created_at, "number");
      assert.ok(job.enqueued_at >= before && job.enqueued_at <= Date.now() / 1000 + 1, "enqueued_at is epoch seconds");
    });

    it("keeps FIFO order: LPUSH, consumers pop from the right", async () => {
      const client = createClient({ transport: redis });
      const a = await client.push(Mailer, ["a"]);
      const b = await client.push(Mailer, ["b"]);
      const first = JSON.parse((await redis.call("RPOP", "queue:mailers")) as string);
      assert.equal(first.jid, a);
      const second = JSON.parse((await redis.call("RPOP", "queue:mailers")) as string);
      assert.equal(second.jid, b);
      assert.equal(second.retry, 3);
      assert.deepEqual(second.tags, ["mail"]);
    });

    it("schedules into the schedule zset, scored in float seconds, without enqueued_at", async () => {
      const client = createClient({ transport: redis });
      const before = Date.now() / 1000;
      const jid = await client.push(HardJob, ["later", 1], { in: 60 });
      assert.equal(await redis.call("LLEN", "queue:default"), 0);
      const entries = (await redis.call("ZRANGE", "schedule", 0, -1, "WITHSCORES")) as string[];
      assert.equal(entries.length, 2);
      const job = JSON.parse(entries[0]);
      assert.equal(job.jid, jid);
      assert.equal(job.enqueued_at, undefined);
      assert.equal(job.at, undefined);
      const score = Number(entries[1]);
      assert.ok(score >= before + 59 && score <= Date.now() / 1000 + 61, `score ${score} about 60 s ahead`);
    });

    it("treats at < 1e9 as relative and a past time as now", async () => {
      const client = createClient({ transport: redis });
      await client.push(HardJob, ["rel", 1], { at: 30 });
      await client.push(HardJob, ["past", 1], { at: new Date(Date.now() - 5000) });
      assert.equal(await redis.call("ZCARD", "schedule"), 1);
      const score = Number(((await redis.call("ZRANGE", "schedule", 0, -1, "WITHSCORES")) as string[])[1]);
      assert.ok(Math.abs(score - (Date.now() / 1000 + 30)) < 5);
      assert.equal(await redis.call("LLEN", "queue:default"), 1);
    });

    it("bulk pushes in one round trip per 1,000-job batch", async () => {
      const client = createClient({ transport: redis });
      const args = Array.from({ length: 2500 }, (_, i) => [`n${i}`, i] as [string, number]);
      const trips = redis.counters.roundTrips;
      const jids = await client.pushBulk(HardJob, args);
      assert.equal(redis.counters.roundTrips - trips, 3);
      assert.equal(new Set(jids).size, 2500);
      assert.equal(await redis.call("LLEN", "queue:default"), 2500);
      const oldest = JSON.parse((await redis.call("LINDEX", "queue:default", -1)) as string);
      assert.deepEqual(oldest.args, ["n0", 0]);
    });

    it("lets the push's own jid, args and times win over the same names in 'extra', each written once", async () => {
      const client = createClient({ transport: redis });
      const extra = { jid: "not-mine", created_at: 1, enqueued_at: 2, args: ["x"], tenant: "t1" };
      const jids = await client.pushBulk("Extra", [[1], [2]], { extra });
      const raws = ((await redis.call("LRANGE", "queue:default", 0, -1)) as string[]).reverse();
      for (const [i, raw] of raws.entries()) {
        for (const field of ["jid", "args", "created_at", "enqueued_at", "tenant"]) {
          assert.equal(raw.split(`"${field}":`).length, 2, `${field} written once in ${raw}`);
        }
        const job = JSON.parse(raw);
        assert.equal(job.jid, jids[i]);
        assert.deepEqual(job.args, [i + 1]);
        assert.equal(job.tenant, "t1");
        assert.ok(job.created_at > 1e9 && job.enqueued_at === job.created_at);
      }
    });

    it("keeps queue order across many small batches, whether or not the transport keeps call order", async () => {
      const client = createClient({ transport: redis, bulkBatchSize: 50 });
      await client.pushBulk("Ordered", Array.from({ length: 1000 }, (_, i) => [i]));
      const raws = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      const order = raws.reverse().map((raw) => JSON.parse(raw).args[0]);
      assert.deepEqual(order, Array.from({ length: 1000 }, (_, i) => i));
    });

    it("rejects a bulk push whose batch fails, with batches already on their way settled", async () => {
      let calls = 0;
      const failing: Transport = {
        kind: redis.kind,
        blocking: redis.blocking,
        ordered: redis.ordered,
        counters: redis.counters,
        call: (command, ...args) => redis.call(command, ...args),
        block: (command, options) => redis.block(command, options),
        script: (script, keys, args) => redis.script(script, keys, args),
        close: () => redis.close(),
        pipeline(commands, options) {
          if (++calls === 3) return Promise.reject(new Error("batch 3 refused"));
          return redis.pipeline(commands, options);
        },
      };
      const client = createClient({ transport: failing, bulkBatchSize: 10 });
      await assert.rejects(client.pushBulk("Batched", Array.from({ length: 60 }, (_, i) => [i])), /batch 3 refused/);
      const written = Number(await redis.call("LLEN", "queue:default"));
      // Batches 1-2 landed; with call order kept, batch 4 was already sent when 3 failed.
      assert.equal(written, redis.ordered ? 30 : 20);
    });

    it("rejects schema failures, unsafe args and oversize payloads, writing nothing", async () => {
      const client = createClient({ transport: redis, maxPayloadBytes: 1024 });
      await assert.rejects(
        client.push(HardJob, ["bob", "five" as unknown as number]),
        (e: unknown) => e instanceof JobArgsError && e.issues[0].path === "args[1]",
      );
      await assert.rejects(
        client.push("Untyped", [1, { when: new Date() }]),
        (e: unknown) => e instanceof PayloadError && /args\[1\]\.when is a Date/.test(e.message),
      );
      await assert.rejects(client.push("Untyped", ["x".repeat(2000)]), /payload is \d+ bytes: the limit is 1024/);
      await assert.rejects(
        client.pushBulk("Untyped", [[1], [NaN]]),
        (e: unknown) => e instanceof PayloadError && /args\[0\] is NaN/.test(e.message),
      );
      assert.equal(await redis.call("EXISTS", "queues", "queue:default", "schedule"), 0);
    });

    it("runs client middleware, which may rewrite or stop a push", async () => {
      const client = createClient({
        transport: redis,
        middleware: [
          (payload, _ctx, next) => {
            payload.tenant = "acme";
            return next();
          },
          (payload, _ctx, next) => (payload.args[0] === "stop" ? undefined : next()),
        ],
      });
      assert.equal(await client.push(HardJob, ["stop", 1]), null);
      const jid = await client.push(HardJob, ["go", 1]);
      const raw = (await redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.equal(raw.length, 1);
      assert.deepEqual([JSON.parse(raw[0]).tenant, JSON.parse(raw[0]).jid], ["acme", jid]);
    });

    it("writes Sidekiq 8 integer-millisecond times in millis mode", async () => {
      const client = createClient({ transport: redis, timeFormat: "millis" });
      await client.push(HardJob, ["ms", 1]);
      const raw = (await redis.call("RPOP", "queue:default")) as string;
      const job = JSON.parse(raw);
      assert.ok(Number.isInteger(job.created_at) && job.created_at > 1e12);
      assert.match(raw, /"enqueued_at":\d{13}[,}]/);
    });

    it("namespaces keys with a prefix", async () => {
      const client = createClient({ transport: redis, prefix: "app" });
      await client.push(HardJob, ["ns", 1]);
      assert.equal(await redis.call("LLEN", "app:queue:default"), 1);
      assert.equal(await redis.call("EXISTS", "queue:default"), 0);
    });
  });
}
