/**
 * Constant-time comparison of a presented secret with the expected one, for
 * the cron routes' bearer token and the dashboard's basic auth.
 *
 * @module
 */

/**
 * Whether `given` equals `expected`, in time that depends on neither: both
 * sides are hashed first, so neither the content nor the length leaks. An
 * empty `given` never matches.
 *
 * @example
 * ```ts
 * await equalSecrets(headerToken, env.CRON_SECRET); // true or false
 * ```
 */
export async function equalSecrets(given: string, expected: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(given)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  let diff = given === "" ? 1 : 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}
