/**
 * Bearer-token auth for the routes edgekiq serves to machines (the cron
 * routes, job events as Server-Sent Events): a shared secret compared in
 * constant time, or a verifier of the caller's own.
 *
 * @module
 */
import { equalSecrets } from "./secrets.ts";

/**
 * Who may call the routes: a shared secret sent as `Authorization: Bearer
 * <secret>` (compared in constant time), or a verifier given the request
 * and the platform's env bindings (`c.env`).
 */
export type CronAuth<E = unknown> = string | ((req: Request, env: E) => boolean | Promise<boolean>);

/**
 * Checks `Authorization: Bearer <secret>` in constant time (both sides are
 * hashed first, so neither the content nor the length leaks through timing).
 *
 * @example
 * ```ts
 * if (!(await verifyBearer(request, env.CRON_SECRET))) return new Response("no", { status: 401 });
 * ```
 */
export async function verifyBearer(req: Request, secret: string | undefined): Promise<boolean> {
  if (typeof secret !== "string" || secret === "") return false;
  const header = req.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return await equalSecrets(match ? match[1].trim() : "", secret);
}
