/**
 * Redis URLs carry passwords (`redis://:secret@host`, `rediss://default:secret@host`,
 * `redis://host?password=secret`). The CLI prints URLs in its banner and
 * errors, so every URL is shown through {@link redact}, and every line the
 * CLI writes passes through a {@link Redactor} that knows the URLs it was
 * given, in case a library's message repeats one.
 *
 * @module
 */

import { redact, SECRET_PARAM } from "../transport/redact_url.ts";

export { redact };

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
    const shown = redact(url);
    // A URL with nothing to hide is left as it is: replacing it with itself
    // would match again inside the replacement (`http://h:6480` -> `http://h:6480//`).
    if (shown !== url) this.#urls.set(url, shown);
    // Very short secrets would garble unrelated text; the URL itself is still caught above.
    for (const secret of secretsOf(url)) if (secret.length >= 4) this.#secrets.add(secret);
  }

  /** Remembers a secret that is not in a URL (`web --password`): it is masked wherever it shows. */
  addSecret(secret: string | undefined): void {
    if (secret && secret.length >= 4) this.#secrets.add(secret);
  }

  /** `text` with every remembered URL redacted and every remembered secret masked. */
  scrub(text: string): string {
    let out = text;
    for (const [url, shown] of this.#urls) if (out.includes(url)) out = out.split(url).join(shown);
    for (const secret of this.#secrets) if (out.includes(secret)) out = out.split(secret).join("***");
    return out;
  }
}
