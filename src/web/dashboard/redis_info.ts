/**
 * Facts about the Redis server for the Dashboard page, from one `INFO`.
 * Some hosted Redis services answer INFO partially or not at all: what is
 * missing is shown as unknown, never as an error.
 *
 * @module
 */
import type { Transport } from "../../transport/transport.ts";

/** What the Dashboard shows about Redis. */
export interface RedisFacts {
  /** `redis_version`. */
  version?: string;
  /** `uptime_in_seconds`. */
  uptimeSeconds?: number;
  /** `connected_clients`. */
  clients?: number;
  /** `used_memory_human`. */
  memory?: string;
  /** `used_memory_peak_human`. */
  peakMemory?: string;
  /** `maxmemory_policy` (edgekiq, like Sidekiq, wants `noeviction`). */
  maxmemoryPolicy?: string;
}

/**
 * Parses INFO's `key:value` lines.
 *
 * @example
 * ```ts
 * parseInfo("# Server\r\nredis_version:7.2.4\r\n"); // { redis_version: "7.2.4" }
 * ```
 */
export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) out[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return out;
}

/**
 * Reads INFO (one command); `null` when the server refuses it.
 *
 * @example
 * ```ts
 * (await redisFacts(transport))?.version; // "7.2.4"
 * ```
 */
export async function redisFacts(transport: Transport): Promise<RedisFacts | null> {
  let reply: unknown;
  try {
    reply = await transport.call("INFO");
  } catch {
    return null;
  }
  if (typeof reply !== "string") return null;
  const info = parseInfo(reply);
  const int = (key: string) => (info[key] !== undefined && /^\d+$/.test(info[key]) ? Number(info[key]) : undefined);
  return {
    version: info.redis_version,
    uptimeSeconds: int("uptime_in_seconds"),
    clients: int("connected_clients"),
    memory: info.used_memory_human,
    peakMemory: info.used_memory_peak_human,
    maxmemoryPolicy: info.maxmemory_policy,
  };
}
