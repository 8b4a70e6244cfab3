import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../src/client.ts";
import type { ClientMiddleware } from "../src/client_middleware.ts";
import { keys } from "../src/keys.ts";
import type { JobPayload } from "../src/payload.ts";
import type { Transport } from "../src/transport/transport.ts";
import {
  DeadSet,
  JobRecord,
  Process,
  ProcessSet,
  Queue,
  RetrySet,
  ScheduledSet,
  type SortedEntry,
  Stats,
  Workers,
} from "../src/api/mod.ts";
import { matrix } from "./support/matrix.ts";

const nowS = (): number => Date.now() / 1000;
const DAY = 24 * 60 * 60;

/** A job as Ruby Sidekiq writes it: whole-second floats with ".0", fields edgekiq does not know. */
function rubyJob(jid: string, extra = ""): string {
  return `{"retry":true,"queue":"default","class":"HardJob","args":[1,"two",{"x":[3]}],"jid":"${jid}",` +
    `"created_at":1700000000.0,"bid":"b-123","error_backtrace":"eJzLSM3JyQcABiwCFQ==","error_message":"boom",` +
    `"error_class":"RuntimeError","failed_at":1700000001.5,"retry_count":2,"retried_at":1700000002.25,` +
    `"custom":{"nested":true,"list":[1,2]}${extra}}`;
}

function job(jid: string, fields: Partial<JobPayload> = {}): string {
  return JSON.stringify({ class: "HardJob", args: [jid], queue: "default", jid, ...fields });
}

async function expectedAfterPush(pushed: string, raw: string, change: (raw: string) => string): Promise<void> {
  // The only additions: the changed fields, and enqueued_at appended at the end.
  const match = pushed.match(/,"enqueued_at":([0-9.]+)\}$/);
  assert.ok(match, `enqueued_at appended: ${pushed}`);
  assert.equal(pushed, change(raw).slice(0, -1) + `,"enqueued_at":${match[1]}}`);
}

describe("JobRecord", () => {
  it("keeps an unreadable payload as its raw string", () => {
    const record = new JobRecord("{not json", "default");
    assert.equal(record.item, null);
    assert.equal(record.valid, false);
    assert.equal(record.value, "{not json");
    assert.deepEqual(record.args, ["{not json"]);
    assert.equal(record.jid, undefined);
    assert.equal(record.queue, "default");
  });

  it("unwraps ActiveJob wrappers as Sidekiq's display_class and display_args", () => {
    const record = new JobRecord(JSON.stringify({
      class: "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
      wrapped: "ImportJob",
      queue: "default",
      jid: "aj1",
      args: [{
        job_class: "ImportJob",
        arguments: [7, { _aj_globalid: "gid://app/User/1" }, { a: 1, _aj_symbol_keys: ["a"] }],
      }],
    }));
    assert.equal(record.klass, "ImportJob");
    assert.equal(record.className, "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper");
    assert.deepEqual(record.args, [7, "gid://app/User/1", { a: 1 }]);

    const mail = new JobRecord(JSON.stringify({
      class: "Sidekiq::ActiveJob::Wrapper",
      wrapped: "ActionMailer::MailDeliveryJob",
      queue: "mailers",
      jid: "aj2",
      args: [{ arguments: ["UserMailer", "welcome", "deliver_now", { params: { id: 1 }, args: ["x"] }] }],
    }));
    assert.equal(mail.klass, "UserMailer#welcome");
    assert.deepEqual(mail.args, [{ id: 1 }, ["x"]]);
  });

  it("reads float-second and Sidekiq 8 integer-millisecond times", () => {
    const seconds = new JobRecord(job("a", { created_at: 1700000000.5, enqueued_at: 1700000001.25 }));
    assert.equal(seconds.createdAt?.getTime(), 1700000000500);
    assert.equal(seconds.enqueuedAt?.getTime(), 1700000001250);
    const millis = new JobRecord(job("b", { created_at: 1700000000123, enqueued_at: 1700000000456 }));
    assert.equal(millis.createdAt?.getTime(), 1700000000123);
    assert.equal(millis.enqueuedAt?.getTime(), 1700000000456);
    const latency = new JobRecord(job("c", { enqueued_at: Date.now() - 5000 })).latency;
    assert.ok(latency >= 4.9 && latency < 6, `latency ${latency}`);
    assert.equal(new JobRecord(job("d")).latency, 0);
    assert.equal(new JobRecord(job("d")).createdAt, null);
  });

  it("exposes error fields, retry count and tags", () => {
    const record = new JobRecord(rubyJob("r1", `,"tags":["a","b"]`));
    assert.equal(record.errorMessage, "boom");
    assert.equal(record.errorClass, "RuntimeError");
    assert.equal(record.retryCount, 2);
    assert.deepEqual(record.tags, ["a", "b"]);
    assert.equal(record.get("bid"), "b-123");
    assert.equal(record.failedAt?.getTime(), 1700000001500);
    assert.deepEqual(new JobRecord(job("x")).tags, []);
  });

  it("reads an object payload (older Sidekiq work hashes)", () => {
    const record = new JobRecord({ class: "Old", args: [1], jid: "o1", queue: "low" });
    assert.equal(record.jid, "o1");
    assert.equal(record.klass, "Old");
    assert.equal(record.value, '{"class":"Old","args":[1],"jid":"o1","queue":"low"}');
  });
});

