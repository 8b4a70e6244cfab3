/**
 * A Redis URL as it may be shown: credentials masked. The CLI prints URLs
 * through it, and each transport names its server with it
 * (`Transport.endpoint`, which the dashboard's footer shows).
 *
 * @module
 */

// Query parameters that carry credentials (ioredis reads `?password=`).
export const SECRET_PARAM = /^(password|pass|pwd|token|secret|auth|key)$/i;

/**
 * Hides a URL's credentials: the password, a lone user name (some write the
 * password there), and credential-like query parameters. Text that is not a
 * URL is not shown at all: it may be a mistyped URL holding a password.
 *
 * @example
 * ```ts
 * redact("redis://user:pw@localhost:6379/0");   // "redis://user:***@localhost:6379/0"
 * redact("redis://h:6379?password=pw&db=1");    // "redis://h:6379?password=***&db=1"
 * redact("redis//:pw@h");                       // "<not a valid URL>"
 * ```
 */
export function redact(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "<not a valid URL>";
  }
  const names: string[] = [];
  u.searchParams.forEach((_, name) => void (SECRET_PARAM.test(name) && names.push(name)));
  // Nothing to hide: shown as given, not as URL normalises it
  // (`http://h:6480` would come back as `http://h:6480/`).
  if (!u.password && !u.username && names.length === 0) return url;
  if (u.password) u.password = "***";
  else if (u.username) u.username = "***";
  for (const name of names) u.searchParams.set(name, "***");
  // URLSearchParams encodes "*" as "%2A"; keep the mask readable.
  let shown = u.toString().replace(/%2A%2A%2A/g, "***");
  if (u.pathname === "/" && !u.search && !u.hash && !/\/$/.test(url)) shown = shown.replace(/\/$/, "");
  return shown;
}
