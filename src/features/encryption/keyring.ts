/**
 * The keys of encrypted arguments: versioned AES-256-GCM keys through Web
 * Crypto (`crypto.subtle`, the same on Node, Bun, Deno and workerd). The
 * newest version encrypts; every version given decrypts, so keys rotate by
 * adding a new version everywhere, then (once no job encrypted with an old
 * one is left) removing the old.
 *
 * The text an encrypted value becomes: `ek1:<version>:<base64 of a random
 * 12-byte IV, then the ciphertext with its 16-byte tag>`, with `ek1:<version>`
 * as the additional data (a version label swapped onto another key's text
 * fails to decrypt).
 *
 * @module
 */
import { ConfigError, EncryptionError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";

/**
 * A key: 32 random bytes, as a `Uint8Array`, as base64 text (standard or
 * URL-safe, padded or not), or as a Web Crypto `CryptoKey` for AES-GCM of
 * 256 bits (imported by you, from a KMS say).
 */
export type EncryptionKey = string | Uint8Array | CryptoKey;

/** What the encrypted text starts with: the envelope's format. */
const FORMAT = "ek1";
const TEXT = /^ek1:([1-9][0-9]{0,8}):([A-Za-z0-9+/]+={0,2})$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Versioned keys: encrypts with the newest, decrypts with any.
 *
 * @example
 * ```ts
 * const keyring = new Keyring({ 1: oldKeyBase64, 2: newKeyBase64 });
 * const text = await keyring.encrypt({ ssn: "123-45-6789" }); // "ek1:2:..."
 * await keyring.decrypt(text); // { ssn: "123-45-6789" }
 * ```
 */
export class Keyring {
  /** Every version given, ascending. */
  readonly versions: readonly number[];
  /** The version that encrypts: the newest. */
  readonly current: number;
  #keys = new Map<number, EncryptionKey>();
  #imported = new Map<number, Promise<CryptoKey>>();

  constructor(keys: Readonly<Record<number, EncryptionKey>>) {
    if (typeof keys !== "object" || keys === null || Array.isArray(keys) || Object.keys(keys).length === 0) {
      throw new ConfigError(
        "Cannot create encryptedArgs as 'keys' must be an object of versioned keys, { 1: key }: " +
          `current value is ${describeValue(keys)}`,
      );
    }
    for (const [label, key] of Object.entries(keys)) {
      if (!/^[1-9][0-9]{0,8}$/.test(label)) {
        throw new ConfigError(
          `Cannot create encryptedArgs as every key version must be a whole number from 1: got '${label.slice(0, 20)}'`,
        );
      }
      this.#keys.set(Number(label), checkKey(label, key));
    }
    this.versions = [...this.#keys.keys()].sort((a, b) => a - b);
    this.current = this.versions[this.versions.length - 1];
  }

  /** Encrypts a JSON value with the newest key. */
  async encrypt(value: unknown): Promise<string> {
    const version = this.current;
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: encoder.encode(`${FORMAT}:${version}`) },
        await this.#key(version),
        encoder.encode(JSON.stringify(value)),
      ),
    );
    const out = new Uint8Array(IV_BYTES + sealed.length);
    out.set(iv);
    out.set(sealed, IV_BYTES);
    return `${FORMAT}:${version}:${toBase64(out)}`;
  }

  /**
   * Decrypts what {@link Keyring.encrypt} made. Throws an `EncryptionError`
   * whose message says why (ending "as ..."), and never holds the text.
   */
  async decrypt(text: unknown): Promise<unknown> {
    const match = typeof text === "string" ? TEXT.exec(text) : null;
    if (!match) {
      throw new EncryptionError(
        `its last argument is not edgekiq-encrypted text ('${FORMAT}:<version>:<base64>'; it is ${kindOf(text)})`,
      );
    }
    const version = Number(match[1]);
    if (!this.#keys.has(version)) {
      throw new EncryptionError(
        `no key of version ${version} is configured here (this process has version${
          this.versions.length === 1 ? "" : "s"
        } ${this.versions.join(", ")}): give every worker a new key before any client encrypts with it`,
      );
    }
    const bytes = fromBase64(match[2]);
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new EncryptionError("its encrypted text is too short to be one");
    let plain: ArrayBuffer;
    try {
      plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES), additionalData: encoder.encode(`${FORMAT}:${version}`) },
        await this.#key(version),
        bytes.subarray(IV_BYTES),
      );
    } catch (error) {
      throw new EncryptionError(
        `the key of version ${version} does not decrypt it: it is not the key the job was encrypted with, ` +
          "or the text was altered",
        { cause: error },
      );
    }
    try {
      return JSON.parse(decoder.decode(plain));
    } catch (error) {
      throw new EncryptionError("its decrypted last argument is not JSON", { cause: error });
    }
  }

  #key(version: number): Promise<CryptoKey> {
    let imported = this.#imported.get(version);
    if (!imported) {
      const key = this.#keys.get(version)!;
      imported = typeof key === "object" && !(key instanceof Uint8Array)
        ? Promise.resolve(key)
        : crypto.subtle.importKey("raw", bytesOf(key), "AES-GCM", false, ["encrypt", "decrypt"]);
      this.#imported.set(version, imported);
    }
    return imported;
  }
}

/** Checks one key (its length, or a CryptoKey's algorithm), without ever showing it. */
function checkKey(label: string, key: unknown): EncryptionKey {
  const fail = (what: string) => new ConfigError(`Cannot create encryptedArgs as key ${label} ${what}`);
  if (typeof key === "string" || key instanceof Uint8Array) {
    let bytes: Uint8Array;
    try {
      bytes = bytesOf(key);
    } catch {
      throw fail("is not base64 text (the key itself is not shown)");
    }
    if (bytes.length !== 32) throw fail(`must be 32 bytes (AES-256): it is ${bytes.length}`);
    return key;
  }
  const algorithm = (key as CryptoKey | null)?.algorithm as { name?: unknown; length?: unknown } | undefined;
  if (typeof key === "object" && key !== null && algorithm && Array.isArray((key as CryptoKey).usages)) {
    if (algorithm.name !== "AES-GCM" || algorithm.length !== 256) {
      throw fail(`must be an AES-GCM key of 256 bits: it is ${String(algorithm.name)} of ${String(algorithm.length)}`);
    }
    if (!(key as CryptoKey).usages.includes("decrypt")) throw fail("must allow 'decrypt' (and 'encrypt' if newest)");
    return key as CryptoKey;
  }
  throw fail(`must be 32 bytes, base64 text of them, or a CryptoKey: it is ${kindOf(key)}`);
}

/** A key's bytes (a copy when given as bytes, so it cannot change underneath). */
function bytesOf(key: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (key instanceof Uint8Array) return new Uint8Array(key);
  const standard = key.trim().replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/]*$/.test(standard)) throw new Error("not base64");
  return fromBase64(standard + "=".repeat((4 - (standard.length % 4)) % 4));
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** What a value is, without showing it (it may be a secret). */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Uint8Array) return "a Uint8Array";
  return `a ${typeof value}`;
}
