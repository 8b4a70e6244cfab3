/**
 * Bun: Bun.serve for the HTTP routes and a timer for the tick (or point an
 * external cron at POST /cron/tick and drop the timer).
 *
 * ```sh
 * UPSTASH_REDIS_REST_URL=... UPSTASH_REDIS_REST_TOKEN=... CRON_SECRET=... bun examples/edge-bun.ts
 * ```
 */
import { app, scheduled } from "./edge-worker.ts";

const server = Bun.serve({ port: Number(Bun.env.PORT ?? 3000), fetch: (request) => app.fetch(request) });
console.log(`listening on ${server.url}`);
setInterval(() => scheduled({}).catch((error) => console.error("tick failed", error)), 60_000);
