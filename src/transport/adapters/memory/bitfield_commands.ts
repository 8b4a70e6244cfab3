/**
 * BITFIELD and BITFIELD_RO: integer fields of any width at any bit offset of
 * a string, as Sidekiq's execution-time histograms use them (`OVERFLOW SAT
 * INCRBY u16 #3 1`). A memory string holds one byte per UTF-16 code unit
 * (0-255), which is how these commands write it; the arithmetic is BigInt so
 * i64 and u63 behave as Redis's do.
 *
 * @module
 */
import { ReplyError, SYNTAX, WRONGTYPE } from "./command_args.ts";
import type { CommandTable, Keyspace } from "./keyspace.ts";

type Overflow = "WRAP" | "SAT" | "FAIL";

interface Op {
  kind: "GET" | "SET" | "INCRBY";
  signed: boolean;
  bits: number;
  offset: number;
  value: bigint;
  overflow: Overflow;
}

const BAD_TYPE = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
const BAD_OFFSET = "ERR bit offset is not an integer or out of range";
const MAX_BITS = 2 ** 32 * 8;

function parseType(arg: string): [signed: boolean, bits: number] {
  const m = /^([iu])(\d+)$/i.exec(arg);
  const signed = m?.[1].toLowerCase() === "i";
  const bits = m ? Number(m[2]) : 0;
  if (!m || bits < 1 || bits > (signed ? 64 : 63)) throw new ReplyError(BAD_TYPE);
  return [signed, bits];
}

function parseOffset(arg: string, bits: number): number {
  const multiply = arg.startsWith("#");
  const text = multiply ? arg.slice(1) : arg;
  if (!/^\d+$/.test(text)) throw new ReplyError(BAD_OFFSET);
  const offset = Number(text) * (multiply ? bits : 1);
  if (offset + bits > MAX_BITS) throw new ReplyError(BAD_OFFSET);
  return offset;
}

function parseValue(arg: string): bigint {
  if (!/^-?\d+$/.test(arg)) throw new ReplyError("ERR value is not an integer or out of range");
  const v = BigInt(arg);
  if (v < -(2n ** 63n) || v >= 2n ** 63n) throw new ReplyError("ERR value is not an integer or out of range");
  return v;
}

function parse(a: string[], readOnly: boolean): Op[] {
  const ops: Op[] = [];
  let overflow: Overflow = "WRAP";
  for (let i = 1; i < a.length;) {
    const sub = a[i].toUpperCase();
    if (sub === "OVERFLOW") {
      const how = a[i + 1]?.toUpperCase();
      if (how !== "WRAP" && how !== "SAT" && how !== "FAIL") {
        throw new ReplyError("ERR Invalid OVERFLOW type specified");
      }
      overflow = how;
      i += 2;
      continue;
    }
    const arity = sub === "GET" ? 3 : sub === "SET" || sub === "INCRBY" ? 4 : 0;
    if (arity === 0 || i + arity > a.length) throw new ReplyError(SYNTAX);
    if (readOnly && sub !== "GET") throw new ReplyError("ERR BITFIELD_RO only supports the GET subcommand");
    const [signed, bits] = parseType(a[i + 1]);
    const offset = parseOffset(a[i + 2], bits);
    const value = arity === 4 ? parseValue(a[i + 3]) : 0n;
    ops.push({ kind: sub as Op["kind"], signed, bits, offset, value, overflow });
    i += arity;
  }
  return ops;
}

function read(bytes: Uint8Array, op: Op): bigint {
  let v = 0n;
  for (let b = op.offset; b < op.offset + op.bits; b++) {
    const byte = bytes[b >> 3] ?? 0;
    v = (v << 1n) | BigInt((byte >> (7 - (b & 7))) & 1);
  }
  // Two's complement: the top bit of a signed field is negative.
  if (op.signed && op.bits > 0 && v >> BigInt(op.bits - 1) === 1n) v -= 1n << BigInt(op.bits);
  return v;
}

function write(bytes: Uint8Array, op: Op, value: bigint): void {
  const mask = (1n << BigInt(op.bits)) - 1n;
  const raw = value & mask;
  for (let i = 0; i < op.bits; i++) {
    const b = op.offset + i;
    const bit = Number((raw >> BigInt(op.bits - 1 - i)) & 1n);
    bytes[b >> 3] = (bytes[b >> 3] & ~(1 << (7 - (b & 7)))) | (bit << (7 - (b & 7)));
  }
}

/** The value to store under the op's overflow rule, or null when FAIL refuses it. */
function fit(op: Op, value: bigint): bigint | null {
  const bits = BigInt(op.bits);
  const min = op.signed ? -(1n << (bits - 1n)) : 0n;
  const max = op.signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
  if (value >= min && value <= max) return value;
  if (op.overflow === "FAIL") return null;
  if (op.overflow === "SAT") return value < min ? min : max;
  const span = 1n << bits;
  const wrapped = ((value - min) % span + span) % span + min;
  return wrapped;
}

function bitfield(db: Keyspace, a: string[], readOnly: boolean): (number | null)[] {
  const ops = parse(a, readOnly);
  const entry = db.get(a[0]);
  if (entry && entry.type !== "string") throw new ReplyError(WRONGTYPE);
  const old = entry?.value ?? "";
  // A write grows the string to its highest written bit, as Redis does, even if OVERFLOW FAIL then refuses it.
  const writeEnd = ops.reduce((end, op) => (op.kind === "GET" ? end : Math.max(end, op.offset + op.bits)), 0);
  const bytes = new Uint8Array(Math.max(old.length, Math.ceil(writeEnd / 8)));
  for (let i = 0; i < old.length; i++) bytes[i] = old.charCodeAt(i) & 0xff;
  const replies = ops.map((op) => {
    const current = read(bytes, op);
    if (op.kind === "GET") return Number(current);
    const next = fit(op, op.kind === "SET" ? op.value : current + op.value);
    if (next === null) return null;
    write(bytes, op, next);
    return Number(op.kind === "SET" ? current : next);
  });
  if (writeEnd > 0) {
    let text = "";
    for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
    // Keeps the key's TTL, as Redis does for an in-place change.
    if (entry) entry.value = text;
    else db.setString(a[0], text);
  }
  return replies;
}

/**
 * The bitfield commands.
 *
 * @example
 * ```ts
 * const [, run] = bitfieldCommands.BITFIELD;
 * run(db, ["h", "OVERFLOW", "SAT", "INCRBY", "u16", "#3", "1"]); // [1]
 * ```
 */
export const bitfieldCommands: CommandTable = {
  BITFIELD: [-2, (db, a) => bitfield(db, a, false)],
  BITFIELD_RO: [-2, (db, a) => bitfield(db, a, true)],
};
