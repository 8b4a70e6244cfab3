/**
 * Argument parsing and reply formatting shared by the memory commands, with
 * Redis's exact error wording so code written against the memory transport
 * sees the same failures it would see from a server.
 *
 * @module
 */

/**
 * An error reply, thrown with Redis's wording. The transport maps it to a
 * `TransportError` with `toTransportError`, which classifies by the prefix.
 *
 * @example
 * ```ts
 * throw new ReplyError(WRONGTYPE);
 * ```
 */
export class ReplyError extends Error {}

/**
 * Redis's reply to a command against a key of another type.
 *
 * @example
 * ```ts
 * if (entry.value.type !== "list") throw new ReplyError(WRONGTYPE);
 * ```
 */
export const WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";

/**
 * Redis's reply to an unknown option or a malformed option list.
 *
 * @example
 * ```ts
 * throw new ReplyError(SYNTAX);
 * ```
 */
export const SYNTAX = "ERR syntax error";

/**
 * Parses an integer argument as Redis's `string2ll` does: decimal, an optional
 * minus sign, no leading zeros, no spaces, no plus sign, within the range
 * JavaScript numbers hold exactly (Redis allows int64; beyond 2^53 the memory
 * transport refuses rather than silently rounding).
 *
 * @example
 * ```ts
 * int("42"); // 42
 * int("4.2"); // throws ERR value is not an integer or out of range
 * ```
 */
export function int(arg: string, message = "ERR value is not an integer or out of range"): number {
  if (!/^(?:0|-?[1-9]\d*)$/.test(arg)) throw new ReplyError(message);
  const n = Number(arg);
  if (!Number.isSafeInteger(n)) throw new ReplyError(message);
  return n;
}

/**
 * Parses a float argument as Redis's `strtod` checks do: `inf`, `+inf`,
 * `-inf` allowed, NaN and surrounding spaces refused.
 *
 * @example
 * ```ts
 * float("1.5"); // 1.5
 * float("-inf"); // -Infinity
 * ```
 */
export function float(arg: string, message = "ERR value is not a valid float"): number {
  const low = arg.toLowerCase();
  if (low === "inf" || low === "+inf" || low === "infinity" || low === "+infinity") return Infinity;
  if (low === "-inf" || low === "-infinity") return -Infinity;
  // Number() would accept "", " 1" and "0x10"; strtod-with-full-match refuses the first two.
  if (arg === "" || arg.trim() !== arg) throw new ReplyError(message);
  const n = Number(arg);
  if (Number.isNaN(n)) throw new ReplyError(message);
  return n;
}

/** A score range endpoint: `(` makes it exclusive. */
export interface Bound {
  /** The score. */
  value: number;
  /** Whether the endpoint itself is excluded. */
  exclusive: boolean;
}

/**
 * Parses a ZRANGEBYSCORE-style bound: `1.5`, `(1.5`, `-inf`, `+inf`.
 *
 * @example
 * ```ts
 * bound("(3"); // { value: 3, exclusive: true }
 * ```
 */
export function bound(arg: string): Bound {
  const exclusive = arg.startsWith("(");
  return { value: float(exclusive ? arg.slice(1) : arg, "ERR min or max is not a float"), exclusive };
}

/**
 * A score as Redis prints it: `inf`, `-inf`, integers without a fraction,
 * otherwise the shortest text that reads back to the same double (Redis 7.2's
 * fpconv), with C's two-digit exponent (`1e-07`).
 *
 * @example
 * ```ts
 * scoreText(3); // "3"
 * scoreText(1.5); // "1.5"
 * scoreText(-Infinity); // "-inf"
 * ```
 */
export function scoreText(n: number): string {
  if (n === Infinity) return "inf";
  if (n === -Infinity) return "-inf";
  return String(n).replace(/e([+-])(\d)$/, "e$10$2");
}

/**
 * Compiles a Redis glob (`*`, `?`, `[abc]`, `[^a-z]`, `\x`) to a RegExp, for
 * KEYS and the MATCH option of the SCAN family.
 *
 * @example
 * ```ts
 * glob("queue:*").test("queue:default"); // true
 * ```
 */
export function glob(pattern: string): RegExp {
  const esc = (c: string) => c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") re += "[\\s\\S]*";
    else if (c === "?") re += "[\\s\\S]";
    else if (c === "\\" && i + 1 < pattern.length) re += esc(pattern[++i]);
    else if (c === "[") {
      let j = i + 1;
      let cls = "";
      if (pattern[j] === "^") {
        cls += "^";
        j++;
      }
      for (; j < pattern.length && pattern[j] !== "]"; j++) {
        if (pattern[j] === "\\" && j + 1 < pattern.length) cls += esc(pattern[++j]);
        else if (pattern[j] === "-" && cls !== "" && cls !== "^" && pattern[j + 1] !== "]") cls += "-";
        else cls += esc(pattern[j]);
      }
      // An unterminated class matches the rest literally, as Redis's stringmatchlen does.
      if (j >= pattern.length) re += esc(pattern.slice(i));
      else re += cls === "" ? "(?!)" : `[${cls}]`;
      i = j >= pattern.length ? pattern.length : j;
    } else re += esc(c);
  }
  return new RegExp(re + "$");
}

/**
 * Resolves a Redis index range (negative counts from the end) against a
 * length: the inclusive `[start, stop]` to read, or undefined when empty.
 *
 * @example
 * ```ts
 * range(0, -1, 5); // [0, 4]
 * range(3, 1, 5); // undefined
 * ```
 */
export function range(start: number, stop: number, length: number): [number, number] | undefined {
  if (start < 0) start = Math.max(0, length + start);
  if (stop < 0) stop = length + stop;
  stop = Math.min(stop, length - 1);
  return start > stop ? undefined : [start, stop];
}
