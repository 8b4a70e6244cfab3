/**
 * edgekiq/otel: spans from push to perform, checked with the OpenTelemetry
 * SDK's in-memory exporter and a processor that tracks spans still open.
 * Runs on the memory transport under Node, Bun and Deno.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type Span,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { Client } from "../src/client.ts";
import { Discard } from "../src/control.ts";
import { defineJob } from "../mod.ts";
import { silentLogger } from "../src/logger.ts";
import { drain } from "../src/server/drain.ts";
import { memoryTransport } from "../src/transport/adapters/memory/memory_transport.ts";
import type { Transport } from "../src/transport/transport.ts";
import { pollOnce } from "../src/server/poller.ts";
import { otelMiddleware, type OtelOptions } from "../src/features/otel/mod.ts";
import { extractTrace } from "../src/features/otel/carrier.ts";
import { waitFor } from "./support/matrix.ts";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { testWorker } from "./support/worker.ts";

/** Spans started and not yet ended. */
class OpenSpans implements SpanProcessor {
  readonly open = new Set<Span>();
  started = 0;
  onStart(span: Span): void {
    this.started++;
    this.open.add(span);
  }
  onEnd(span: ReadableSpan): void {
    this.open.delete(span as Span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

let exporter: InMemorySpanExporter;
let spans: OpenSpans;
let options: OtelOptions;
let transport: Transport;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  spans = new OpenSpans();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), spans] });
  options = { tracer: provider.getTracer("test") };
  transport = memoryTransport();
});

const finished = (kind: SpanKind) => exporter.getFinishedSpans().filter((s) => s.kind === kind);

async function run(jobs: Parameters<typeof drain>[0]["jobs"], otel = otelMiddleware(options)): Promise<void> {
  const result = await drain({
    transport,
    jobs,
    budgetMs: 20_000,
    logger: silentLogger,
    middleware: [otel.server],
  });
  assert.equal(result.remaining, 0);
}

const Ok = defineJob({ name: "OkJob", perform() {} });

