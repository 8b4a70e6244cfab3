import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { createClient, defineJob, JobArgsError, PayloadError, type Transport, TransportError } from "../mod.ts";
import { keys } from "../src/keys.ts";
import { PushError } from "../src/push_error.ts";
import { matrix } from "./support/matrix.ts";

const HardJob = defineJob({
  name: "HardJob",
  args: v.tuple([v.string(), v.number()]),
  perform() {},
});
const Mailer = defineJob({ name: "Mailer", queue: "mailers", retry: 3, tags: ["mail"], perform(_ctx, _to: string) {} });

for (const target of matrix(["memory", "ioredis", "bun", "upstash", "cluster"])) {
  // The cluster target gets the cluster key layout ({edgekiq}:queue:...), as every client on it does.
  const k = keys("", target.name === "cluster" ? "cluster" : "sidekiq");
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
      assert.deepEqual(await redis.call("SMEMBERS", k.queues), ["default"]);
      const raw = (await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[];
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
      const first = JSON.parse((await redis.call("RPOP", k.queue("mailers"))) as string);
      assert.equal(first.jid, a);
      const second = JSON.parse((await redis.call("RPOP", k.queue("mailers"))) as string);
      assert.equal(second.jid, b);
      assert.equal(second.retry, 3);
      assert.deepEqual(second.tags, ["mail"]);
    });

    it("schedules into the schedule zset, scored in float seconds, without enqueued_at", async () => {
      const client = createClient({ transport: redis });
      const before = Date.now() / 1000;
      const jid = await client.push(HardJob, ["later", 1], { in: 60 });
      assert.equal(await redis.call("LLEN", k.queue("default")), 0);
      const entries = (await redis.call("ZRANGE", k.schedule, 0, -1, "WITHSCORES")) as string[];
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
      assert.equal(await redis.call("ZCARD", k.schedule), 1);
      const score = Number(((await redis.call("ZRANGE", k.schedule, 0, -1, "WITHSCORES")) as string[])[1]);
      assert.ok(Math.abs(score - (Date.now() / 1000 + 30)) < 5);
      assert.equal(await redis.call("LLEN", k.queue("default")), 1);
    });

    it("bulk pushes in one round trip per 1,000-job batch", async () => {
      const client = createClient({ transport: redis });
      const args = Array.from({ length: 2500 }, (_, i) => [`n${i}`, i] as [string, number]);
      const trips = redis.counters.roundTrips;
      const jids = await client.pushBulk(HardJob, args);
      assert.equal(redis.counters.roundTrips - trips, 3);
      assert.equal(new Set(jids).size, 2500);
      assert.equal(await redis.call("LLEN", k.queue("default")), 2500);
      const oldest = JSON.parse((await redis.call("LINDEX", k.queue("default"), -1)) as string);
      assert.deepEqual(oldest.args, ["n0", 0]);
    });

    it("refuses fields the push sets itself in 'extra', checks Sidekiq options there, keeps the rest", async () => {
      const client = createClient({ transport: redis });
      for (const field of ["jid", "args", "class", "created_at", "enqueued_at", "queue", "retry", "at"]) {
        await assert.rejects(
          client.pushBulk("Extra", [[1]], { extra: { [field]: "x" } }),
          (e: unknown) => e instanceof PayloadError && e.message.includes(`'extra' must not set '${field}'`),
          field,
        );
      }
      await assert.rejects(
        client.push("Extra", [1], { extra: { retry_queue: "no such queue" } }),
        /'extra.retry_queue' \('retryQueue' must be a non-empty string without spaces/,
      );
      await assert.rejects(client.push("Extra", [1], { extra: { retry_for: -5 } }), /'retryFor' must be > 0/);
      await assert.rejects(
        client.push("Extra", [1], { extra: { retry_count: -1e300 } }),
        /'extra.retry_count' must be a whole number >= 0: current value is -1e\+300/,
      );
      await assert.rejects(
        client.push("Extra", [1], { extra: { failed_at: "yesterday" } }),
        /'extra.failed_at' must be/,
      );
      await assert.rejects(client.push("Extra", [1], { queue: "two words" }), /'queue' must be a non-empty string/);
      await assert.rejects(client.push("Extra", [1], { retry: -1 }), /'retry' must be >= 0: current value is -1/);
      assert.equal(await redis.call("EXISTS", k.queues, k.queue("default"), k.queue("no such queue")), 0);

      const extra = { tenant: "t1", retry_queue: "slow", tags: ["a"] };
      const jids = await client.pushBulk("Extra", [[1], [2]], { extra });
      const raws = ((await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[]).reverse();
      for (const [i, raw] of raws.entries()) {
        for (const field of ["jid", "args", "created_at", "enqueued_at", "tenant"]) {
          assert.equal(raw.split(`"${field}":`).length, 2, `${field} written once in ${raw}`);
        }
        const job = JSON.parse(raw);
        assert.equal(job.jid, jids[i]);
        assert.deepEqual(job.args, [i + 1]);
        assert.deepEqual([job.tenant, job.retry_queue, job.tags], ["t1", "slow", ["a"]]);
        assert.ok(job.created_at > 1e9 && job.enqueued_at === job.created_at);
      }
    });

    it("keeps queue order across many small batches, whether or not the transport keeps call order", async () => {
      const client = createClient({ transport: redis, bulkBatchSize: 50 });
      await client.pushBulk("Ordered", Array.from({ length: 1000 }, (_, i) => [i]));
      const raws = (await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[];
      const order = raws.reverse().map((raw) => JSON.parse(raw).args[0]);
      assert.deepEqual(order, Array.from({ length: 1000 }, (_, i) => i));
    });

    it("rejects a bulk push whose batch fails with a PushError listing landed, failed and unsent jids", async () => {
      let calls = 0;
      const failing: Transport = {
        kind: redis.kind,
        blocking: redis.blocking,
        ordered: redis.ordered,
        keyspace: redis.keyspace,
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
      const pushed = client.pushBulk("Batched", Array.from({ length: 60 }, (_, i) => [i]));
      const error = await pushed.then(() => assert.fail("resolved"), (e: unknown) => e as PushError);
      assert.ok(error instanceof PushError, String(error));
      assert.match(error.message, /batch 3 of 6 failed \(batch 3 refused\)/);
      assert.equal((error.cause as Error).message, "batch 3 refused");
      const raws = ((await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[]).reverse();
      const written = raws.map((raw) => JSON.parse(raw));
      // Batches 1-2 landed; with call order kept, batch 4 was already sent when 3 failed.
      assert.equal(written.length, redis.ordered ? 30 : 20);
      const jidsOf = (from: number, to: number) =>
        written.filter((j) => j.args[0] >= from && j.args[0] < to).map((j) => j.jid as string);
      assert.deepEqual(error.landed, written.map((j) => j.jid));
      assert.deepEqual(written.map((j) => j.args[0]), [
        ...Array.from({ length: 20 }, (_, i) => i),
        ...(redis.ordered ? Array.from({ length: 10 }, (_, i) => 30 + i) : []),
      ]);
      assert.equal(error.failed.length, 10);
      assert.equal(error.maybeApplied, true, "a plain Error says nothing about the outcome");
      assert.equal(error.notSent.length, redis.ordered ? 20 : 30);
      assert.equal(new Set([...error.landed, ...error.failed, ...error.notSent]).size, 60);
      for (const jid of [...error.failed, ...error.notSent]) assert.ok(!jidsOf(0, 60).includes(jid));
    });

    it("a wrongtype queue in the middle of a bulk push: the other batches' jids are reported exactly", async () => {
      // Jobs 0-9 go to queue a, 10-19 to "broken" (a string key), 20-29 to c, 30-39 to d.
      await redis.call("SET", k.queue("broken"), "not a list");
      const route = ["a", "broken", "c", "d"];
      const jids: string[] = [];
      const client = createClient({
        transport: redis,
        bulkBatchSize: 10,
        middleware: [(payload, _ctx, next) => {
          const i = payload.args[0] as number;
          payload.queue = route[Math.floor(i / 10)];
          jids[i] = payload.jid;
          return next();
        }],
      });
      const error = await client.pushBulk("Routed", Array.from({ length: 40 }, (_, i) => [i])).then(
        () => assert.fail("resolved"),
        (e: unknown) => e as PushError,
      );
      assert.ok(error instanceof PushError, String(error));
      assert.ok(error.cause instanceof TransportError && error.cause.kind === "wrongtype", String(error.cause));
      assert.equal(error.maybeApplied, false, "Redis refused the batch: none of it was written");
      const listed = async (queue: string) =>
        ((await redis.call("LRANGE", k.queue(queue), 0, -1)) as string[]).reverse().map((raw) => JSON.parse(raw));
      const a = await listed("a");
      const c = await listed("c");
      assert.deepEqual(a.map((j) => j.args[0]), Array.from({ length: 10 }, (_, i) => i));
      // The batch after the failed one was on its way only where call order is kept.
      assert.deepEqual(c.map((j) => j.args[0]), redis.ordered ? Array.from({ length: 10 }, (_, i) => 20 + i) : []);
      assert.equal(await redis.call("LLEN", k.queue("d")), 0);
      assert.deepEqual(error.landed, [...a, ...c].map((j) => j.jid));
      assert.deepEqual(error.landed, [...jids.slice(0, 10), ...(redis.ordered ? jids.slice(20, 30) : [])]);
      assert.deepEqual(error.failed, jids.slice(10, 20));
      assert.deepEqual(error.notSent, redis.ordered ? jids.slice(30) : jids.slice(20));
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
      assert.equal(await redis.call("EXISTS", k.queues, k.queue("default"), k.schedule), 0);
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
      const raw = (await redis.call("LRANGE", k.queue("default"), 0, -1)) as string[];
      assert.equal(raw.length, 1);
      assert.deepEqual([JSON.parse(raw[0]).tenant, JSON.parse(raw[0]).jid], ["acme", jid]);
    });

    it("writes Sidekiq 8 integer-millisecond times in millis mode", async () => {
      const client = createClient({ transport: redis, timeFormat: "millis" });
      await client.push(HardJob, ["ms", 1]);
      const raw = (await redis.call("RPOP", k.queue("default"))) as string;
      const job = JSON.parse(raw);
      assert.ok(Number.isInteger(job.created_at) && job.created_at > 1e12);
      assert.match(raw, /"enqueued_at":\d{13}[,}]/);
    });

    it("namespaces keys with a prefix", async () => {
      const client = createClient({ transport: redis, prefix: "app" });
      await client.push(HardJob, ["ns", 1]);
      assert.equal(await redis.call("LLEN", keys("app", k.keyspace).queue("default")), 1);
      assert.equal(await redis.call("EXISTS", k.queue("default")), 0);
    });
  });
}
