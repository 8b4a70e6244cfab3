/// <reference lib="deno.unstable" />
/**
 * Deno (and Deno Deploy): Deno.serve for the HTTP routes, Deno.cron for the tick.
 *
 * ```sh
 * UPSTASH_REDIS_REST_URL=... UPSTASH_REDIS_REST_TOKEN=... CRON_SECRET=... \
 *   deno run -A --unstable-cron examples/edge-deno.ts
 * ```
 */
import { app, scheduled } from "./edge-worker.ts";

Deno.serve({ port: Number(Deno.env.get("PORT") ?? 8000) }, (request) => app.fetch(request));
Deno.cron("edgekiq tick", "* * * * *", () => scheduled({}));