describe("otel middleware", () => {
  it("gives a pushed job's perform span the push span's trace, as its child and linked to it", async () => {
    const otel = otelMiddleware(options);
    const client = new Client({ transport, middleware: [otel.client] });
    const jid = await client.push(Ok, []);
    const [raw] = (await transport.call("LRANGE", "queue:default", 0, -1)) as string[];
    const payload = JSON.parse(raw);
    assert.match(payload.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    await run([Ok], otel);
    const [push] = finished(SpanKind.PRODUCER);
    const [perform] = finished(SpanKind.CONSUMER);
    assert.equal(push.name, "OkJob publish");
    assert.equal(perform.name, "OkJob process");
    assert.equal(payload.traceparent, `00-${push.spanContext().traceId}-${push.spanContext().spanId}-01`);
    assert.equal(perform.spanContext().traceId, push.spanContext().traceId);
    assert.equal(perform.parentSpanContext?.spanId, push.spanContext().spanId);
    assert.deepEqual(perform.links.map((l) => l.context.spanId), [push.spanContext().spanId]);
    assert.deepEqual(perform.attributes, {
      "messaging.system": "sidekiq",
      "messaging.operation.type": "process",
      "messaging.destination.name": "default",
      "messaging.message.id": jid,
      "messaging.sidekiq.job_class": "OkJob",
    });
    assert.equal(perform.status.code, SpanStatusCode.UNSET);
    assert.equal(spans.open.size, 0);
  });

  it("records a failure, and runs each retry as a new span linked to the first push", async () => {
    let attempts = 0;
    const Flaky = defineJob({
      name: "FlakyJob",
      perform() {
        if (++attempts === 1) throw new Error("boom");
      },
    });
    const otel = otelMiddleware(options);
    const client = new Client({ transport, middleware: [otel.client] });
    await client.push(Flaky, []);
    await run([Flaky], otel);
    // Due now: the poller moves it back to its queue through the client middleware, as a worker's would.
    const [entry] = (await transport.call("ZRANGE", "retry", 0, -1)) as string[];
    await transport.call("ZADD", "retry", 1, entry);
    assert.equal((await pollOnce({ client })).promoted, 1);
    await run([Flaky], otel);

    const pushes = finished(SpanKind.PRODUCER);
    assert.equal(pushes.length, 1, "moving the retry back to its queue starts no second push span");
    const [failed, retried] = finished(SpanKind.CONSUMER);
    assert.equal(failed.status.code, SpanStatusCode.ERROR);
    assert.equal(failed.status.message, "boom");
    const exception = failed.events.find((e) => e.name === "exception");
    assert.equal(exception?.attributes?.["exception.message"], "boom");
    assert.equal(exception?.attributes?.["exception.type"], "Error");
    assert.notEqual(retried.spanContext().spanId, failed.spanContext().spanId);
    assert.equal(retried.status.code, SpanStatusCode.UNSET);
    assert.equal(retried.attributes["messaging.sidekiq.retry_count"], 0, "Sidekiq's field: 0 on the first retry");
    for (const perform of [failed, retried]) {
      assert.equal(perform.spanContext().traceId, pushes[0].spanContext().traceId);
      assert.deepEqual(perform.links.map((l) => l.context.spanId), [pushes[0].spanContext().spanId]);
    }
    assert.equal(spans.open.size, 0);
  });

  it('starts a new trace linked to the push with propagation: "link"', async () => {
    const otel = otelMiddleware({ ...options, propagation: "link" });
    await new Client({ transport, middleware: [otel.client] }).push(Ok, []);
    await run([Ok], otel);
    const [push] = finished(SpanKind.PRODUCER);
    const [perform] = finished(SpanKind.CONSUMER);
    assert.notEqual(perform.spanContext().traceId, push.spanContext().traceId);
    assert.equal(perform.parentSpanContext, undefined);
    assert.deepEqual(perform.links.map((l) => l.context.traceId), [push.spanContext().traceId]);
  });

  it("continues a trace Ruby pushed, and ignores a malformed one", async () => {
    const client = new Client({ transport });
    const ruby = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    await client.push(Ok, [], { extra: { traceparent: ruby, tracestate: "congo=t61rcWkgMzE" } });
    await client.push(Ok, [], { extra: { traceparent: "00-garbage" } });
    await client.push(Ok, [], { extra: { traceparent: 42 } });
    await run([Ok]);
    const performs = finished(SpanKind.CONSUMER);
    assert.equal(performs.length, 3);
    const continued = performs.filter((s) => s.spanContext().traceId === "0af7651916cd43dd8448eb211c80319c");
    assert.equal(continued.length, 1);
    assert.equal(continued[0].parentSpanContext?.spanId, "b7ad6b7169203331");
    assert.equal(continued[0].links[0].context.traceState?.get("congo"), "t61rcWkgMzE");
    for (const span of performs.filter((s) => s !== continued[0])) {
      assert.equal(span.parentSpanContext, undefined);
      assert.deepEqual(span.links, []);
    }
  });

  it("reads traceparent as W3C Trace Context says: version 00 exactly, later versions extensible", () => {
    const ids = "0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331";
    const read = (traceparent: unknown) =>
      extractTrace({ class: "A", args: [], queue: "q", jid: "j", traceparent })?.spanId ?? null;
    assert.equal(read(`00-${ids}-01`), "b7ad6b7169203331");
    assert.equal(read(`00-${ids}-01-extra`), null, "version 00 is exactly 55 characters");
    assert.equal(read(`00-${ids}-01-`), null);
    assert.equal(read(`00-${ids}-01x`), null);
    assert.equal(read(`00-${ids}-01 `), null);
    assert.equal(read(`01-${ids}-01-what-comes-next`), "b7ad6b7169203331", "a later version may carry more after '-'");
    assert.equal(read(`01-${ids}-01`), "b7ad6b7169203331");
    assert.equal(read(`01-${ids}-01x`), null, "...but only after a '-'");
    assert.equal(read(`ff-${ids}-01`), null, "version ff is invalid");
    assert.equal(read(`00-${"0".repeat(32)}-b7ad6b7169203331-01`), null, "all-zero trace id");
    assert.equal(read(`00-0af7651916cd43dd8448eb211c80319c-${"0".repeat(16)}-01`), null, "all-zero span id");
    assert.equal(read(`00-${ids.toUpperCase()}-01`), null, "hex is lower case");
  });

  it("marks a Discard as an event, not an error", async () => {
    const Skip = defineJob({
      name: "SkipJob",
      perform() {
        throw new Discard("not needed");
      },
    });
    await new Client({ transport }).push(Skip, []);
    await run([Skip]);
    const [perform] = finished(SpanKind.CONSUMER);
    assert.equal(perform.status.code, SpanStatusCode.UNSET);
    assert.deepEqual(perform.events.map((e) => [e.name, e.attributes?.reason]), [["discarded", "not needed"]]);
  });

  it("leaves no open span after a 10,000-job drain", async () => {
    const otel = otelMiddleware(options);
    const client = new Client({ transport, middleware: [otel.client] });
    let failures = 0;
    const Mixed = defineJob({
      name: "MixedJob",
      retry: false,
      perform(_ctx, n: number) {
        if (n % 100 === 0) {
          failures++;
          throw new Error(`job ${n}`);
        }
      },
    });
    await client.pushBulk(Mixed, Array.from({ length: 10_000 }, (_, n) => [n]));
    await run([Mixed], otel);
    assert.equal(failures, 100);
    assert.equal(spans.started, 20_000);
    assert.equal(spans.open.size, 0);
    assert.equal(finished(SpanKind.CONSUMER).filter((s) => s.status.code === SpanStatusCode.ERROR).length, 100);
  });

  it("ends the span of a job that hard shutdown abandons", async () => {
    const otel = otelMiddleware(options);
    let started = false;
    const Stuck = defineJob({
      name: "StuckJob",
      perform() {
        started = true;
        return new Promise(() => {}); // ignores ctx.signal
      },
    });
    await new Client({ transport }).push(Stuck, []);
    const worker = testWorker(transport, { jobs: [Stuck], middleware: [otel.server], timeout: 0.2 });
    await worker.run();
    await waitFor(() => started, "the job to start");
    assert.equal(spans.open.size, 1);
    await worker.stop();
    assert.equal(spans.open.size, 0);
    const [perform] = finished(SpanKind.CONSUMER);
    assert.equal(perform.attributes["edgekiq.interrupted"], true);
    assert.equal(perform.status.message, "interrupted by shutdown");
  });
});

describe("otel entry point", () => {
  it("is the only code that imports @opentelemetry, so nothing else loads it", () => {
    const root = fileURLToPath(new URL("..", import.meta.url));
    const files = (readdirSync(join(root, "src"), { recursive: true }) as string[])
      .map((f) => f.replace(/\\/g, "/"))
      .filter((f) => f.endsWith(".ts"));
    const importers = files.filter((f) =>
      /from\s+["']@opentelemetry\//.test(readFileSync(join(root, "src", f), "utf8"))
    );
    assert.ok(importers.length > 0);
    assert.deepEqual(importers.filter((f) => !f.startsWith("features/otel/")), []);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    assert.equal(pkg.peerDependenciesMeta["@opentelemetry/api"]?.optional, true);
    assert.equal(pkg.dependencies["@opentelemetry/api"], undefined);
    assert.equal(pkg.exports["./otel"].default, "./dist/src/features/otel/mod.js");
  });
});
