/**
 * Error backtraces as Sidekiq 7.2+ stores them: the lines as a JSON array,
 * zlib-deflated, strict base64. `CompressionStream("deflate")` is the zlib
 * format, so this stays web-standard.
 *
 * @module
 */

/**
 * Compresses backtrace lines for `error_backtrace`.
 *
 * @example
 * ```ts
 * payload.error_backtrace = await compressBacktrace(["at perform (jobs.ts:3:9)"]);
 * ```
 */
export async function compressBacktrace(lines: readonly string[]): Promise<string> {
  const input = new Blob([JSON.stringify(lines)]).stream().pipeThrough(new CompressionStream("deflate"));
  const bytes = new Uint8Array(await new Response(input).arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Reads an `error_backtrace` back: the compressed form of Sidekiq 6.x/7.x
 * (base64 with or without line breaks) or a plain JSON array (Sidekiq 5).
 *
 * @example
 * ```ts
 * const lines = await decompressBacktrace(payload.error_backtrace);
 * ```
 */
export async function decompressBacktrace(value: unknown): Promise<string[]> {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== "string") return [];
  const binary = atob(value.replace(/\s+/g, ""));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const output = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(output).text());
}

/**
 * An error's stack as lines, without the leading `Name: message` line.
 *
 * @example
 * ```ts
 * backtraceLines(new Error("x")); // ["at ...", ...]
 * ```
 */
export function backtraceLines(error: unknown): string[] {
  const stack = error instanceof Error && typeof error.stack === "string" ? error.stack : "";
  return stack.split("\n").slice(1).map((l) => l.trim()).filter(Boolean);
}
