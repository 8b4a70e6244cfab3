/**
 * Architecture check for the cluster key layout: every script's KEYS, every
 * MULTI and every multi-key command that a broad workload sends (push, fetch,
 * ack, retry, death, schedule, promotion, recovery, the admin API's moves,
 * unique jobs, batches, periodic jobs, pause) lie in one Redis Cluster slot.
 * It runs on the memory transport (fast, no cluster needed) behind a wrapper
 * that computes each key's CRC16 slot, so a script added later with a key
 * outside the namespace's hash tag fails here before it meets CROSSSLOT on a
 * real cluster.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, type Transport } from "../mod.ts";
import { DeadSet, Queue, RetrySet } from "../src/api/mod.ts";
import { batchJobs } from "../src/features/batches/mod.ts";
import { periodicJobs, uniqueJobs } from "../src/features/mod.ts";
import { keySlot } from "../src/key_slot.ts";
import { memoryTransport } from "../src/transport/adapters/memory/memory_transport.ts";
import type { Command } from "../src/transport/transport.ts";
import { waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

/** Commands whose arguments are all keys, or whose first two are. */
const ALL_KEYS = new Set(["DEL", "UNLINK", "EXISTS", "MGET", "SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE", "TOUCH"]);
const TWO_KEYS = new Set(["LMOVE", "RPOPLPUSH", "SMOVE", "RENAME", "RENAMENX", "BLMOVE", "BRPOPLPUSH", "COPY"]);

function keysOf([name, ...args]: Command): string[] {
  const upper = name.toUpperCase();
  if (ALL_KEYS.has(upper)) return args.map(String);
  if (TWO_KEYS.has(upper)) return args.slice(0, 2).map(String);
  return [];
}

/** The memory transport in the cluster layout, recording every request that spans more than one slot. */
function slotChecked(): { transport: Transport; crossings: string[]; scripts: Set<string> } {
  const inner = memoryTransport();
  const crossings: string[] = [];
  const scripts = new Set<string>();
  const check = (what: string, keys: readonly string[]) => {
    const slots = new Set(keys.map(keySlot));
    if (slots.size > 1) crossings.push(`${what}: ${keys.join(" ")}`);
  };
  const transport: Transport = {
    kind: "memory",
    keyspace: "cluster",
    blocking: inner.blocking,
    ordered: inner.ordered,
    counters: inner.counters,
    call(command, ...args) {
      check(command, keysOf([command, ...args]));
      return inner.call(command, ...args);
    },
    block(command, options) {
      check(command[0], keysOf(command));
      return inner.block(command, options);
    },
    pipeline(commands, options) {
      if (options?.atomic) check("MULTI", commands.flatMap((c) => (c[1] === undefined ? [] : [String(c[1])])));
      for (const c of commands) check(c[0], keysOf(c));
      return inner.pipeline(commands, options);
    },
    script(script, keys, args) {
      scripts.add(script.name);
      check(`script ${script.name}`, keys);
      return inner.script(script, keys, args);
    },
    close: () => inner.close(),
  };
  return { transport, crossings, scripts };
}

describe("cluster key layout", () => {
  it("keeps every script, MULTI and multi-key command of a broad workload in one slot", async () => {
    const { transport, crossings, scripts } = slotChecked();
    const ran: number[] = [];
    const Work = defineJob({
      name: "Work",
      retry: 1,
      retryIn: () => 0.05,
      perform(_ctx, n: number) {
        if (n < 0) throw new Error("always fails");
        ran.push(n);
      },
    });
    const Once = defineJob({ name: "Once", unique: { for: 60 }, perform(_ctx, _n: number) {} });
    const Done = defineJob({ name: "Done", perform() {} });
    const unique = uniqueJobs();
    const batches = batchJobs();
    const client = createClient({ transport, features: [unique, batches] });
    await client.pushBulk(Work, Array.from({ length: 20 }, (_, i) => [i]));
    await client.push(Work, [-1]);
    await client.push(Work, [100], { in: 0.05 });
    await client.push(Once, [1]);
    await client.push(Once, [1]);
    const batch = batches.open(client, { description: "slots", callbacks: { success: [Done, []] } });
    await batch.add(async (b) => {
      await b.push(Work, [200]);
      await b.push(Work, [201]);
    });
    const worker = testWorker(transport, {
      jobs: [Work, Once, Done],
      queues: ["default"],
      concurrency: 4,
      poller: true,
      features: [unique, batches, periodicJobs({ schedules: [{ every: 1, job: Done }] })],
    });
    await worker.run();
    try {
      await waitFor(() => ran.length === 23, "every job that can succeed ran", 10_000);
      await waitFor(async () => (await new DeadSet(client).size()) === 1, "the failing job dead", 10_000);
      // The admin API's moves: back to the retry set, to its queue, to the dead set; pause and clear a queue.
      await new DeadSet(client).retryAll();
      await new RetrySet(client).killAll();
      await new Queue(client, "default").pause();
      await new Queue(client, "default").resume();
      await new Queue(client, "other").clear();
    } finally {
      await worker.stop();
    }
    assert.deepEqual(crossings, []);
    // The workload reached the engine's core scripts, so the check above saw them.
    for (const name of ["fetch", "settle", "promote", "heartbeat"]) {
      assert.ok([...scripts].some((s) => s.startsWith(name)), `script ${name} ran (ran: ${[...scripts].join(", ")})`);
    }
  });
});
