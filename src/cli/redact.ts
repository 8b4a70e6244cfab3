/**
 * Redis URLs carry passwords (`redis://:secret@host`, `rediss://default:secret@host`,
 * `redis://host?password=secret`). The CLI prints URLs in its banner and
 * errors, so every URL is shown through {@link redact}, and every line the
 * CLI writes passes through a {@link Redactor} that knows the URLs it was
 * given, in case a library's message repeats one.
 *
 * @module
 */

// Query parameters that carry credentials (ioredis reads `?password=`).
const SECRET_PARAM = /^(password|pass|pwd|token|secret|auth|key)$/i;

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
  if (u.password) u.password = "***";
  else if (u.username) u.username = "***";
  const names: string[] = [];
  u.searchParams.forEach((_, name) => void (SECRET_PARAM.test(name) && names.push(name)));
  for (const name of names) u.searchParams.set(name, "***");
  // URLSearchParams encodes "*" as "%2A"; keep the mask readable.
  return u.toString().replace(/%2A%2A%2A/g, "***");
}

/** The secrets inside a URL (password, lone user name, credential parameters), decoded and raw. */
function secretsOf(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const raw = [u.password || u.username];
  u.searchParams.forEach((value, name) => void (SECRET_PARAM.test(name) && raw.push(value)));
  const out = new Set<string>();
  for (const secret of raw) {
    if (!secret) continue;
    out.add(secret);
    try {
      out.add(decodeURIComponent(secret));
    } catch { /* not percent-encoded */ }
  }
  return [...out];
}

/**
 * Scrubs known URLs and their secrets out of any text before it is printed.
 *
 * @example
 * ```ts
 * const redactor = new Redactor();
 * redactor.add("redis://:hunter22@h:6379");
 * redactor.scrub("connect to redis://:hunter22@h:6379 failed"); // "connect to redis://:***@h:6379 failed"
 * ```
 */
export class Redactor {
  #urls = new Map<string, string>();
  #secrets = new Set<string>();

  /** Remembers a URL (valid or not) whose text must never be printed as is. */
  add(url: string | undefined): void {
    if (!url || this.#urls.has(url)) return;
    this.#urls.set(url, redact(url));
    // Very short secrets would garble unrelated text; the URL itself is still caught above.
    for (const secret of secretsOf(url)) if (secret.length >= 4) this.#secrets.add(secret);
  }

  /** `text` with every remembered URL redacted and every remembered secret masked. */
  scrub(text: string): string {
    let out = text;
    for (const [url, shown] of this.#urls) if (out.includes(url)) out = out.split(url).join(shown);
    for (const secret of this.#secrets) if (out.includes(secret)) out = out.split(secret).join("***");
    return out;
  }
}
