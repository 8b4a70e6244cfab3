/**
 * What Redis still holds at the end of a chaos scenario: the dead set's
 * jids, and anything queued, held (by any owner, registered or not), in a
 * landing list, retrying or scheduled.
 */
import type { Transport } from "../../src/transport/transport.ts";
import { heldCount } from "../support/held.ts";
import { sleep } from "../bench/support.ts";
import type { ChaosRedis } from "./redis.ts";

/** The jids in the dead set. */
export async function deadSet(redis: ChaosRedis): Promise<string[]> {
  return jidsOf((await redis.callPatiently(10_000, "ZRANGE", "dead", 0, -1)) as string[]);
}

export const jidsOf = (raws: string[]) => raws.map((raw) => /"jid":"([^"]+)"/.exec(raw)?.[1] ?? raw.slice(0, 60));

/** The jids in the retry set. */
export async function retrySet(redis: ChaosRedis): Promise<string[]> {
  return jidsOf((await redis.callPatiently(10_000, "ZRANGE", "retry", 0, -1)) as string[]);
}

/** What is still in Redis besides the dead set (and retries a scenario expects), as text, or "" if nothing. */
export async function redisLeft(
  redis: ChaosRedis,
  transport: Transport,
  expectRetry: ReadonlySet<string> = new Set(),
): Promise<string> {
  const queued = Number(await redis.callPatiently(10_000, "LLEN", "queue:default"));
  const retry = expectRetry.size === 0
    ? Number(await redis.callPatiently(10_000, "ZCARD", "retry"))
    : (await retrySet(redis)).filter((jid) => !expectRetry.has(jid)).length;
  const schedule = Number(await redis.callPatiently(10_000, "ZCARD", "schedule"));
  let held = 0;
  const owners = new Set<string>();
  // Owners of held hashes and landing lists, registered or not: a job held
  // by nobody's registry entry is exactly what must not happen.
  const registry = (await redis.callPatiently(10_000, "HVALS", "edgekiq:inflight")) as string[];
  for (const owner of registry) owners.add(owner);
  for (const prefix of ["edgekiq:held:", "edgekiq:landing:"]) {
    let cursor = "0";
    do {
      const [next, found] = (await redis.callPatiently(10_000, "SCAN", cursor, "MATCH", `${prefix}*`)) as [
        string,
        string[],
      ];
      // heldCount() counts an owner's held hashes and landing lists, with or without each other.
      for (const key of found) owners.add(key.slice(prefix.length).split("|")[0]);
      cursor = next;
    } while (cursor !== "0");
  }
  for (const owner of owners) held += await heldCount(transport, owner);
  const parts = [["queued", queued], ["held", held], ["retry", retry], ["scheduled", schedule]] as const;
  return parts.filter(([, n]) => n > 0).map(([what, n]) => `${n} ${what}`).join(", ");
}

/** Waits until nothing is queued or held; returns what is left at the timeout, or "". */
export async function waitQuiet(
  redis: ChaosRedis,
  transport: Transport,
  timeoutMs: number,
  expectRetry?: ReadonlySet<string>,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = await redisLeft(redis, transport, expectRetry);
    if (!left || Date.now() > deadline) return left;
    await sleep(250);
  }
}
