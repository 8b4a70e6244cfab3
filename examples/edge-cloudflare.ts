/**
 * Cloudflare Workers: the module worker is edge-worker.ts as it is.
 *
 * wrangler.toml:
 *   main = "examples/edge-cloudflare.ts"
 *   compatibility_date = "2025-01-01"
 *   [triggers]
 *   crons = ["* * * * *"]
 * then `wrangler secret put UPSTASH_REDIS_REST_URL` (and _TOKEN, CRON_SECRET) and `wrangler deploy`.
 */
export { default } from "./edge-worker.ts";
