/**
 * A long-lived worker on Bun, over Bun's built-in RedisClient (no npm Redis
 * client needed).
 *
 * ```sh
 * REDIS_URL=redis://127.0.0.1:6379 bun examples/bun-worker.ts   # Ctrl-C (INT) or TERM stops it
 * ```
 */
import { createClient, createWorker, defineJob } from "../mod.ts";
import { bunTransport } from "../src/transport/adapters/bun/bun_transport.ts"; // "edgekiq/bun" in your app

const transport = bunTransport({ url: Bun.env.REDIS_URL ?? "redis://127.0.0.1:6379" });

const CountWords = defineJob({
  name: "CountWords",
  queue: "text",
  perform(ctx, text: string) {
    ctx.logger.info("counted", { words: text.split(/\s+/).filter(Boolean).length });
  },
});

await CountWords.performAsync(createClient({ transport }), "the quick brown fox");

const worker = createWorker({ transport, jobs: [CountWords], queues: ["text"], concurrency: 10 });
await worker.run();
await worker.stopped; // after INT/TERM
await transport.close();
