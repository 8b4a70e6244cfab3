/**
 * Test helpers for reliable fetch's held hashes: count what a process still
 * holds, and plant a dead process's held jobs for recovery tests.
 */
import { keys, keysFor } from "../../src/keys.ts";
import { BATCH_SPAN, QUEUES_FIELD } from "../../src/scripts/held.ts";
import type { Transport } from "../../src/transport/transport.ts";

const k = keys();

/** Every key matching `pattern`, by SCAN (on a cluster transport, every primary's). */
async function ownKeys(redis: Transport, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, page] = (await redis.call("SCAN", cursor, "MATCH", pattern)) as [string, string[]];
    found.push(...page);
    cursor = next;
  } while (cursor !== "0");
  return found;
}

/** Jobs (not bookkeeping fields) still held by `identity` in any capsule, landing lists included. */
export async function heldCount(redis: Transport, identity: string): Promise<number> {
  // The transport's own layout: on a cluster transport, the cluster one's names.
  const k = keysFor(redis, {});
  const registry = (await redis.call("HGETALL", k.heldRegistry)) as string[];
  const mine = new Set<string>();
  for (let i = 0; i < registry.length; i += 2) if (registry[i + 1] === identity) mine.add(registry[i]);
  // Unregistered hashes count too: a held job nobody recovers is exactly the bug to catch.
  const ownHeld = k.held(identity, "*");
  for (const key of await ownKeys(redis, ownHeld)) mine.add(key);
  let n = 0;
  for (const key of mine) {
    const flat = (await redis.call("HGETALL", key)) as string[];
    const fields = new Map<string, string>();
    for (let i = 0; i < flat.length; i += 2) fields.set(flat[i], flat[i + 1]);
    for (const [field, blob] of fields) {
      if (/^\d+:\d+$/.test(field) && !fields.has(field.split(":")[0])) {
        // A piece whose batch is gone: its jobs are owned by nobody.
        n += blob.split("\0").length;
        continue;
      }
      if (!/^\d+$/.test(field)) continue;
      // The first part is the batch's queue; its other pieces follow in <b>:2, <b>:3, ...
      const parts = blob.split("\0").slice(1);
      for (let piece = 2; fields.has(`${field}:${piece}`); piece++) {
        parts.push(...fields.get(`${field}:${piece}`)!.split("\0"));
      }
      const state = fields.get(`#a:${field}`) ?? "";
      n += parts.filter((_, i) => (state[i] ?? "0") === "0").length;
    }
  }
  for (const landing of await ownKeys(redis, k.landing(ownHeld, "*"))) {
    n += Number(await redis.call("LLEN", landing));
  }
  return n;
}

/**
 * Writes a dead process's held hash: the jobs as batch 1 from `queue`, the
 * first `started` of them marked as running, and registers it.
 */
export async function plantHeld(
  redis: Transport,
  options: { identity: string; queue?: string; capsule?: string; jobs: string[]; started?: number },
): Promise<string> {
  const held = k.held(options.identity, options.capsule ?? "default");
  const queue = options.queue ?? "default";
  const started = options.started ? BATCH_SPAN + options.started - 1 : 0;
  await redis.pipeline([
    ["HSET", held, 1, [queue, ...options.jobs].join("\0"), "#started", started, QUEUES_FIELD, queue],
    ["HSET", k.heldRegistry, held, options.identity],
  ]);
  return held;
}
