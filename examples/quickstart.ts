/**
 * `npm start`: a worker and a client on the embedded memory transport, no
 * Redis needed. Pushes a few jobs (one scheduled, one that fails once), runs
 * them, and stops.
 */
import * as v from "valibot";
import { createClient, createWorker, defineJob, memoryTransport } from "../mod.ts";

const HardJob = defineJob({
  name: "HardJob",
  args: v.tuple([v.string(), v.number()]),
  async perform(ctx, name, count) {
    await new Promise((r) => setTimeout(r, 10 * count));
    ctx.logger.info(`worked hard for ${name}`, { count });
  },
});

let attempts = 0;
const Flaky = defineJob({
  name: "Flaky",
  retryIn: () => 1, // retry after 1 s instead of Sidekiq's 15+ s
  perform(ctx) {
    if (++attempts === 1) throw new Error("first try fails");
    ctx.logger.info("succeeded on retry", { retryCount: ctx.retryCount });
  },
});

const transport = memoryTransport();
const client = createClient({ transport });
await client.push(HardJob, ["bob", 5]);
await client.pushBulk(HardJob, [["ada", 1], ["grace", 2]]);
await client.push(HardJob, ["later", 1], { in: 2 });
await client.push(Flaky, []);

const worker = createWorker({ transport, jobs: [HardJob, Flaky], concurrency: 5, pollIntervalAverage: 0.5 });
await worker.run();
const deadline = Date.now() + 10_000;
while (Date.now() < deadline) {
  const [queued, scheduled, retries] = await transport.pipeline([["LLEN", "queue:default"], ["ZCARD", "schedule"], [
    "ZCARD",
    "retry",
  ]]);
  if (queued === 0 && scheduled === 0 && retries === 0 && attempts >= 2 && worker.running().length === 0) break;
  await new Promise((r) => setTimeout(r, 100));
}
await worker.stop();
