/**
 * Test helpers for reliable fetch's held hashes: count what a process still
 * holds, and plant a dead process's held jobs for recovery tests.
 */
import { keys } from "../../src/keys.ts";
import { BATCH_SPAN } from "../../src/scripts/held.ts";
import type { Transport } from "../../src/transport/transport.ts";

const k = keys();

/** Jobs (not bookkeeping fields) still held by `identity` in any capsule and queue, landing lists included. */
export async function heldCount(redis: Transport, identity: string): Promise<number> {
  const registry = (await redis.call("HGETALL", k.inflightRegistry)) as string[];
  const mine = new Set<string>();
  for (let i = 0; i < registry.length; i += 2) if (registry[i + 1] === identity) mine.add(registry[i]);
  // Unregistered hashes count too: a held job nobody recovers is exactly the bug to catch.
  let cursor = "0";
  do {
    const [next, found] = (await redis.call("SCAN", cursor, "MATCH", `edgekiq:held:${identity}|*`)) as [
      string,
      string[],
    ];
    for (const key of found) mine.add(key);
    cursor = next;
  } while (cursor !== "0");
  let n = 0;
  for (const key of mine) {
    const flat = (await redis.call("HGETALL", key)) as string[];
    const fields = new Map<string, string>();
    for (let i = 0; i < flat.length; i += 2) fields.set(flat[i], flat[i + 1]);
    for (const [field, blob] of fields) {
      if (!/^\d+$/.test(field)) continue;
      const state = fields.get(`#a:${field}`) ?? "";
      n += blob.split("\0").filter((_, i) => (state[i] ?? "0") === "0").length;
    }
    n += Number(await redis.call("LLEN", k.landing(key)));
  }
  return n;
}

/**
 * Writes a dead process's held hash: the jobs as batch 1, the first
 * `started` of them marked as running, and registers it.
 */
export async function plantHeld(
  redis: Transport,
  options: { identity: string; queue?: string; capsule?: string; jobs: string[]; started?: number },
): Promise<string> {
  const held = k.held(options.identity, options.capsule ?? "default", options.queue ?? "default");
  const started = options.started ? BATCH_SPAN + options.started - 1 : 0;
  await redis.pipeline([
    ["HSET", held, 1, options.jobs.join("\0"), "#started", started],
    ["HSET", k.inflightRegistry, held, options.identity],
  ]);
  return held;
}
