/**
 * Security headers on every dashboard response: a Content-Security-Policy
 * with a fresh nonce per request (scripts and stylesheets run only with it;
 * no inline handlers or styles can), `X-Content-Type-Options: nosniff`,
 * `Cache-Control: private, no-store` (pages hold job data; assets set their
 * own), framing by the same origin only, and no referrer to other sites.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import type { DashboardEnv } from "./view.ts";
import { newToken } from "./token.ts";

/**
 * The CSP for a page rendered with `nonce`.
 *
 * @example
 * ```ts
 * contentSecurityPolicy("abc"); // "default-src 'none'; script-src 'nonce-abc'; ..."
 * ```
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'self'",
  ].join("; ");
}

/**
 * The middleware: sets `nonce` for the page, then the headers on whatever
 * response comes back (pages, JSON, errors, redirects, assets).
 *
 * @example
 * ```ts
 * app.use("*", securityHeaders());
 * ```
 */
export function securityHeaders(): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const nonce = newToken();
    c.set("nonce", nonce);
    await next();
    const headers = c.res.headers;
    headers.set("Content-Security-Policy", contentSecurityPolicy(nonce));
    headers.set("X-Content-Type-Options", "nosniff");
    headers.set("X-Frame-Options", "SAMEORIGIN");
    headers.set("Referrer-Policy", "same-origin");
    if (!headers.has("Cache-Control")) headers.set("Cache-Control", "private, no-store");
  };
}
