/**
 * Flow limits in workerd (Cloudflare's runtime) through miniflare, over
 * @upstash/redis and the Upstash REST gateway fixture in front of a private
 * redis-server: a job with a declared concurrency limit, one calling a
 * limiter with `within()`, and grouped pushes, all run by cron invocations
 * (`pollOnce` then `drain({ budgetMs })`); the limit holds, every job runs,
 * and a job deferred by its limit waits in the schedule set, not retried.
 *
 * Node only: miniflare drives workerd from Node.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { runtimeName } from "./support/child.ts";
import { suiteEdge } from "./support/suite_edge.ts";
import { redisAvailable } from "./support/matrix.ts";

const TOKEN = "limits-edge-token";
const skip = runtimeName !== "node"
  ? `miniflare drives workerd from Node (this is ${runtimeName})`
  : !redisAvailable() && "no redis";

const entry = `
import { createClient, defineJob, drain, pollOnce } from "./mod.ts";
import { flowLimits, Limiter } from "./src/features/mod.ts";
import { upstashTransport } from "./src/transport/adapters/upstash/upstash_transport.ts";
let running = 0;
let peak = 0;
// Grouped jobs in the order they started: two of a group may run at once, so the order of their writes proves nothing.
const started = [];
const Sync = defineJob({
  name: "Sync",
  limits: [{ concurrency: 2 }],
  async perform(ctx, n) {
    peak = Math.max(peak, ++running);
    await new Promise((r) => setTimeout(r, 20));
    running--;
    await ctx.transport.call("RPUSH", "edge:done", "sync " + n);
  },
});
const Call = defineJob({
  name: "Call",
  async perform(ctx, n) {
    await Limiter.window("edge-api", 3, "1s").within(ctx, () => ctx.transport.call("RPUSH", "edge:done", "call " + n));
  },
});
const Tenant = defineJob({
  name: "Tenant",
  perform(ctx, tenant, n) {
    started.push(tenant + " " + n);
    return ctx.transport.call("RPUSH", "edge:done", tenant + " " + n);
  },
});
const limits = flowLimits({ groupLookahead: 4 });
export default {
  async fetch(request, env) {
    const transport = upstashTransport({ url: env.URL, token: env.TOKEN });
    const client = createClient({ transport, features: [limits] });
    if (new URL(request.url).pathname === "/push") {
      await client.pushBulk(Sync, Array.from({ length: 8 }, (_, i) => [i]));
      await client.pushBulk(Call, Array.from({ length: 6 }, (_, i) => [i]));
      for (const tenant of ["a", "b", "c"]) await client.pushBulk(Tenant, [[tenant, 1], [tenant, 2]], { group: tenant });
      return Response.json({ ok: true });
    }
    await pollOnce({ client, features: [limits] });
    const result = await drain({ transport, jobs: [Sync, Call, Tenant], features: [limits], budgetMs: 1500, concurrency: 6 });
    return Response.json({ ...result, peak, started: started.splice(0) });
  },
};
`;

describe("flow limits in workerd over Upstash", { skip }, () => {
  const edge = suiteEdge({ token: TOKEN, app: { contents: entry } });

  it("declared and within() limits hold, grouped jobs run, everything runs across cron invocations", {
    timeout: 120_000,
  }, async () => {
    await (await edge.workerd.mf.dispatchFetch("http://edge.test/push")).json();
    let peak = 0;
    let failed = 0;
    const started: string[] = [];
    for (let i = 0; i < 60; i++) {
      const result = await (await edge.workerd.mf.dispatchFetch("http://edge.test/cron")).json();
      peak = Math.max(peak, result.peak);
      started.push(...result.started);
      failed += result.failed;
      if (Number(await edge.redis.call("LLEN", "edge:done")) === 20) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const done = (await edge.redis.call("LRANGE", "edge:done", 0, -1)) as string[];
    assert.equal(done.length, 20, `ran: ${done.join(", ")}`);
    assert.equal(failed, 0);
    assert.ok(peak <= 2, `declared concurrency 2: peak ${peak}`);
    assert.deepEqual(
      ["a", "b", "c"].map((g) => started.filter((d) => d.startsWith(g + " "))),
      [["a 1", "a 2"], ["b 1", "b 2"], ["c 1", "c 2"]],
      "FIFO in a group: each group's jobs started in the order pushed",
    );
    assert.equal(await edge.redis.call("ZCARD", "retry"), 0);
  });
});
