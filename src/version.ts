/**
 * edgekiq's version, written into every process's heartbeat `info`.
 *
 * @module
 */

/** The package version. Kept equal to package.json and deno.json by a test. */
export const VERSION = "0.1.0";
