/**
 * Sidekiq 7.x and 8.x wire formats that cannot be installed here (Debian
 * ships 6.4), from fixtures transcribed from sidekiq/sidekiq's source (see
 * each fixture's "$comment" for the version and files): integer-millisecond
 * times, the `concurrency` process field, `info.capsules`, strict-base64
 * backtraces. Runs on the memory transport: no Redis or Ruby needed.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createClient, defineJob, memoryTransport, type Transport } from "../../mod.ts";
import { DeadSet, ProcessSet, Queue, RetrySet, Workers } from "../../src/api/mod.ts";
import { parsePayload, serializePayload, toEpochMs } from "../../src/payload.ts";
import { decompressBacktrace } from "../../src/server/backtrace_codec.ts";
import { waitFor } from "../support/matrix.ts";
import { testWorker } from "../support/worker.ts";

interface ProcessFixture {
  identity: string;
  info: Record<string, unknown>;
  hash: Record<string, string>;
  work?: { tid: string; queue: string; run_at: number };
}

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"));
const v8 = fixture("sidekiq8.json") as {
  job: Record<string, unknown>;
  retry: { score: number; payload: Record<string, unknown> };
  backtrace_lines: string[];
  process: ProcessFixture;
};
const v7 = fixture("sidekiq7.json") as {
  job: Record<string, unknown>;
  backtrace_lines: string[];
  backtrace_7_0_to_7_2_0: string;
  backtrace_7_2_1_and_later: string;
  process: ProcessFixture;
};
/** 2025-01-08T17:40:42Z, the instant the fixtures were written at. */
const T = Date.UTC(2025, 0, 8, 17, 40, 42);

async function registerProcess(redis: Transport, p: ProcessFixture): Promise<void> {
  const fields = Object.entries(p.hash).flat();
  await redis.pipeline([
    ["SADD", "processes", p.identity],
    ["HSET", p.identity, "info", JSON.stringify(p.info), ...fields],
  ]);
}

