/**
 * The uniqueness key of a job: its class, its queue and its args (or what
 * `unique.by` makes of them), as canonical JSON, hashed.
 *
 * @module
 */
import { sha256 } from "./sha256.ts";

/**
 * JSON with every object's keys sorted, at every depth, so equal data gives
 * equal text whatever order its keys were written in. Arrays keep their
 * order. The value must be JSON-native (checked before it gets here).
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] }); // '{"a":[2,{"c":4,"d":3}],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>;
    const fields: string[] = [];
    for (const key of Object.keys(o).sort()) {
      if (o[key] !== undefined) fields.push(`${JSON.stringify(key)}:${canonicalJson(o[key])}`);
    }
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * The lock name of a job: `<class>:<hex>`, the hex being the first 128 bits
 * of the SHA-256 of `[class, queue, keyPart]` in canonical JSON. The class
 * stays readable in the key (for SCAN and for people); the hash keeps it
 * short and free of whatever the args hold, and no args can be made to
 * collide with another job's.
 *
 * @example
 * ```ts
 * uniqueDigest("HardJob", "default", ["bob", 5]); // "HardJob:3f1c..." (32 hex digits)
 * ```
 */
export function uniqueDigest(className: string, queue: string, keyPart: unknown): string {
  const hash = sha256(canonicalJson([className, queue, keyPart]));
  let hex = "";
  for (let i = 0; i < 16; i++) hex += HEX[hash[i]];
  return `${className}:${hex}`;
}
