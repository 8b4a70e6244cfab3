/**
 * docs/features.md's edge backfill (Iterable jobs), for real: an iterable job bundled as an edge
 * app bundles it and run in workerd (Cloudflare's runtime) through
 * miniflare, over @upstash/redis and the Upstash REST gateway fixture in
 * front of a private redis-server. Each request is one cron invocation: a
 * `drain({ budgetMs: 300 })`. The job outlives many of them and does every
 * item exactly once.
 *
 * Node only: miniflare drives workerd from Node.
 */
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Transport } from "../src/transport/transport.ts";
import { runtimeName } from "./support/child.ts";
import { suiteEdge } from "./support/suite_edge.ts";
import { redisAvailable } from "./support/matrix.ts";
import { upTo } from "./support/iterable.ts";

const TOKEN = "iterable-edge-token";
const ITEMS = 400;
const skip = runtimeName !== "node"
  ? `miniflare drives workerd from Node (this is ${runtimeName})`
  : !redisAvailable() && "no redis";

const entry = `
import { createClient, defineIterableJob, drain, iterateRange } from "./mod.ts";
import { upstashTransport } from "./src/transport/adapters/upstash/upstash_transport.ts";
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
  const edge = suiteEdge({ token: TOKEN, app: { contents: entry } });
  // deno-lint-ignore no-explicit-any
  let mf: any;
  let redis: Transport;
  before(() => {
    mf = edge.workerd.mf;
    redis = edge.redis;
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
