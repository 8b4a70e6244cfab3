/**
 * Text from Redis (queue names, values) or from a user's module (error
 * messages) is printed to a terminal: control characters could move the
 * cursor, rewrite earlier lines or set the window title, and a 1 MiB name
 * would flood the screen. {@link printable} escapes and truncates it.
 *
 * @module
 */

// C0 and C1 controls, DEL, line/paragraph separators and the bidi overrides
// that can make text read differently from what it is.
// deno-lint-ignore no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Escapes control characters (`\x1b` -> `\x1b` as four visible characters)
 * and truncates to `max` characters, saying how much was cut.
 *
 * @example
 * ```ts
 * printable("evil\x1b[2Jqueue");   // "evil\\x1b[2Jqueue"
 * printable("a".repeat(500), 10); // "aaaaaaaaaa… (490 more characters)"
 * ```
 */
export function printable(text: string, max = 200): string {
  const cut = text.length > max ? text.slice(0, max) : text;
  const escaped = cut.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
  return text.length > max ? `${escaped}… (${text.length - max} more characters)` : escaped;
}
