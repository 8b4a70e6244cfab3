/**
 * The dashboard's door: the `auth` hook runs before every route (pages,
 * actions, `/stats`, assets), and a helper for HTTP basic auth.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { equalSecrets } from "../secrets.ts";
import type { DashboardEnv } from "./view.ts";

/**
 * Decides whether a request may see the dashboard: `true` lets it in;
 * anything else answers 401. It sees the whole hono context: headers, the
 * platform's bindings (`c.env`), cookies.
 */
export type DashboardAuth<E extends object = Record<string, unknown>> = (
  c: Context<DashboardEnv<E>>,
) => boolean | Promise<boolean>;

/** How {@link authGate} answers a refusal or a hook that threw. */
export type Deny = (c: Context<DashboardEnv>, status: 401 | 500, message: string) => Response | Promise<Response>;

/**
 * The middleware running `auth` first. A hook that throws gets a generic
 * 500 (its message goes to `report`, never to the unauthenticated caller).
 * `challenge` is the `WWW-Authenticate` value sent with a 401 (a browser
 * shows its login box for `Basic`), or `null` for none.
 *
 * @example
 * ```ts
 * app.use("*", authGate(options.auth, { challenge: 'Basic realm="edgekiq"', report, deny }));
 * ```
 */
export function authGate<E extends object>(
  auth: DashboardAuth<E>,
  options: { challenge: string | null; report: (error: unknown, context: Record<string, unknown>) => void; deny: Deny },
): MiddlewareHandler<DashboardEnv<E>> {
  return async (c, next) => {
    let ok: unknown;
    try {
      ok = await auth(c);
    } catch (error) {
      options.report(error, { context: `dashboard auth ${c.req.method} ${c.req.path}` });
      return options.deny(c as unknown as Context<DashboardEnv>, 500, "The dashboard could not check who you are.");
    }
    if (ok !== true) {
      const res = await options.deny(c as unknown as Context<DashboardEnv>, 401, "Sign in to see the dashboard.");
      if (options.challenge) res.headers.set("WWW-Authenticate", options.challenge);
      return res;
    }
    await next();
  };
}

/**
 * Checks HTTP basic credentials in constant time. Pair it with the default
 * `Basic` challenge so browsers prompt for them.
 *
 * @example
 * ```ts
 * dashboard({ transport, auth: (c) => verifyBasic(c.req.raw, "admin", c.env.DASHBOARD_PASSWORD) });
 * ```
 */
export async function verifyBasic(req: Request, username: string, password: string | undefined): Promise<boolean> {
  if (typeof password !== "string" || password === "") return false;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.get("authorization") ?? "");
  let user = "";
  let pass = "";
  if (match) {
    try {
      const decoded = new TextDecoder().decode(Uint8Array.from(atob(match[1]), (ch) => ch.charCodeAt(0)));
      const colon = decoded.indexOf(":");
      if (colon >= 0) [user, pass] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
    } catch { /* not base64: no credentials */ }
  }
  const [userOk, passOk] = await Promise.all([equalSecrets(user, username), equalSecrets(pass, password)]);
  return userOk && passOk;
}
