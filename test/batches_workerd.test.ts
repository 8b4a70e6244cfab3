/**
 * A batch and a flow in workerd (Cloudflare's runtime) through miniflare,
 * over @upstash/redis and the Upstash REST gateway fixture in front of a
 * private redis-server: one request opens them, each later request is one
 * cron invocation (`drain({ budgetMs })`). The success callback runs once,
 * the flow's parent once with its children's values, and a batch job costs
 * under one extra billed command on average.
 *
 * Node only: miniflare drives workerd from Node.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { runtimeName } from "./support/child.ts";
import { suiteEdge } from "./support/suite_edge.ts";
import { redisAvailable } from "./support/matrix.ts";

const TOKEN = "batches-edge-token";
const JOBS = 200;
const skip = runtimeName !== "node"
  ? `miniflare drives workerd from Node (this is ${runtimeName})`
  : !redisAvailable() && "no redis";

const entry = `
import { createClient, defineJob, drain } from "./mod.ts";
import { batchJobs } from "./src/features/batches/mod.ts";
import { upstashTransport } from "./src/transport/adapters/upstash/upstash_transport.ts";
const batches = batchJobs();
const Part = defineJob({ name: "Part", perform: (ctx, n) => n * n });
const Done = defineJob({
  name: "Done",
  async perform(ctx, tag) { await ctx.transport.call("RPUSH", "edge:done", tag + " " + batches.callback(ctx).event); },
});
const Sum = defineJob({
  name: "Sum",
  async perform(ctx) {
    const children = await batches.childResults(ctx);
    await ctx.transport.call("RPUSH", "edge:done", "sum " + children.reduce((n, c) => n + c.value, 0));
  },
});
export default {
  async fetch(request, env) {
    const transport = upstashTransport({ url: env.URL, token: env.TOKEN });
    if (new URL(request.url).pathname === "/open") {
      const client = createClient({ transport, features: [batches] });
      const batch = batches.open(client, { callbacks: { success: [Done, ["batch"]] } });
      await batch.add((b) => b.pushBulk(Part, Array.from({ length: ${JOBS} }, (_, i) => [i])));
      const flow = await batches.flow(client, { job: [Sum, []], children: [1, 2, 3].map((n) => ({ job: [Part, [n]] })) });
      return Response.json({ bid: batch.bid, flow });
    }
    return Response.json(await drain({ transport, jobs: [Part, Done, Sum], features: [batches], budgetMs: 1000 }));
  },
};
`;

describe("a batch and a flow in workerd, across cron invocations", { skip }, () => {
  const edge = suiteEdge({ token: TOKEN, app: { contents: entry } });

  it(
    `${JOBS} batch jobs and a flow drained by drain() over Upstash: callbacks once`,
    { timeout: 120_000 },
    async () => {
      const { bid } = await (await edge.workerd.mf.dispatchFetch("http://edge.test/open")).json();
      const runs: Array<{ processed: number; commands: number; failed: number }> = [];
      for (let i = 0; i < 30; i++) {
        const result = await (await edge.workerd.mf.dispatchFetch("http://edge.test/cron")).json();
        runs.push(result);
        if (result.processed === 0) break;
      }
      const done = (await edge.redis.call("LRANGE", "edge:done", 0, -1)) as string[];
      assert.deepEqual([...done].sort(), ["batch success", "sum 14"]);
      assert.equal(await edge.redis.call("HGET", `edgekiq:batch:${bid}`, "count"), "0", "nothing left in the batch");
      const processed = runs.reduce((n, r) => n + r.processed, 0);
      const commands = runs.reduce((n, r) => n + r.commands, 0);
      assert.equal(processed, JOBS + 1 + 3 + 1);
      assert.ok(runs.every((r) => r.failed === 0));
      console.log(
        `workerd: ${processed} jobs (a batch of ${JOBS}, a flow of 3) in ${runs.length} invocations, ` +
          `${(commands / processed).toFixed(2)} billed commands per job`,
      );
    },
  );
});
