/**
 * A long-lived worker on Node, over TCP Redis with ioredis.
 *
 * ```sh
 * REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/node-worker.ts   # Ctrl-C (INT) or TERM stops it
 * ```
 */
import * as v from "valibot";
import { createClient, createWorker, defineJob } from "../mod.ts";
import { ioredisTransport } from "../src/transport/adapters/ioredis/ioredis_transport.ts"; // "edgekiq/ioredis" in your app

const transport = ioredisTransport({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });

const SendWelcome = defineJob({
  name: "SendWelcome",
  args: v.tuple([v.pipe(v.string(), v.email())]),
  async perform(ctx, email) {
    // A real job would call a mail API here, passing ctx.signal to fetch().
    ctx.logger.info("welcome mail sent", { email });
  },
});

// Something to do: one job now, one in two seconds.
const client = createClient({ transport });
await SendWelcome.performAsync(client, "ada@example.com");
await SendWelcome.performIn(client, 2, "grace@example.com");

const worker = createWorker({
  transport,
  jobs: [SendWelcome],
  queues: ["default"],
  concurrency: 5,
  pollIntervalAverage: 1, // check for due scheduled jobs every ~second (the default suits big clusters)
});
await worker.run(); // INT/TERM stop it: running jobs get 25 s to finish
await worker.stopped;
await transport.close(); // nothing left open: the process exits by itself
