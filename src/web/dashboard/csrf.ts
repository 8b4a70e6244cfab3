/**
 * Cross-site request forgery protection without tokens, as Sidekiq 8.1
 * does it: a state-changing request (anything but GET, HEAD, OPTIONS) is
 * accepted only when the browser says it came from this origin
 * (`Sec-Fetch-Site: same-origin`), or, from a browser too old to send that
 * header, when its `Origin` names this host. Anything else gets a 403.
 *
 * @module
 */

const SAFE: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/** What {@link checkSameOrigin} needs from a request. */
export interface OriginFacts {
  method: string;
  /** The request URL (its host is this server as the client addressed it). */
  url: string;
  /** Header lookup, case-insensitive. */
  header(name: string): string | undefined;
}

/**
 * Whether a request may change state. `allowedOrigins` adds origins (such
 * as `https://admin.example.com`) for proxies that rewrite the Host header.
 *
 * @example
 * ```ts
 * checkSameOrigin({ method: "POST", url: "https://a.example/jobs", header: (n) => headers.get(n) ?? undefined });
 * ```
 */
export function checkSameOrigin(request: OriginFacts, allowedOrigins: readonly string[] = []): boolean {
  if (SAFE.has(request.method.toUpperCase())) return true;
  const site = request.header("sec-fetch-site");
  if (site !== undefined) return site === "same-origin";
  const origin = request.header("origin");
  if (!origin || origin === "null") return false;
  if (allowedOrigins.includes(origin)) return true;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return false;
  }
  const host = request.header("host") ?? new URL(request.url).host;
  return originHost.toLowerCase() === host.toLowerCase();
}
