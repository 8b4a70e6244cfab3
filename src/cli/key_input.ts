/**
 * Keys from a terminal in raw mode: the bytes of one read split into key
 * names (`up`, `tab`, `ctrl-c`, or the character typed), for `edgekiq top`.
 *
 * @module
 */

/** Escape sequences xterm-like terminals send (normal and application cursor mode). */
const SEQUENCES: Record<string, string> = {
  "\x1b[A": "up",
  "\x1b[B": "down",
  "\x1b[C": "right",
  "\x1b[D": "left",
  "\x1bOA": "up",
  "\x1bOB": "down",
  "\x1bOC": "right",
  "\x1bOD": "left",
  "\x1b[Z": "backtab",
  "\x1b[5~": "pageup",
  "\x1b[6~": "pagedown",
  "\x1b[H": "home",
  "\x1b[F": "end",
  "\x1b[1~": "home",
  "\x1b[4~": "end",
};

const NAMED: Record<string, string> = { "\t": "tab", "\r": "enter", "\n": "enter", "\x03": "ctrl-c", "\x1b": "escape" };

/**
 * Splits raw input into keys. An escape sequence it does not know is
 * dropped whole (up to its final byte), never read as letters.
 *
 * @example
 * ```ts
 * parseKeys("\x1b[Bjq"); // ["down", "j", "q"]
 * ```
 */
export function parseKeys(data: string): string[] {
  const keys: string[] = [];
  let i = 0;
  while (i < data.length) {
    if (data[i] === "\x1b" && i + 1 < data.length) {
      const known = Object.keys(SEQUENCES).find((seq) => data.startsWith(seq, i));
      if (known) {
        keys.push(SEQUENCES[known]);
        i += known.length;
        continue;
      }
      // CSI/SS3 sequences end at a byte from @ to ~; skip the unknown one.
      const match = /^[[O][0-9;?]*[@-~]/.exec(data.slice(i + 1));
      if (match) {
        i += 1 + match[0].length;
        continue;
      }
    }
    const ch = String.fromCodePoint(data.codePointAt(i)!);
    keys.push(NAMED[ch] ?? ch);
    i += ch.length;
  }
  return keys;
}
