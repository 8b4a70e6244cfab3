/**
 * A short, stable, synchronous digest of a string (53 bits as 14 hex
 * characters, the cyrb53 mixing of two 32-bit FNV-style lanes). It names
 * schedules and tells schedule sets apart; it is not a cryptographic hash,
 * and nothing here needs one: a collision could only merge two schedule sets
 * of one owner, which a person would have to write on purpose.
 *
 * @module
 */

/**
 * Digests `text` into 14 lowercase hex characters.
 *
 * @example
 * ```ts
 * digest('["a",1]'); // "0f3c…" (14 chars), the same on every runtime
 * ```
 */
export function digest(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}
