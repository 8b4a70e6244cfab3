/**
 * Vercel Edge Functions: export the fetch handler. Save as `api/[[...route]].ts`
 * and schedule the tick in vercel.json; Vercel Cron sends `GET` with
 * `Authorization: Bearer $CRON_SECRET` when CRON_SECRET is set:
 *
 *   { "crons": [{ "path": "/api/cron/tick", "schedule": "* * * * *" }] }
 */
import { Hono } from "hono";
import { app } from "./edge-worker.ts";

export const config = { runtime: "edge" };

const api = new Hono().route("/api", app); // Vercel serves this file under /api
export default (request: Request) => api.fetch(request);
