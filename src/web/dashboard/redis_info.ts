/**
 * Facts about the Redis server for the Dashboard page, from one `INFO`.
 * Some hosted Redis services answer INFO partially or not at all: what is
 * missing is shown as unknown, never as an error.
 *
 * @module
 */
import type { PrimaryReply, Transport } from "../../transport/transport.ts";
import { formatKib } from "./format.ts";

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
  /**
   * On a Redis Cluster, each primary's facts, in address order (the fields
   * above are then the cluster's: memory and connections summed, the
   * shortest uptime, the policy if every primary has the same).
   */
  primaries?: PrimaryFacts[];
}

/** One primary of a Redis Cluster, as the Dashboard shows it. */
export interface PrimaryFacts {
  /** `host:port`. */
  node: string;
  /** Whether it answered INFO. */
  up: boolean;
  version?: string;
  clients?: number;
  memory?: string;
  /** `used_memory`, bytes. */
  memoryBytes?: number;
  /** `instantaneous_ops_per_sec`. */
  opsPerSec?: number;
  maxmemoryPolicy?: string;
  uptimeSeconds?: number;
  peakMemoryBytes?: number;
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
  if (transport.eachPrimary) return clusterFacts(await transport.eachPrimary(["INFO"]));
  let reply: unknown;
  try {
    reply = await transport.call("INFO");
  } catch {
    return null;
  }
  if (typeof reply !== "string") return null;
  const info = parseInfo(reply);
  const int = intOf(info);
  return {
    version: info.redis_version,
    uptimeSeconds: int("uptime_in_seconds"),
    clients: int("connected_clients"),
    memory: info.used_memory_human,
    peakMemory: info.used_memory_peak_human,
    maxmemoryPolicy: info.maxmemory_policy,
  };
}

/** A whole-number INFO field, or undefined. */
function intOf(info: Record<string, string>): (key: string) => number | undefined {
  return (key) => (info[key] !== undefined && /^\d+$/.test(info[key]) ? Number(info[key]) : undefined);
}

/** The cluster's facts from each primary's INFO; `null` when none answered. */
function clusterFacts(replies: readonly PrimaryReply[]): RedisFacts | null {
  const primaries = replies.map(({ node, reply }): PrimaryFacts => {
    if (typeof reply !== "string") return { node, up: false };
    const info = parseInfo(reply);
    const int = intOf(info);
    const memoryBytes = int("used_memory");
    return {
      node,
      up: true,
      version: info.redis_version,
      clients: int("connected_clients"),
      // Spelled as the cluster's sum is, so the rows and the total read alike.
      memory: memoryBytes === undefined ? info.used_memory_human : formatKib(memoryBytes / 1024),
      memoryBytes,
      peakMemoryBytes: int("used_memory_peak"),
      opsPerSec: int("instantaneous_ops_per_sec"),
      maxmemoryPolicy: info.maxmemory_policy,
      uptimeSeconds: int("uptime_in_seconds"),
    };
  });
  const up = primaries.filter((p) => p.up);
  if (up.length === 0) return null;
  const total = (pick: (p: PrimaryFacts) => number | undefined) =>
    up.every((p) => pick(p) !== undefined) ? up.reduce((n, p) => n + pick(p)!, 0) : undefined;
  const same = <T>(pick: (p: PrimaryFacts) => T | undefined) =>
    up.every((p) => pick(p) === pick(up[0])) ? pick(up[0]) : undefined;
  const memory = total((p) => p.memoryBytes);
  const peak = total((p) => p.peakMemoryBytes);
  const uptimes = up.map((p) => p.uptimeSeconds).filter((u): u is number => u !== undefined);
  return {
    version: same((p) => p.version) ?? up.map((p) => p.version).filter(Boolean).join(", "),
    uptimeSeconds: uptimes.length ? Math.min(...uptimes) : undefined,
    clients: total((p) => p.clients),
    memory: memory === undefined ? undefined : formatKib(memory / 1024),
    peakMemory: peak === undefined ? undefined : formatKib(peak / 1024),
    maxmemoryPolicy: same((p) => p.maxmemoryPolicy) ?? (up.some((p) => p.maxmemoryPolicy) ? "mixed" : undefined),
    primaries,
  };
}
