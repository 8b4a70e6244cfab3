/**
 * A long-lived worker on Deno. edgekiq listens for INT/TERM (stop), TSTP
 * (quiet: finish running jobs, fetch no more) and TTIN (log running jobs)
 * through Deno.addSignalListener; this example adds SIGHUP as "stop" too.
 *
 * ```sh
 * REDIS_URL=redis://127.0.0.1:6379 deno run -A examples/deno-worker.ts
 * kill -TSTP <pid>   # quiet
 * kill -TERM <pid>   # stop
 * ```
 */
import { createClient, createWorker, defineJob } from "../mod.ts";
import { ioredisTransport } from "../src/transport/adapters/ioredis/ioredis_transport.ts"; // "@edgekiq/edgekiq/ioredis" from JSR

const transport = ioredisTransport({ url: Deno.env.get("REDIS_URL") ?? "redis://127.0.0.1:6379" });

const Ping = defineJob({
  name: "Ping",
  perform(ctx, host: string) {
    ctx.logger.info("pinged", { host });
  },
});

await Ping.performAsync(createClient({ transport }), "example.com");

const worker = createWorker({ transport, jobs: [Ping] });
const stopOnHangup = () => void worker.stop();
Deno.addSignalListener("SIGHUP", stopOnHangup);
worker.on("exit", () => Deno.removeSignalListener("SIGHUP", stopOnHangup));

await worker.run();
await worker.stopped;
await transport.close();