for (const target of matrix(["memory", "ioredis", "bun", "upstash", "cluster"])) {
  // The cluster target gets the cluster key layout ({edgekiq}:queue:...), as every client on it does.
  const k = keys("", target.name === "cluster" ? "cluster" : "sidekiq");
  describe(`api on ${target.name}`, () => {
    let redis: Transport;
    let client: Client;
    beforeEach(async () => {
      redis ??= await target.open();
      await target.flush();
      client = new Client({ transport: redis });
    });

    const zadd = async (key: string, ...pairs: [number, string][]): Promise<void> => {
      await redis.call("ZADD", key, ...pairs.flat());
    };
    const zrange = async (key: string): Promise<string[]> => (await redis.call("ZRANGE", key, 0, -1)) as string[];
    const lrange = async (key: string): Promise<string[]> => (await redis.call("LRANGE", key, 0, -1)) as string[];

    describe("Queue", () => {
      it("lists queues sorted, and sizes, pages, finds, deletes and clears", async () => {
        const jids = [];
        for (let i = 0; i < 3; i++) jids.push(await client.push("HardJob", [i]));
        await client.push("HardJob", [9], { queue: "critical" });

        assert.deepEqual((await Queue.all(client)).map((q) => q.name), ["critical", "default"]);
        const queue = new Queue(client, "default");
        assert.equal(await queue.size(), 3);
        assert.deepEqual((await queue.page(0, 2)).map((r) => r.jid), [jids[2], jids[1]]);
        assert.deepEqual((await queue.page(2, 5)).map((r) => r.jid), [jids[0]]);
        const seen = [];
        for await (const record of queue) seen.push(record.jid);
        assert.deepEqual(seen, [jids[2], jids[1], jids[0]]);

        const found = await queue.findJob(jids[1]!);
        assert.ok(found);
        assert.equal(found.klass, "HardJob");
        assert.deepEqual(found.args, [1]);
        assert.equal(found.queue, "default");
        assert.equal(await queue.findJob("0".repeat(24)), null);

        assert.equal(await queue.delete(found), true);
        assert.equal(await queue.delete(found), false);
        assert.deepEqual((await lrange(k.queue("default"))).map((raw) => JSON.parse(raw).jid), [jids[2], jids[0]]);

        assert.equal(await queue.clear(), true);
        assert.equal(await redis.call("EXISTS", k.queue("default")), 0);
        assert.deepEqual(await redis.call("SMEMBERS", k.queues), ["critical"]);
        assert.equal(await new Queue(client, "critical").size(), 1);
      });

      it("iterates every job even when jobs are deleted while iterating", async () => {
        const raws = Array.from({ length: 120 }, (_, i) => job(`j${i}`));
        await redis.call("LPUSH", k.queue("default"), ...raws);
        const queue = new Queue(client, "default");
        let count = 0;
        for await (const record of queue) {
          count++;
          if (Number(record.jid!.slice(1)) % 2 === 0) await queue.delete(record);
        }
        assert.equal(count, 120);
        assert.equal(await queue.size(), 60);
      });

      it("measures latency from the oldest job's enqueued_at, seconds or millis", async () => {
        const queue = new Queue(client, "default");
        assert.equal(await queue.latency(), 0);
        await redis.call(
          "LPUSH",
          k.queue("default"),
          job("old", { enqueued_at: nowS() - 10 }),
          job("new", { enqueued_at: nowS() }),
        );
        const latency = await queue.latency();
        assert.ok(latency >= 9.9 && latency < 12, `latency ${latency}`);
        await redis.call("RPUSH", k.queue("default"), job("ms", { enqueued_at: Date.now() - 20_000 }));
        const msLatency = await queue.latency();
        assert.ok(msLatency >= 19.9 && msLatency < 22, `latency ${msLatency}`);
      });

      it("rejects bad input with a clear message", async () => {
        const queue = new Queue(client, "default");
        await assert.rejects(
          queue.findJob(5 as unknown as string),
          { message: "Cannot find job as 'jid' must be a non-empty string: current value is 5" },
        );
        await assert.rejects(
          queue.page(-1, 10),
          /Cannot page queue as 'start' must be a whole number >= 0: current value is -1/,
        );
        assert.throws(() => new Queue(client, ""), /Cannot open queue as 'name' must be a non-empty string/);
      });
    });

    describe("sorted sets", () => {
      it("pages, iterates, scans and finds", async () => {
        const t = 1700000000;
        await zadd(k.schedule, [t + 1, job("s1")], [t + 2, job("s2", { class: "SpecialJob" })], [t + 3, job("s3")]);
        // A decoy that mentions s2's jid in its args but is another job.
        await zadd(k.schedule, [t + 4, job("s4", { args: ["see s2"] })]);
        const set = new ScheduledSet(client);
        assert.equal(set.name, "schedule");
        assert.equal(await set.size(), 4);
        const page = await set.page(0, 2);
        assert.deepEqual(page.map((e) => e.jid), ["s1", "s2"]);
        assert.equal(page[0].score, t + 1);
        assert.equal(page[0].at.getTime(), (t + 1) * 1000);
        assert.deepEqual((await set.page(0, 2, { reverse: true })).map((e) => e.jid), ["s4", "s3"]);
        assert.deepEqual((await set.page(3, 2)).map((e) => e.jid), ["s4"]);
        const all: string[] = [];
        for await (const entry of set) all.push(entry.jid!);
        assert.deepEqual(all, ["s4", "s3", "s2", "s1"]);

        const special: string[] = [];
        for await (const entry of set.scan("SpecialJob")) special.push(entry.jid!);
        assert.deepEqual(special, ["s2"]);
        await zadd(k.schedule, [t + 5, job("g1", { args: ["a?b"] })], [t + 6, job("g2", { args: ["axb"] })]);
        const literal: string[] = [];
        for await (const entry of set.scan("a?b")) literal.push(entry.jid!);
        assert.deepEqual(literal, ["g1"], "glob characters in a substring match literally");
        const glob: string[] = [];
        for await (const entry of set.scan("*a?b*")) glob.push(entry.jid!);
        assert.deepEqual(glob.sort(), ["g1", "g2"], "a pattern with * is used as is");
        await redis.call("ZREM", k.schedule, job("g1", { args: ["a?b"] }), job("g2", { args: ["axb"] }));
        const found = await set.findJob("s2");
        assert.equal(found?.jid, "s2");
        assert.equal(found?.klass, "SpecialJob");
        assert.equal(await set.findJob("nope"), null);

        assert.deepEqual((await set.fetch(t + 3)).map((e) => e.jid), ["s3"]);
        assert.deepEqual(await set.fetch(t + 3, "s1"), []);
        assert.equal(await set.deleteByJid(t + 3, "s3"), true);
        assert.equal(await found!.delete(), true);
        assert.equal(await found!.delete(), false);
        assert.deepEqual((await zrange(k.schedule)).map((raw) => JSON.parse(raw).jid), ["s1", "s4"]);
      });

      it("iterates every entry when entries are removed while iterating", async () => {
        const t = 1700000000;
        await zadd(k.retry, ...Array.from({ length: 120 }, (_, i) => [t + i, job(`r${i}`)] as [number, string]));
        const set = new RetrySet(client);
        const seen: string[] = [];
        for await (const entry of set) {
          seen.push(entry.jid!);
          if (seen.length % 3 === 0) await entry.delete();
        }
        assert.equal(new Set(seen).size, 120);
        assert.equal(await set.size(), 80);
      });

      it("addToQueue moves an entry exactly once, through middleware, with a fresh enqueued_at", async () => {
        const tenant: ClientMiddleware = (payload, _ctx, next) => {
          payload.tenant = "acme";
          return next();
        };
        client = new Client({ transport: redis, middleware: [tenant] });
        const raw = job("once", { queue: "low", created_at: 1700000000.5 });
        await zadd(k.schedule, [nowS() + 3600, raw]);
        const set = new ScheduledSet(client);
        const [a] = await set.page(0, 1);
        const b = await set.findJob("once");
        const before = nowS();
        const results = await Promise.all([a.addToQueue(), b!.addToQueue()]);
        assert.deepEqual(results.sort(), [false, true]);
        assert.equal(await redis.call("ZCARD", k.schedule), 0);
        assert.deepEqual(await redis.call("SMEMBERS", k.queues), ["low"]);
        const pushed = await lrange(k.queue("low"));
        assert.equal(pushed.length, 1);
        const payload = JSON.parse(pushed[0]);
        assert.equal(payload.tenant, "acme");
        assert.ok(payload.enqueued_at >= before - 0.001 && payload.enqueued_at <= nowS() + 1);
        assert.equal(await a.addToQueue(), false);
        assert.equal((await lrange(k.queue("low"))).length, 1);
      });

      it("retry decrements retry_count and keeps unknown fields byte for byte", async () => {
        const raw = rubyJob("rb1");
        await zadd(k.retry, [nowS() + 60, raw]);
        const entry = await new RetrySet(client).findJob("rb1");
        assert.equal(entry?.retryCount, 2);
        assert.equal(await entry!.retry(), true);
        assert.equal(await redis.call("ZCARD", k.retry), 0);
        const [pushed] = await lrange(k.queue("default"));
        await expectedAfterPush(pushed, raw, (r) => r.replace('"retry_count":2', '"retry_count":1'));
        assert.equal(JSON.parse(pushed).retry_count, 1);
      });

      it("retry keeps Sidekiq 8 integer-millisecond times as integers", async () => {
        const raw = job("ms1", { created_at: 1700000000123, failed_at: 1700000000456, retry_count: 0 });
        await zadd(k.dead, [nowS(), raw]);
        const entry = await new DeadSet(client).findJob("ms1");
        assert.equal(entry?.createdAt?.getTime(), 1700000000123);
        const before = Date.now();
        assert.equal(await entry!.retry(), true);
        const [pushed] = await lrange(k.queue("default"));
        assert.match(
          pushed,
          /"created_at":1700000000123,"failed_at":1700000000456,"retry_count":-1,"enqueued_at":\d+\}$/,
        );
        const enqueued = JSON.parse(pushed).enqueued_at;
        assert.ok(Number.isInteger(enqueued) && enqueued >= before && enqueued <= Date.now());
      });

      it("kill moves to dead atomically, trims by age, keeps the raw job and notifies", async () => {
        const raw = rubyJob("k1");
        const old = job("ancient");
        await zadd(k.retry, [nowS() + 60, raw]);
        await zadd(k.dead, [nowS() - 181 * DAY, old], [nowS() - DAY, job("recent")]);
        const deaths: [JobPayload, unknown][] = [];
        const set = new RetrySet(client, { deathHandlers: [(payload, error) => void deaths.push([payload, error])] });
        const entry = await set.findJob("k1");
        const before = nowS();
        const results = await Promise.all([entry!.kill(), entry!.kill()]);
        assert.deepEqual(results.sort(), [false, true]);
        assert.equal(await redis.call("ZCARD", k.retry), 0);
        const dead = await zrange(k.dead);
        assert.deepEqual(dead.map((r) => JSON.parse(r).jid), ["recent", "k1"]);
        assert.equal(dead[1], raw);
        const score = Number(await redis.call("ZSCORE", k.dead, raw));
        assert.ok(score >= before - 0.001 && score <= nowS() + 1);
        assert.equal(deaths.length, 1);
        assert.equal(deaths[0][0].jid, "k1");
        assert.equal(deaths[0][0].bid, "b-123");
        assert.equal((deaths[0][1] as Error).message, "Job killed by API");
      });

      it("DeadSet.kill adds a job and trims the set to 10,000", async () => {
        const t = nowS() - 20_000; // all in the past, all younger than six months
        for (let batch = 0; batch < 10; batch++) {
          const pairs: [number, string][] = [];
          for (let i = 0; i < 1000; i++) pairs.push([t + batch * 1000 + i, `{"jid":"d${batch * 1000 + i}"}`]);
          await zadd(k.dead, ...pairs);
        }
        assert.equal(await redis.call("ZCARD", k.dead), 10_000);
        const deaths: string[] = [];
        const dead = new DeadSet(client, { deathHandlers: [(payload) => void deaths.push(payload.jid)] });
        assert.equal(DeadSet.maxJobs, 10_000);
        await dead.kill(job("fresh"));
        await dead.kill({ class: "Obj", args: [], queue: "default", jid: "obj", created_at: 1700000000 }, {
          notifyFailure: false,
        });
        assert.equal(await redis.call("ZCARD", k.dead), 10_000);
        assert.equal(await redis.call("ZSCORE", k.dead, `{"jid":"d0"}`), null);
        assert.equal(await redis.call("ZSCORE", k.dead, `{"jid":"d1"}`), null);
        assert.notEqual(await redis.call("ZSCORE", k.dead, `{"jid":"d2"}`), null);
        assert.notEqual(await redis.call("ZSCORE", k.dead, job("fresh")), null);
        const [newest] = await dead.page(0, 1, { reverse: true });
        assert.equal(newest.value, '{"class":"Obj","args":[],"queue":"default","jid":"obj","created_at":1700000000.0}');
        assert.deepEqual(deaths, ["fresh"]);
      });

      it("retryAll moves every readable entry, leaving unreadable ones", async () => {
        const t = nowS() + 60;
        const bad = "{not json";
        await zadd(k.retry, [t, job("a1", { retry_count: 3 })], [t + 1, bad], [t + 2, job("a2", { queue: "low" })]);
        const set = new RetrySet(client);
        assert.equal(await set.retryAll(), 2);
        assert.deepEqual(await zrange(k.retry), [bad]);
        const [a1] = await lrange(k.queue("default"));
        assert.equal(JSON.parse(a1).retry_count, 2);
        assert.equal(JSON.parse((await lrange(k.queue("low")))[0]).jid, "a2");
        assert.deepEqual(((await redis.call("SMEMBERS", k.queues)) as string[]).sort(), ["default", "low"]);
        await assert.rejects((await set.page(0, 1))[0].retry(), /Cannot retry job as its payload is not valid JSON/);
      });

      it("retryAll and killAll drain sets larger than one batch", async () => {
        const t = nowS() + 60;
        await zadd(k.schedule, ...Array.from({ length: 250 }, (_, i) => [t + i, job(`m${i}`)] as [number, string]));
        await zadd(k.retry, ...Array.from({ length: 150 }, (_, i) => [t + i, job(`n${i}`)] as [number, string]), [
          t,
          "{bad",
        ]);
        assert.equal(await new ScheduledSet(client).retryAll(), 250);
        assert.equal(await redis.call("LLEN", k.queue("default")), 250);
        assert.equal(await new RetrySet(client).killAll(), 151);
        assert.equal(await redis.call("ZCARD", k.retry), 0);
        assert.equal(await redis.call("ZCARD", k.dead), 151);
        assert.equal(await new DeadSet(client).killAll(), 0);
        assert.equal(await new DeadSet(client).clear(), true);
        assert.equal(await redis.call("EXISTS", k.dead), 0);
      });

      it("reschedule moves an entry that is still there", async () => {
        await zadd(k.schedule, [1700000000, job("re")]);
        const [entry] = await new ScheduledSet(client).page(0, 1);
        assert.equal(await entry.reschedule(new Date(1800000000500)), true);
        assert.equal(Number(await redis.call("ZSCORE", k.schedule, job("re"))), 1800000000.5);
        await entry.delete();
        assert.equal(await entry.reschedule(1900000000), false);
        assert.equal(await redis.call("ZCARD", k.schedule), 0);
      });
    });

    describe("ProcessSet", () => {
      const identity = "worker-1.example.com:4242:0123456789ab";
      const info = {
        hostname: "worker-1.example.com",
        started_at: 1700000000.5,
        pid: 4242,
        tag: "myapp",
        concurrency: 10,
        queues: ["critical", "default"],
        labels: ["reliable"],
        identity,
        version: "6.4.2",
      };
      const writeSidekiq64 = async (): Promise<void> => {
        await redis.pipeline([
          ["SADD", k.processes, identity, "gone-host:1:ffffffffffff"],
          [
            "HSET",
            k.process(identity),
            "info",
            JSON.stringify(info),
            "busy",
            "2",
            "beat",
            "1700000100.25",
            "quiet",
            "false",
            "rss",
            "123456",
            "rtt_us",
            "350",
          ],
          ["EXPIRE", k.process(identity), 60],
        ]);
      };

      it("reads a process hash written in Sidekiq 6.4's shape, skipping dead entries", async () => {
        await writeSidekiq64();
        const set = new ProcessSet(client);
        const [p, ...rest] = await set.list();
        assert.equal(rest.length, 0);
        assert.ok(p instanceof Process);
        assert.equal(p.identity, identity);
        assert.equal(p.hostname, "worker-1.example.com");
        assert.equal(p.pid, 4242);
        assert.equal(p.tag, "myapp");
        assert.equal(p.concurrency, 10);
        assert.deepEqual(p.queues, ["critical", "default"]);
        assert.deepEqual(p.labels, ["reliable"]);
        assert.equal(p.version, "6.4.2");
        assert.equal(p.startedAt?.getTime(), 1700000000500);
        assert.equal(p.busy, 2);
        assert.equal(p.beat.getTime(), 1700000100250);
        assert.equal(p.isQuiet, false);
        assert.equal(p.rss, 123456);
        assert.equal(p.rttUs, 350);
        assert.equal(p.embedded, false);
        assert.equal(await set.size(), 2);
        assert.equal((await set.find(identity))?.busy, 2);
        assert.equal(await set.find("gone-host:1:ffffffffffff"), null);
      });

      it("quiet(), stop() and dump() push TSTP, TERM and TTIN with a 60 s TTL", async () => {
        await writeSidekiq64();
        const [p] = await new ProcessSet(client).list();
        await p.quiet();
        assert.deepEqual(await lrange(k.signals(identity)), ["TSTP"]);
        await p.stop();
        await p.dump();
        assert.deepEqual(await lrange(k.signals(identity)), ["TTIN", "TERM", "TSTP"]);
        const ttl = Number(await redis.call("TTL", k.signals(identity)));
        assert.ok(ttl > 0 && ttl <= 60, `ttl ${ttl}`);
        assert.equal(await redis.call("RPOP", k.signals(identity)), "TSTP");
      });

      it("refuses to quiet an embedded process", async () => {
        await redis.pipeline([
          ["SADD", k.processes, "emb:1:x"],
          ["HSET", k.process("emb:1:x"), "info", JSON.stringify({ identity: "emb:1:x", embedded: true }), "busy", "0"],
        ]);
        const [p] = await new ProcessSet(client).list();
        await assert.rejects(p.quiet(), /Cannot quiet process emb:1:x as it is embedded/);
        assert.equal(await redis.call("EXISTS", k.signals("emb:1:x")), 0);
      });

      it("cleanup() removes identities whose hash has no info", async () => {
        await writeSidekiq64();
        assert.equal(await new ProcessSet(client).cleanup(), 1);
        assert.deepEqual(await redis.call("SMEMBERS", k.processes), [identity]);
        assert.equal(await new ProcessSet(client).cleanup(), 0);
      });
    });

    describe("Workers", () => {
      it("lists in-flight jobs with string and object payloads", async () => {
        const raw = job("w1", { created_at: 1700000000.5 });
        const old = { class: "OldJob", args: [1], jid: "w2", queue: "critical", created_at: 1600000000 };
        await redis.pipeline([
          ["SADD", k.processes, "new:1:a", "old:2:b", "gone:3:c"],
          ["HSET", k.process("new:1:a"), "info", "{}", "busy", "1"],
          ["HSET", k.process("old:2:b"), "info", "{}", "busy", "2"],
          [
            "HSET",
            k.work("new:1:a"),
            "default:0",
            JSON.stringify({ queue: "default", payload: raw, run_at: 1700000010 }),
          ],
          [
            "HSET",
            k.work("old:2:b"),
            "ovkzyxxj8",
            JSON.stringify({ queue: "critical", payload: old, run_at: 1700000005 }),
          ],
          ["HSET", k.work("gone:3:c"), "x", JSON.stringify({ queue: "default", payload: raw, run_at: 1 })],
        ]);
        const workers = new Workers(client);
        const list = await workers.list();
        assert.deepEqual(list.map((w) => [w.process, w.slot, w.queue, w.runAt.getTime(), w.payload.jid]), [
          ["old:2:b", "ovkzyxxj8", "critical", 1700000005000, "w2"],
          ["new:1:a", "default:0", "default", 1700000010000, "w1"],
        ]);
        assert.equal(list[1].payload.value, raw);
        assert.equal(list[0].payload.klass, "OldJob");
        assert.equal(list[0].payload.createdAt?.getTime(), 1600000000000);
        assert.equal(await workers.size(), 3);
      });
    });

    describe("Stats", () => {
      it("counts everything in two round trips and three commands", async () => {
        await redis.pipeline([
          ["SET", k.stat("processed"), "10"],
          ["SET", k.stat("failed"), "3"],
          // "gone:3:c" died without unregistering: its hash expired, so it and its busy count are not counted.
          ["SADD", k.processes, "p:1:a", "p:2:b", "gone:3:c"],
          ["HSET", k.process("p:1:a"), "info", "{}", "busy", "2"],
          ["HSET", k.process("p:2:b"), "info", "{}", "busy", "1"],
          ["SADD", k.queues, "default", "low", "empty"],
          ["LPUSH", k.queue("default"), job("q1", { enqueued_at: nowS() - 3 }), job("q2", { enqueued_at: nowS() })],
          ["LPUSH", k.queue("low"), job("q3"), job("q4"), job("q5")],
          ["ZADD", k.schedule, 1, job("s")],
          ["ZADD", k.retry, 1, job("r1"), 2, job("r2")],
          ["ZADD", k.dead, 1, job("d")],
        ]);
        const stats = new Stats(client);
        await stats.fetch(); // a script's first call on a server may load it (NOSCRIPT, then EVAL)
        const { roundTrips: trips, commands } = redis.counters;
        const s = await stats.fetch();
        assert.equal(redis.counters.roundTrips - trips, 2);
        assert.equal(redis.counters.commands - commands, 3, "2 SMEMBERS, one script: whatever the fleet");
        assert.ok(s.defaultQueueLatency >= 2.9 && s.defaultQueueLatency < 5, `latency ${s.defaultQueueLatency}`);
        assert.deepEqual({ ...s, defaultQueueLatency: 0 }, {
          processed: 10,
          failed: 3,
          enqueued: 5,
          scheduledSize: 1,
          retrySize: 2,
          deadSize: 1,
          processesSize: 2,
          workersSize: 3,
          defaultQueueLatency: 0,
          queues: { low: 3, default: 2, empty: 0 },
        });
        assert.deepEqual(Object.keys(s.queues), ["low", "default", "empty"]);
      });

      it("reads an empty database as zeros", async () => {
        const s = await new Stats(client).fetch();
        assert.equal(s.processed + s.failed + s.enqueued + s.workersSize + s.defaultQueueLatency, 0);
      });

      it("reads daily history and resets counters", async () => {
        await redis.pipeline([
          ["SET", k.statDay("processed", "2024-01-31"), "5"],
          ["SET", k.statDay("processed", "2024-01-29"), "7"],
          ["SET", k.statDay("failed", "2024-01-30"), "1"],
          ["SET", k.stat("processed"), "10"],
          ["SET", k.stat("failed"), "3"],
        ]);
        const stats = new Stats(client);
        const history = await stats.history(3, new Date("2024-01-31T23:59:00Z"));
        assert.deepEqual(history, {
          processed: { "2024-01-31": 5, "2024-01-30": 0, "2024-01-29": 7 },
          failed: { "2024-01-31": 0, "2024-01-30": 1, "2024-01-29": 0 },
        });
        assert.deepEqual(Object.keys(history.processed), ["2024-01-31", "2024-01-30", "2024-01-29"]);
        await stats.reset("failed");
        assert.deepEqual(await redis.call("MGET", k.stat("processed"), k.stat("failed")), ["10", "0"]);
        await stats.reset();
        assert.deepEqual(await redis.call("MGET", k.stat("processed"), k.stat("failed")), ["0", "0"]);
        assert.equal(await redis.call("GET", k.statDay("processed", "2024-01-31")), "5");
        await assert.rejects(
          stats.history(0),
          /Cannot read stats history as 'days' must be a whole number > 0: current value is 0/,
        );
      });
    });

    describe("prefix", () => {
      it("uses the client's namespace for every key", async () => {
        const ns = new Client({ transport: redis, prefix: "app" });
        await ns.push("HardJob", [1]);
        await ns.push("HardJob", [2], { in: 600 });
        assert.deepEqual((await Queue.all(ns)).map((q) => q.name), ["default"]);
        assert.deepEqual(await Queue.all(client), []);
        assert.equal(await new ScheduledSet(ns).size(), 1);
        const [entry]: SortedEntry[] = await new ScheduledSet(ns).page(0, 1);
        assert.equal(await entry.addToQueue(), true);
        assert.equal(await redis.call("LLEN", keys("app", k.keyspace).queue("default")), 2);
        assert.equal((await new Stats(ns).fetch()).enqueued, 2);
      });
    });
  });
}
