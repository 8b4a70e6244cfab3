/**
 * The SCAN family's cursor and options. The memory transport answers every
 * scan in one page (cursor "0"): Redis allows it (COUNT is a hint, and small
 * sets, hashes and sorted sets are always answered whole), and it keeps
 * Redis's real guarantee, that an element present for the whole scan is
 * returned, without tracking cursors across changes.
 *
 * @module
 */
import type { RedisReply } from "../../transport.ts";
import { glob, int, ReplyError, SYNTAX } from "./command_args.ts";

/**
 * Parsed SCAN options.
 *
 * @example
 * ```ts
 * const o: ScanOptions = { match: /^a/, type: "list" };
 * ```
 */
export interface ScanOptions {
  /** MATCH pattern. */
  match?: RegExp;
  /** TYPE filter (SCAN only). */
  type?: string;
}

/**
 * Parses `cursor [MATCH pattern] [COUNT n] [TYPE t]` starting at `a[from]`.
 *
 * @example
 * ```ts
 * scanOptions(["0", "MATCH", "q:*"], 0, false); // { match: /^q:.*$/ }
 * ```
 */
export function scanOptions(a: string[], from: number, allowType: boolean): ScanOptions {
  if (!/^\d+$/.test(a[from])) throw new ReplyError("ERR invalid cursor");
  const options: ScanOptions = {};
  for (let i = from + 1; i < a.length; i += 2) {
    const o = a[i].toUpperCase();
    if (i + 1 >= a.length) throw new ReplyError(SYNTAX);
    if (o === "MATCH") options.match = glob(a[i + 1]);
    else if (o === "COUNT") {
      if (int(a[i + 1]) < 1) throw new ReplyError(SYNTAX);
    } else if (o === "TYPE" && allowType) options.type = a[i + 1].toLowerCase();
    else throw new ReplyError(SYNTAX);
  }
  return options;
}

/**
 * The reply `[cursor, items]` for a scan over `names`; `pair` adds each
 * name's value (HSCAN, ZSCAN). A non-zero cursor means a finished scan.
 *
 * @example
 * ```ts
 * scanReply(["a", "b"], ["0"], 0); // ["0", ["a", "b"]]
 * ```
 */
export function scanReply(
  names: Iterable<string>,
  a: string[],
  from: number,
  pair?: (name: string) => string,
): RedisReply {
  const { match } = scanOptions(a, from, false);
  const out: string[] = [];
  if (a[from] !== "0") return ["0", out];
  for (const name of names) {
    if (match && !match.test(name)) continue;
    out.push(name);
    if (pair) out.push(pair(name));
  }
  return ["0", out];
}
