/**
 * Making outside text safe to print: job ids, class names, arguments and
 * error messages come from whoever wrote the payload, and may be huge or
 * carry terminal escapes. Log lines, CLI output, dashboards and error
 * messages pass such text through {@link sanitize} (escape and shorten) or
 * {@link truncate} (shorten only, for output that escapes on its own, such
 * as JSON).
 *
 * @module
 */

/** The default length {@link sanitize} and {@link truncate} keep: enough for any honest jid, class or queue. */
export const MAX_TEXT = 300;

/**
 * C0 and C1 control characters, DEL, and the Unicode format characters that
 * reorder or hide text (bidi overrides and isolates, zero-width marks, the
 * line and paragraph separators): everything a terminal or a reader could be
 * fooled by.
 */
// deno-lint-ignore no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
// deno-lint-ignore no-control-regex
const UNSAFE_TEST = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/**
 * Shortens `text` to at most `max` characters of the original, adding an
 * ellipsis and the original length (`abc… (1048576 chars)`). A surrogate
 * pair is never split.
 *
 * @example
 * ```ts
 * truncate("x".repeat(1000), 10); // "xxxxxxxxxx… (1000 chars)"
 * truncate("short");              // "short"
 * ```
 */
export function truncate(text: string, max: number = MAX_TEXT): string {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // a high surrogate: keep the pair whole or not at all
  return `${text.slice(0, end)}… (${text.length} chars)`;
}

/**
 * Makes outside text safe for a terminal or a plain-text log: shortens it
 * with {@link truncate}, then writes every control or invisible formatting
 * character as a visible escape (`\x1b`, `\n`, `\u202e`). Ordinary text,
 * accents and emoji included, is left as it is.
 *
 * @example
 * ```ts
 * sanitize("ok\u001b[2J");          // "ok\\x1b[2J"
 * sanitize("a".repeat(5000)).length; // about 320
 * ```
 */
export function sanitize(text: string, max: number = MAX_TEXT): string {
  const short = truncate(text, max);
  return UNSAFE_TEST.test(short) ? short.replace(UNSAFE, escapeChar) : short;
}

/**
 * Whether `text` holds a character {@link sanitize} would escape.
 *
 * @example
 * ```ts
 * hasUnsafeChars("tab\there"); // true
 * ```
 */
export function hasUnsafeChars(text: string): boolean {
  return UNSAFE_TEST.test(text);
}

const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/**
 * Escapes, in JSON text, the characters `JSON.stringify` leaves raw but a
 * terminal or reader could be fooled by (DEL, C1 controls, bidi and
 * invisible marks), as `\u009b` escapes: the JSON still parses to the same
 * value. (`JSON.stringify` already escapes C0 controls.)
 *
 * @example
 * ```ts
 * escapeJson(JSON.stringify({ m: "\u009b2J" })); // '{"m":"\\u009b2J"}'
 * ```
 */
export function escapeJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeChar(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}
