/**
 * Data that makes the browser test's pages (and the README's screenshots)
 * look like a working system: six months of daily counters, a backlog in a
 * few queues, scheduled jobs, retries with real-looking errors and
 * compressed backtraces, as Ruby Sidekiq would write them, and an hour of
 * execution metrics with two deploys.
 *
 * @module
 */
import { createClient, type Transport } from "../../mod.ts";
import { markDeploy } from "../../src/features/mod.ts";
import { MetricsTracker } from "../../src/features/metrics/tracker.ts";
import { compressBacktrace } from "../../src/server/backtrace_codec.ts";

/**
 * Writes the showcase data.
 *
 * @example
 * ```ts
 * await seedShowcase(transport);
 * ```
 */
export async function seedShowcase(transport: Transport): Promise<void> {
  const day = 86_400_000;
  const commands: Array<readonly [string, ...Array<string | number>]> = [];
  let processed = 0;
  let failed = 0;
  for (let i = 0; i < 180; i++) {
    const date = new Date(Date.now() - i * day).toISOString().slice(0, 10);
    const p = Math.round(18_000 + 6_000 * Math.sin(i / 3) + (i % 7 === 0 ? -9_000 : 0));
    const f = Math.round(p * (0.01 + 0.01 * Math.abs(Math.cos(i))));
    processed += p;
    failed += f;
    commands.push(["SET", `stat:processed:${date}`, p], ["SET", `stat:failed:${date}`, f]);
  }
  commands.push(["SET", "stat:processed", processed], ["SET", "stat:failed", failed]);
  await transport.pipeline(commands);
  const client = createClient({ transport });
  await client.pushBulk("DeliverWebhook", Array.from({ length: 37 }, (_, i) => [`evt_${1000 + i}`]), {
    queue: "webhooks",
  });
  await client.pushBulk("RebuildSearchIndex", Array.from({ length: 4 }, (_, i) => [`shard-${i}`]), { queue: "low" });
  await client.push("ChargeCard", [{ account: 4217, cents: 1999 }], { queue: "critical" });
  await client.push("SendDigest", ["weekly"], { in: 3600 });
  await client.push("PurgeExpiredSessions", [], { in: 7200 });
  const now = Date.now() / 1000;
  const failures: Array<[string, unknown[], string, string, number]> = [
    [
      "ImportCsvJob",
      ["s3://uploads/2024/accounts.csv"],
      "CSV::MalformedCSVError",
      "Unclosed quoted field in line 812.",
      2,
    ],
    [
      "ResizeImageJob",
      [88123, "large"],
      "Errno::ENOENT",
      "No such file or directory @ rb_sysopen - /tmp/88123.png",
      4,
    ],
    [
      "NotifySlackJob",
      ["#ops", "Deploy finished"],
      "Net::ReadTimeout",
      "Net::ReadTimeout with #<TCPSocket:(closed)>",
      1,
    ],
  ];
  for (const [i, [klass, args, errorClass, message, count]] of failures.entries()) {
    const backtrace = await compressBacktrace([
      `app/jobs/${klass.replace(/Job$/, "").toLowerCase()}_job.rb:${14 + i}:in 'perform'`,
      "sidekiq/processor.rb:202:in 'execute_job'",
      "sidekiq/processor.rb:170:in 'block (2 levels) in process'",
    ]);
    await transport.call(
      "ZADD",
      "retry",
      now + 600 * (i + 1),
      JSON.stringify({
        class: klass,
        args,
        queue: "default",
        jid: `${"0a1b2c3d4e5f60718293a4b"}${i}`,
        retry: true,
        created_at: now - 3600 * (i + 1),
        enqueued_at: now - 600,
        failed_at: now - 3000,
        retried_at: now - 600,
        retry_count: count,
        error_class: errorClass,
        error_message: message,
        error_backtrace: backtrace,
      }),
    );
  }
}

/** Job classes for the metrics: [class, typical ms, runs a minute, failure rate]. */
const CLASSES: ReadonlyArray<[string, number, number, number]> = [
  ["GenerateMonthlyReport", 4_200, 3, 0.01],
  ["SyncStripeCharges", 850, 24, 0.03],
  ["ImportCsvJob", 2_400, 5, 0.02],
  ["DeliverWebhook", 120, 90, 0.015],
  ["SendInvoiceEmail", 45, 160, 0.002],
  ["ResizeImageJob", 300, 30, 0.005],
  ["NotifySlackJob", 90, 12, 0.001],
];

/**
 * An hour of per-minute execution metrics for a few classes (flushed as a
 * worker's tracker flushes them, one minute at a time), and two deploy marks.
 *
 * @example
 * ```ts
 * await seedMetrics(transport);
 * ```
 */
export async function seedMetrics(transport: Transport): Promise<void> {
  const client = createClient({ transport });
  const tracker = new MetricsTracker();
  const now = Date.now();
  for (let ago = 59; ago >= 1; ago--) {
    CLASSES.forEach(([name, ms, perMinute, failing], c) => {
      // Smooth, repeatable variation: busier and slower in waves, a slow patch after the first deploy.
      const load = 1 + 0.6 * Math.sin((ago + c * 7) / 6);
      const slow = name === "SyncStripeCharges" && ago > 25 && ago < 35 ? 2.4 : 1;
      const runs = Math.max(1, Math.round(perMinute * load));
      for (let i = 0; i < runs; i++) {
        const jitter = 0.6 + 0.8 * ((Math.sin(i * 12.9898 + ago * 78.233 + c) + 1) / 2);
        tracker.record(name, ms * jitter * slow, (i + ago * 7 + c) % Math.round(1 / failing) === 0);
      }
    });
    await tracker.flush(transport, client.keys, { now: new Date(now - ago * 60_000) });
  }
  await markDeploy(client, "9f03b11 Upgrade to edgekiq 0.1", { at: new Date(now - 48 * 60_000) });
  await markDeploy(client, "a41c9e2 Retry Stripe timeouts with backoff", { at: new Date(now - 24 * 60_000) });
}
