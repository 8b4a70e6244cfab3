/**
 * Random bytes for ids (jids, batch ids), drawn from a pool that one
 * `crypto.getRandomValues` call fills: a call costs about as much for 4 KB
 * as for 12 bytes, and a single push or a flow made ids one call at a time
 * (three calls per flow). Every byte is handed out once; the pool is filled
 * on first use, not at import (workerd refuses randomness at a module's top
 * level).
 *
 * @module
 */

/** Bytes one fill draws (a flow of ten children takes about 150). */
const POOL_BYTES = 4096;

let pool: Uint8Array<ArrayBuffer> | undefined;
let used = POOL_BYTES;

/**
 * Fills `target` with cryptographically random bytes, from the pool when it
 * is small, directly when it is larger than the pool.
 *
 * @example
 * ```ts
 * const bytes = fillRandom(new Uint8Array(12));
 * ```
 */
export function fillRandom(target: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  if (target.length > POOL_BYTES / 4) {
    // getRandomValues fills at most 65,536 bytes per call.
    for (let i = 0; i < target.length; i += 65536) crypto.getRandomValues(target.subarray(i, i + 65536));
    return target;
  }
  if (pool === undefined || used + target.length > POOL_BYTES) {
    pool = crypto.getRandomValues(new Uint8Array(POOL_BYTES));
    used = 0;
  }
  target.set(pool.subarray(used, used + target.length));
  // Zeroed as it is taken: a byte handed out is never read again, not even from memory.
  pool.fill(0, used, used + target.length);
  used += target.length;
  return target;
}
