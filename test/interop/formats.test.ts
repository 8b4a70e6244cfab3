/**
 * Sidekiq 7 and 8 cannot be installed here (Debian ships 6.4), so their wire
 * formats are covered with payloads shaped as their source writes them:
 * - Sidekiq 8.0 `Client#atomic_push` / `JobRecord`: `created_at` and
 *   `enqueued_at` as integer epoch milliseconds (`::Process.clock_gettime(..., :millisecond)`);
 * - Sidekiq 7.2+ `JobRetry#compress_backtrace`:
 *   `Base64.strict_encode64(Zlib::Deflate.deflate(Sidekiq.dump_json(backtrace)))`;
 * - Sidekiq 8.1 heartbeat: a top-level `concurrency` field in the process hash,
 *   and `info.capsules` naming each capsule's concurrency and weights.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  createClient,
  JobRecord,
  memoryTransport,
  parsePayload,
  ProcessSet,
  serializePayload,
  toEpochMs,
} from "../../mod.ts";
import { decompressBacktrace } from "../../src/server/backtrace.ts";

// Made with: Base64.strict_encode64(Zlib::Deflate.deflate(JSON.generate([...]))) in Ruby 3.1.
const STRICT_BACKTRACE =
  "eJyLVkosKNDPyk8q1s9ILEqJB7L0ipKsTK0y8xQSClKL0vKLctWVdJSKM1NSszML9QuK8pNTi4vzi0CqjAyMwOpSK1KTS0tSQZrVlWIBzIQdJQ==";

describe("Sidekiq 7/8 formats", () => {
  it("reads Sidekiq 8 integer-millisecond times, and keeps them integral on rewrite", () => {
    const raw =
      '{"class":"HardJob","args":[1],"queue":"default","jid":"abc123","created_at":1735689600123,"enqueued_at":1735689600456,"retry":true}';
    const job = parsePayload(raw);
    assert.equal(toEpochMs(job.created_at!), 1735689600123);
    assert.equal(new JobRecord(raw).enqueuedAt?.getTime(), 1735689600456);
    job.retry_count = 0;
    const rewritten = serializePayload(job, "seconds");
    assert.match(rewritten, /"created_at":1735689600123[,}]/);
    assert.match(rewritten, /"enqueued_at":1735689600456[,}]/);
  });

  it("decodes Sidekiq 7.2+ strict-base64 deflated backtraces (and 6.x's line-broken base64)", async () => {
    const lines = await decompressBacktrace(STRICT_BACKTRACE);
    assert.deepEqual(lines, ["app/jobs/hard_job.rb:5:in `perform'", "sidekiq/processor.rb:202:in `execute_job'"]);
    const lineBroken = STRICT_BACKTRACE.replace(/(.{60})/g, "$1\n") + "\n";
    assert.deepEqual(await decompressBacktrace(lineBroken), lines);
  });

  it("reads a Sidekiq 8.1 process: concurrency field and info.capsules", async () => {
    const transport = memoryTransport();
    const identity = "web-1:4242:0123456789ab";
    const info = {
      hostname: "web-1",
      started_at: 1735689600.5,
      pid: 4242,
      tag: "app",
      concurrency: 10,
      queues: ["critical", "default"],
      weights: [{ critical: 3, default: 1 }],
      capsules: { default: { concurrency: 10, mode: "weighted", weights: { critical: 3, default: 1 } } },
      labels: [],
      identity,
      version: "8.1.0",
      embedded: false,
    };
    await transport.pipeline([
      ["SADD", "processes", identity],
      [
        "HSET",
        identity,
        "info",
        JSON.stringify(info),
        "busy",
        "2",
        "beat",
        "1735689700.25",
        "quiet",
        "false",
        "rss",
        "123456",
        "rtt_us",
        "150",
        "concurrency",
        "12",
      ],
    ]);
    const [process] = await new ProcessSet(createClient({ transport })).list();
    assert.equal(process.identity, identity);
    assert.equal(process.concurrency, 12, "the 8.1 top-level field wins over info.concurrency");
    assert.equal(process.busy, 2);
    assert.deepEqual(process.queues, ["critical", "default"]);
  });
});
