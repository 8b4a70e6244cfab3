/**
 * How a bad value is quoted in an error message ("... current value is
 * -1"): short, typed, and escaped, because error messages are logged and
 * stored in the dead set.
 *
 * @module
 */
import { sanitize } from "./sanitize.ts";

/**
 * Describes a value for an error message: short, with its type.
 *
 * @example
 * ```ts
 * describeValue(-1); // "-1"
 * ```
 */
export function describeValue(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = JSON.stringify(value.length > 60 ? value.slice(0, 57) + "..." : value);
  else if (value === undefined) text = "undefined";
  else if (typeof value === "number") text = String(value); // NaN and Infinity, not JSON's "null"
  else if (typeof value === "bigint") text = `${value}n`;
  else if (typeof value === "function") text = "a function";
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      // Cyclic, too deep, or a BigInt inside: say what kind of thing it is.
      text = Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : String(value);
    }
    if (text.length > 60) text = text.slice(0, 57) + "...";
  }
  // JSON escapes C0 controls; C1 and bidi marks still need it.
  return sanitize(text, 80);
}
