/**
 * `createClient` as the root entry point exports it: a {@link Client} whose
 * `push` type-checks the built-in features' push options.
 *
 * @module
 */
import { Client, type ClientOptions } from "../../client.ts";
import type { BuiltInPushOptions } from "./built_in.ts";

/**
 * Creates a {@link Client}.
 *
 * @example
 * ```ts
 * const client = createClient({ transport: memoryTransport(), features: [uniqueJobs()] });
 * await client.push(SyncUser, [42], { uniqueConflict: "replace" });
 * ```
 */
export function createClient(options: ClientOptions): Client<BuiltInPushOptions> {
  return new Client<BuiltInPushOptions>(options);
}
