/**
 * The README's edge backfill, for real: an iterable job bundled as an edge
 * app bundles it and run in workerd (Cloudflare's runtime) through
 * miniflare, over @upstash/redis and the Upstash REST gateway fixture in
 * front of a private redis-server. Each request is one cron invocation: a
 * `drain({ budgetMs: 300 })`. The job outlives many of them and does every
 * item exactly once.
 *
 * Node only: miniflare drives workerd from Node.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Transport } from "../src/transport/transport.ts";
import { runtimeName } from "./support/child.ts";
import { bundleForWorkerd, startWorkerd, type WorkerdApp } from "./support/workerd.ts";
import { redisAvailable } from "./support/matrix.ts";
import { upTo } from "./support/iterable.ts";

const TOKEN = "iterable-edge-token";
const ITEMS = 400;
const skip = runtimeName !== "node"
  ? `miniflare drives workerd from Node (this is ${runtimeName})`
  : !redisAvailable() && "no redis";

const entry = `
import { createClient, defineIterableJob, drain, iterateRange } from "./mod.ts";
import { upstashTransport } from "./src/transport/upstash.ts";
const Backfill = defineIterableJob({
  name: "Backfill",
  each: (ctx, cursor, to) => iterateRange({ from: 0, to }, cursor),
  async perItem(ctx, n) { await ctx.transport.call("RPUSH", "backfill:done", n); },
});
export default {
  async fetch(request, env) {
    const transport = upstashTransport({ url: env.URL, token: env.TOKEN });
    if (new URL(request.url).pathname === "/push") {
      return Response.json({ jid: await Backfill.performAsync(createClient({ transport }), ${ITEMS}) });
    }
    return Response.json(await drain({ transport, jobs: [Backfill], budgetMs: 300 }));
  },
};
`;

describe("an iterable backfill in workerd, across cron invocations", { skip }, () => {
  let server: { url: string; stop(): Promise<void> } | null = null;
  let gateway: { url: string; stop(): Promise<void> } | undefined;
  let redis: Transport;
  let app: WorkerdApp | undefined;
  // deno-lint-ignore no-explicit-any
  let mf: any;
  before(async () => {
    const { testRedis } = await import("./support/redis.ts");
    const { startUpstashGateway } = await import("./support/upstash-gateway.ts");
    const { ioredisTransport } = await import("../src/transport/ioredis.ts");
    server = await testRedis();
    gateway = await startUpstashGateway({ redisUrl: server!.url, token: TOKEN });
    redis = ioredisTransport({ url: server!.url });
    app = await startWorkerd(await bundleForWorkerd({ contents: entry }), { bindings: { URL: gateway.url, TOKEN } });
    mf = app.mf;
  });
  after(async () => {
    await app?.dispose();
    await redis?.close();
    await gateway?.stop();
    await server?.stop();
  });

  it(
    `${ITEMS} items over many drain({ budgetMs: 300 }) invocations, each exactly once`,
    { timeout: 120_000 },
    async () => {
      const { jid } = await (await mf.dispatchFetch("http://edge.test/push")).json();
      const invocations: Array<{ processed: number; remaining: number; failed: number }> = [];
      for (let i = 0; i < 60; i++) {
        const result = await (await mf.dispatchFetch("http://edge.test/cron")).json();
        invocations.push(result);
        if (result.processed === 1) break;
      }
      assert.equal(invocations.at(-1)?.processed, 1, `done within 60 invocations (${invocations.length})`);
      assert.ok(invocations.length >= 2, `it outlived one invocation (${invocations.length})`);
      assert.ok(invocations.every((r) => r.failed === 0));
      const done = ((await redis.call("LRANGE", "backfill:done", 0, -1)) as string[]).map(Number);
      assert.deepEqual(done, upTo(ITEMS), "every item once, in order");
      assert.equal(await redis.call("EXISTS", `it-${jid}`), 0);
      console.log(`workerd: ${ITEMS} items in ${invocations.length} invocations of drain({ budgetMs: 300 })`);
    },
  );
});