describe("Sidekiq 7/8 formats (transcribed fixtures)", () => {
  let redis: Transport;
  beforeEach(() => {
    redis = memoryTransport();
  });

  it("8.x integer-millisecond and 7.x float-second times read as the same instants", () => {
    const job8 = parsePayload(JSON.stringify(v8.job));
    const job7 = parsePayload(JSON.stringify(v7.job));
    assert.equal(toEpochMs(job8.created_at!), T + 123);
    assert.equal(toEpochMs(job8.enqueued_at!), T + 125);
    assert.ok(Math.abs(toEpochMs(job7.created_at!) - (T + 123.4567)) < 0.001);
    assert.equal(toEpochMs(job7.enqueued_at!), T + 125);
    const retry = parsePayload(JSON.stringify(v8.retry.payload));
    assert.equal(toEpochMs(retry.failed_at!), T - 31_500);
    assert.equal(toEpochMs(retry.retried_at!), T + 250);
    // Rewriting a Sidekiq 8 payload in seconds mode keeps its integer ms
    // times integers (Ruby would read "…500.0" as seconds, millennia ahead).
    const rewritten = serializePayload(retry, "seconds");
    assert.match(rewritten, /"failed_at":1736358010500[,}]/);
    assert.match(rewritten, /"created_at":1736358000000[,}]/);
  });

  it("decompressBacktrace reads 7.0-7.2.0 line-broken base64, 7.2.1+/8.x strict base64 and bare arrays", async () => {
    assert.match(v7.backtrace_7_0_to_7_2_0, /\n/);
    assert.doesNotMatch(v7.backtrace_7_2_1_and_later, /\s/);
    assert.deepEqual(await decompressBacktrace(v7.backtrace_7_0_to_7_2_0), v7.backtrace_lines);
    assert.deepEqual(await decompressBacktrace(v7.backtrace_7_2_1_and_later), v7.backtrace_lines);
    assert.deepEqual(await decompressBacktrace(v8.retry.payload.error_backtrace), v8.backtrace_lines);
    assert.deepEqual(await decompressBacktrace(v8.backtrace_lines), v8.backtrace_lines); // Sidekiq 5: a plain array
  });

  it("the API reads a Sidekiq 8 queue job and retry entry (ms times, strict backtrace)", async () => {
    const client = createClient({ transport: redis });
    await redis.pipeline([
      ["SADD", "queues", "default"],
      ["LPUSH", "queue:default", JSON.stringify(v8.job)],
      ["ZADD", "retry", v8.retry.score, JSON.stringify(v8.retry.payload)],
    ]);
    const [queued] = await new Queue(client, "default").page(0, 10);
    assert.equal(queued.jid, v8.job.jid);
    assert.equal(queued.enqueuedAt?.getTime(), T + 125);
    assert.equal(queued.createdAt?.getTime(), T + 123);
    assert.deepEqual(queued.args, v8.job.args);

    const [entry] = await new RetrySet(client).page(0, 10);
    assert.equal(entry.jid, v8.retry.payload.jid);
    assert.equal(entry.score, v8.retry.score);
    assert.ok(Math.abs(entry.at.getTime() - v8.retry.score * 1000) < 1);
    assert.equal(entry.failedAt?.getTime(), T - 31_500);
    assert.equal(entry.retriedAt?.getTime(), T + 250);
    assert.equal(entry.createdAt?.getTime(), T - 42_000);
    assert.equal(entry.retryCount, 1);
    assert.equal(entry.errorClass, "NoMethodError");
    assert.deepEqual(await decompressBacktrace(entry.get("error_backtrace")), v8.backtrace_lines);
  });

  it("ProcessSet reads a Sidekiq 8.1 process: `concurrency` hash field, info.capsules, no info.concurrency", async () => {
    const client = createClient({ transport: redis });
    await registerProcess(redis, v8.process);
    const [p] = await new ProcessSet(client).list();
    assert.equal(p.identity, v8.process.identity);
    assert.equal(p.hostname, "app-1");
    assert.equal(p.pid, 4242);
    assert.equal(p.tag, "myapp");
    assert.equal(p.concurrency, 6, "from the hash field (8.1.2+ dropped info.concurrency)");
    assert.deepEqual(p.queues, ["critical", "default", "serial"]);
    assert.deepEqual(p.labels, ["reliable"]);
    assert.equal(p.version, "8.1.7");
    assert.equal(p.embedded, false);
    assert.equal(p.busy, 1);
    assert.equal(p.isQuiet, false);
    assert.equal(p.rss, 183204);
    assert.equal(p.rttUs, 412);
    assert.ok(Math.abs(p.beat.getTime() - 1736358042812.3) < 1);
    assert.ok(Math.abs(p.startedAt!.getTime() - 1736357000123.456) < 1);
    assert.deepEqual(p.info.capsules, v8.process.info.capsules);
  });

  it("ProcessSet reads a Sidekiq 7.3 process: info.concurrency, no hash field, no capsules", async () => {
    const client = createClient({ transport: redis });
    await registerProcess(redis, v7.process);
    await registerProcess(redis, v8.process);
    const list = await new ProcessSet(client).list();
    assert.deepEqual(list.map((p) => p.identity), [v8.process.identity, v7.process.identity]);
    const p = list[1];
    assert.equal(p.concurrency, 10);
    assert.deepEqual(p.queues, ["critical", "default"]);
    assert.equal(p.isQuiet, true);
    assert.equal(p.version, "7.3.10");
    assert.equal(p.info.capsules, undefined);
    assert.equal(p.busy, 0);
  });

  it("Workers reads a Sidekiq 7/8 `<identity>:work` hash (payload as a JSON string, run_at in seconds)", async () => {
    const client = createClient({ transport: redis });
    await registerProcess(redis, v8.process);
    const work = v8.process.work!;
    const jobstr = JSON.stringify(v8.job);
    await redis.call(
      "HSET",
      `${v8.process.identity}:work`,
      work.tid,
      JSON.stringify({ queue: work.queue, payload: jobstr, run_at: work.run_at }),
    );
    const [w] = await new Workers(client).list();
    assert.equal(w.process, v8.process.identity);
    assert.equal(w.slot, work.tid);
    assert.equal(w.queue, "critical");
    assert.equal(w.runAt.getTime(), work.run_at * 1000);
    assert.equal(w.payload.jid, v8.job.jid);
    assert.equal(w.payload.value, jobstr);
    assert.equal(await new Workers(client).size(), 1);
  });

  it("an edgekiq worker retries a Sidekiq 8 job: ms times kept, retry_for measured from ms failed_at", async () => {
    const Fails = defineJob({
      name: "HardJob",
      perform() {
        throw new Error("again");
      },
    });
    const now = Date.now();
    const retryable = { ...v8.retry.payload, jid: "c".repeat(24), failed_at: now - 60_000, retry_for: 3600 };
    const expired = { ...v8.retry.payload, jid: "d".repeat(24), failed_at: now - 7_200_000, retry_for: 3600 };
    await redis.pipeline([
      ["SADD", "queues", "default"],
      ["LPUSH", "queue:default", JSON.stringify(retryable), JSON.stringify(expired)],
    ]);
    const worker = testWorker(redis, { jobs: [Fails] });
    await worker.run();
    try {
      await waitFor(
        async () => Number(await redis.call("ZCARD", "retry")) + Number(await redis.call("ZCARD", "dead")) === 2,
        "both settled",
      );
    } finally {
      await worker.stop();
    }
    const client = createClient({ transport: redis });
    const retried = await new RetrySet(client).findJob(retryable.jid);
    assert.ok(retried, "failed 1 min ago with retry_for 1 h: retried");
    assert.equal(retried.get("failed_at"), retryable.failed_at, "Sidekiq 8's integer ms failed_at is kept as is");
    assert.equal(retried.retryCount, 2);
    assert.ok(Math.abs(retried.retriedAt!.getTime() - Date.now()) < 10_000);
    assert.equal(retried.createdAt?.getTime(), T - 42_000);
    const dead = await new DeadSet(client).findJob(expired.jid);
    assert.ok(dead, "failed 2 h ago with retry_for 1 h: dead");
  });
});
