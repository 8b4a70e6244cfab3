/**
 * A job's `error_backtrace` for display: Sidekiq 7+'s deflated base64, or a
 * plain array (Sidekiq 6, edgekiq's older jobs). Decoding is bounded: a
 * hostile payload (a deflate bomb, a megabyte of lines) costs at most a
 * fixed amount of memory and shows a note instead.
 *
 * @module
 */

/** The most decompressed bytes read from one backtrace. */
export const MAX_BACKTRACE_BYTES = 256 * 1024;
/** The most lines shown. */
const MAX_LINES = 200;
/** The longest line shown. */
const MAX_LINE = 1_000;

/** What the job page shows: the lines, or why there are none; `null` when the job has no backtrace. */
export type BacktraceView = { lines: string[] } | { error: string } | null;

function clip(lines: unknown[]): { lines: string[] } {
  const out = lines.slice(0, MAX_LINES).map((l) => {
    const s = String(l);
    return s.length > MAX_LINE ? `${s.slice(0, MAX_LINE)}…` : s;
  });
  if (lines.length > MAX_LINES) out.push(`… ${lines.length - MAX_LINES} more lines`);
  return { lines: out };
}

async function inflate(base64: string): Promise<string> {
  const binary = atob(base64.replace(/\s+/g, ""));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate")).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_BACKTRACE_BYTES) {
      await reader.cancel();
      throw new RangeError("too large");
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) all.set(chunk, (at += chunk.length) - chunk.length);
  return new TextDecoder().decode(all);
}

/**
 * Decodes a backtrace for the job page; never throws.
 *
 * @example
 * ```ts
 * await readBacktrace(entry.get("error_backtrace")); // { lines: ["app.ts:3:9", ...] }
 * ```
 */
export async function readBacktrace(value: unknown): Promise<BacktraceView> {
  if (value === undefined || value === null || value === "") return null;
  if (Array.isArray(value)) return clip(value);
  if (typeof value !== "string") return { error: "The backtrace is neither a list nor a compressed string." };
  if (value.length > 4 * MAX_BACKTRACE_BYTES) return { error: "The backtrace is too large to show." };
  try {
    const parsed: unknown = JSON.parse(await inflate(value));
    return Array.isArray(parsed) ? clip(parsed) : { error: "The backtrace did not decode to a list of lines." };
  } catch (error) {
    return {
      error: error instanceof RangeError
        ? `The backtrace is larger than ${MAX_BACKTRACE_BYTES / 1024} KB once decompressed: not shown.`
        : "The backtrace could not be decoded.",
    };
  }
}
