/**
 * Random tokens: the CSP nonce of each response, and the one-time token an
 * "all" action's form carries so that replaying it does nothing.
 *
 * @module
 */

/**
 * 16 random bytes as unpadded base64url (22 characters).
 *
 * @example
 * ```ts
 * newToken(); // "q2Xw7cG0V1bq9d3Jr8mO0A"
 * ```
 */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Whether `value` has the shape {@link newToken} makes.
 *
 * @example
 * ```ts
 * isToken(newToken()); // true
 * ```
 */
export function isToken(value: unknown): value is string {
  return typeof value === "string" && /^[A-Za-z0-9_-]{22}$/.test(value);
}
