/**
 * Terminal cell widths, so a full-screen view lines its columns up and
 * never writes past the right edge (which would wrap and scroll the screen):
 * a CJK character or an emoji takes two cells, a combining mark none. The
 * East Asian Width table comes from `get-east-asian-width`; graphemes from
 * `Intl.Segmenter`. Text is expected already escaped (`sanitize`): no
 * control characters.
 *
 * @module
 */
import { eastAsianWidth } from "get-east-asian-width";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;
const EMOJI = /\p{Extended_Pictographic}/u;

/** Cells one grapheme takes. */
function cells(grapheme: string): number {
  if (ZERO_WIDTH.test(grapheme)) return 0;
  const code = grapheme.codePointAt(0)!;
  if (code < 0x7f) return 1;
  // Emoji with emoji presentation (or forced by VS16) are drawn two cells wide.
  if (EMOJI.test(grapheme) && (grapheme.includes("\ufe0f") || eastAsianWidth(code) === 2)) return 2;
  return eastAsianWidth(code);
}

/**
 * The cells `text` takes on a terminal.
 *
 * @example
 * ```ts
 * displayWidth("queue"); // 5
 * displayWidth("キュー"); // 6
 * ```
 */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += cells(segment);
  return width;
}

/**
 * `text` cut to at most `width` cells (with `…` when cut, never splitting
 * a grapheme), and, with `pad`, padded with spaces to exactly `width`.
 *
 * @example
 * ```ts
 * fitWidth("critical", 5);            // "crit…"
 * fitWidth("a", 3, { pad: true });    // "a  "
 * fitWidth("42", 5, { align: "right", pad: true }); // "   42"
 * ```
 */
export function fitWidth(
  text: string,
  width: number,
  options: { pad?: boolean; align?: "left" | "right" } = {},
): string {
  if (width <= 0) return "";
  let out = text;
  let used = displayWidth(text);
  if (used > width) {
    out = "";
    used = 0;
    for (const { segment } of graphemes.segment(text)) {
      const w = cells(segment);
      if (used + w > width - 1) break;
      out += segment;
      used += w;
    }
    out += "…";
    used += 1;
  }
  if (!options.pad || used >= width) return out;
  const fill = " ".repeat(width - used);
  return options.align === "right" ? fill + out : out + fill;
}
