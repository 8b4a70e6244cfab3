/**
 * Redis Cluster's key-to-slot rule: CRC16 (XMODEM) of the key, or of its hash
 * tag (the text between the first `{` and the next `}`, when not empty),
 * modulo 16,384. Keys with the same tag always share a slot, which is what
 * lets a script or a MULTI touch several of them on a cluster.
 *
 * @module
 */

const TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  TABLE[i] = crc & 0xffff;
}

const encoder = new TextEncoder();

/**
 * The part of a key that decides its slot: its hash tag, or the whole key.
 *
 * @example
 * ```ts
 * hashTagOf("{app}:queue:default"); // "app"
 * hashTagOf("queue:default"); // "queue:default"
 * hashTagOf("{}:x"); // "{}:x" (an empty tag does not count)
 * ```
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf("{");
  if (open < 0) return key;
  const close = key.indexOf("}", open + 1);
  if (close < 0 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

/**
 * The cluster slot (0..16383) a key lives in, as `CLUSTER KEYSLOT` computes it.
 *
 * @example
 * ```ts
 * keySlot("foo"); // 12182
 * keySlot("{user1000}.following") === keySlot("{user1000}.followers"); // true
 * ```
 */
export function keySlot(key: string): number {
  let crc = 0;
  for (const byte of encoder.encode(hashTagOf(key))) crc = ((crc << 8) ^ TABLE[((crc >> 8) ^ byte) & 0xff]) & 0xffff;
  return crc % 16384;
}
