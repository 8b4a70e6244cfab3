/**
 * Reliable push (`reliablePush`): jobs pushed while Redis cannot be reached
 * are buffered (bounded, a clear error beyond), answered with their jids,
 * and written in order when Redis is back, never twice: a push whose reply
 * was lost is skipped on the resend even when its job already ran and was
 * acknowledged. On the memory transport behind a fault switch, then on a
 * real redis-server stopped and restarted (same port, same data) in the
 * middle of a stream of pushes, and behind a proxy that loses a reply.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ConfigError,
  createClient,
  defineJob,
  drain,
  memoryTransport,
  PushBufferFullError,
  silentLogger,
  type Transport,
  TransportError,
} from "../mod.ts";
import { uniqueJobs } from "../src/features/mod.ts";
import { ioredisTransport } from "../src/transport/adapters/ioredis/ioredis_transport.ts";
import { startLossyProxy } from "./support/lossy-proxy.ts";
import { redisServerPath, startRedis, type TestRedis } from "./support/redis.ts";
import { waitFor } from "./support/matrix.ts";

const Note = defineJob({ name: "Note", perform: (_ctx, _n: number) => {} });

/** The memory transport behind a switch: `down` refuses every request unsent; `lose` applies the next write, then loses its reply. */
function faulty(): Transport & { down: boolean; lose: number } {
  const memory = memoryTransport();
  const state = { down: false, lose: 0 };
  const gate = <T>(run: () => Promise<T>): Promise<T> => {
    if (state.down) {
      return Promise.reject(
        new TransportError("connection", "connect ECONNREFUSED 127.0.0.1:1", { maybeApplied: false }),
      );
    }
    if (state.lose > 0) {
      state.lose--;
      return run().then(() => {
        throw new TransportError("connection", "the connection closed before the reply came", { maybeApplied: true });
      });
    }
    return run();
  };
  return Object.create(memory, {
    down: { get: () => state.down, set: (v: boolean) => void (state.down = v) },
    lose: { get: () => state.lose, set: (v: number) => void (state.lose = v) },
    script: { value: (...a: Parameters<Transport["script"]>) => gate(() => memory.script(...a)) },
    pipeline: { value: (...a: Parameters<Transport["pipeline"]>) => gate(() => memory.pipeline(...a)) },
  });
}

const argsIn = async (transport: Transport, queue = "default") =>
  ((await transport.call("LRANGE", `queue:${queue}`, 0, -1)) as string[]).reverse().map((raw) =>
    JSON.parse(raw).args[0]
  );

describe("reliable push on the memory transport", () => {
  it("buffers while Redis is unreachable, answers with jids, and writes them first, in order, when it is back", async () => {
    const transport = faulty();
    const client = createClient({ transport, reliablePush: true });
    await client.push(Note, [1]);
    transport.down = true;
    const jids = [await client.push(Note, [2]), await client.push(Note, [3])];
    const bulk = await client.pushBulkDetailed(Note, [[4], [5]]);
    assert.ok(jids.every((jid) => typeof jid === "string" && jid.length === 24));
    assert.deepEqual(bulk.map((r) => r.status), ["buffered", "buffered"]);
    assert.equal(client.buffered, 4);
    assert.deepEqual(await argsIn(transport), [1]);
    transport.down = false;
    await client.push(Note, [6]); // goes behind the buffered ones
    assert.equal(await client.flushBuffered(), 0);
    assert.deepEqual(await argsIn(transport), [1, 2, 3, 4, 5, 6]);
    const landed = ((await transport.call("LRANGE", "queue:default", 0, -1)) as string[]).map((r) => JSON.parse(r).jid);
    for (const jid of [...jids, ...bulk.map((r) => r.jid)]) {
      assert.ok(landed.includes(jid), `${jid} written under its jid`);
    }
  });

  it("flushes on its own timer, with no further push", async () => {
    const transport = faulty();
    const client = createClient({ transport, reliablePush: true });
    transport.down = true;
    await client.push(Note, [1], { in: 60 });
    transport.down = false;
    await waitFor(() => client.buffered === 0, "the retry timer flushed", 10_000);
    assert.equal(await transport.call("ZCARD", "schedule"), 1, "a scheduled job lands in schedule");
  });

  it("never writes twice a push whose reply was lost, even after its job ran and was acknowledged", async () => {
    const transport = faulty();
    const client = createClient({ transport, reliablePush: true });
    transport.lose = 1;
    const result = await client.pushDetailed(Note, [1]);
    assert.equal(result.status, "buffered", "the reply was lost: kept to be sure");
    assert.equal(await transport.call("LLEN", "queue:default"), 1, "yet it was written");
    const ran = await drain({ transport, jobs: [Note], budgetMs: 5_000, logger: silentLogger });
    assert.equal(ran.processed, 1);
    assert.equal(await transport.call("LLEN", "queue:default"), 0, "ran and acknowledged: nowhere in Redis");
    assert.equal(await client.flushBuffered(), 0);
    assert.equal(await transport.call("LLEN", "queue:default"), 0, "the resend found its mark and wrote nothing");
  });

  it("refuses past its bound with a clear error, buffering none of that push", async () => {
    const transport = faulty();
    const client = createClient({ transport, reliablePush: { maxJobs: 2 } });
    transport.down = true;
    await client.push(Note, [1]);
    await client.push(Note, [2]);
    await assert.rejects(client.push(Note, [3]), (e: unknown) => {
      assert.ok(e instanceof PushBufferFullError);
      assert.equal(e.limit, 2);
      assert.equal(e.notSent.length, 1);
      assert.match(
        e.message,
        /^Cannot push job Note as Redis cannot be reached \(connect ECONNREFUSED 127\.0\.0\.1:1\) and the reliable-push buffer holds 2 of at most 2 jobs: 1 more do not fit, none of them was buffered$/,
      );
      assert.ok(e.cause instanceof TransportError);
      return true;
    });
    await assert.rejects(client.pushBulk(Note, [[4], [5]]), PushBufferFullError);
    assert.equal(client.buffered, 2);
    transport.down = false;
    assert.equal(await client.flushBuffered(), 0);
    assert.deepEqual(await argsIn(transport), [1, 2]);
  });

  it("keeps its marks to the pushes not yet confirmed, however many it made", async () => {
    const transport = faulty();
    const client = createClient({ transport, reliablePush: true });
    for (let i = 0; i < 50; i++) await client.push(Note, [i]);
    await client.pushBulk(Note, Array.from({ length: 500 }, (_, i) => [i]), { batchSize: 100 });
    const [key] = (await transport.call("KEYS", "edgekiq:pushed:*")) as string[];
    assert.match(key, /^edgekiq:pushed:[0-9a-f]{16}$/);
    assert.equal(Number(await transport.call("ZCARD", key)), 500, "the last call's, none older");
    await client.push(Note, [0]);
    assert.equal(Number(await transport.call("ZCARD", key)), 1, "confirmed pushes' marks are dropped by the next");
    assert.ok(Number(await transport.call("PTTL", key)) > 6 * 24 * 3600 * 1000, "they go a week after the last push");
  });

  it("gives a job Redis refuses for good to onDropped, and writes the others", async () => {
    const transport = faulty();
    const dropped: string[] = [];
    const client = createClient({
      transport,
      reliablePush: { onDropped: (error, jobs) => dropped.push(`${(error as TransportError).kind} ${jobs[0].queue}`) },
    });
    await transport.call("SET", "queue:broken", "not a list");
    transport.down = true;
    await client.push(Note, [1]);
    await client.push(Note, [2], { queue: "broken" });
    await client.push(Note, [3]);
    transport.down = false;
    assert.equal(await client.flushBuffered(), 0);
    assert.deepEqual(dropped, ["wrongtype broken"]);
    assert.deepEqual(await argsIn(transport), [1, 3]);
  });

  it("hands back what it holds on discard, and stops retrying", async () => {
    const transport = faulty();
    const client = createClient({ transport, reliablePush: true });
    transport.down = true;
    const jid = await client.push(Note, [7], { queue: "mail" });
    const held = await client.discardBuffered();
    assert.deepEqual(held.map((j) => [j.jid, j.queue, j.at, JSON.parse(j.payload).args]), [[jid, "mail", undefined, [
      7,
    ]]]);
    transport.down = false;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await transport.call("LLEN", "queue:mail"), 0);
    assert.equal(client.buffered, 0);
  });

  it("composes with unique jobs: the lock is taken when the buffered job is written", async () => {
    const transport = faulty();
    const Unique = defineJob({ name: "Unique", unique: { for: 600 }, perform: (_ctx, _n: number) => {} });
    const client = createClient({ transport, features: [uniqueJobs()], reliablePush: true });
    transport.down = true;
    const first = await client.pushDetailed(Unique, [1]);
    assert.equal(first.status, "buffered");
    transport.down = false;
    assert.equal(await client.flushBuffered(), 0);
    const second = await client.pushDetailed(Unique, [1]);
    assert.equal(second.status, "duplicate", "the flushed first copy holds the lock");
    assert.equal(second.existing, first.jid);
    assert.equal(await transport.call("LLEN", "queue:default"), 1);
  });

  it("costs nothing when off: the same MULTI, no marks, and the Redis error as before", async () => {
    const transport = faulty();
    const plain = createClient({ transport });
    const before = { ...transport.counters };
    await plain.push(Note, [1]);
    await plain.pushBulk(Note, [[2], [3]]);
    assert.equal(transport.counters.commands - before.commands, 4, "two MULTIs of SADD + LPUSH");
    assert.deepEqual(await transport.call("KEYS", "edgekiq:pushed:*"), []);
    transport.down = true;
    await assert.rejects(plain.push(Note, [4]), (e) => e instanceof TransportError && e.kind === "connection");
    assert.equal(plain.buffered, 0);
    assert.equal(await plain.flushBuffered(), 0);
    assert.throws(() => createClient({ transport, reliablePush: { maxJobs: 0 } }), ConfigError);
    assert.throws(
      () => createClient({ transport, reliablePush: "yes" as never }),
      /'reliablePush' must be true or an options object/,
    );
  });
});

describe("reliable push on a real redis-server", () => {
  let redis: TestRedis | undefined;
  let dir: string | undefined;
  const available = redisServerPath() !== null;
  before(async () => {
    if (!available) return;
    dir = mkdtempSync(join(tmpdir(), "edgekiq-reliable-"));
    redis = await startRedis({ dir, args: ["--appendonly", "yes", "--appendfsync", "always"] });
  });
  after(async () => {
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("loses and duplicates nothing while the server is stopped and restarted in the middle of a stream of pushes", async (t) => {
    if (!redis) return t.skip("no redis-server");
    const port = redis.port;
    const transport = ioredisTransport({ url: redis.url });
    const client = createClient({ transport, reliablePush: { maxJobs: 100_000 } });
    const pushed: string[] = [];
    let buffered = 0;
    let stop = false;
    const pusher = (async () => {
      for (let i = 0; !stop; i++) {
        const result = await client.pushDetailed(Note, [i]);
        pushed.push(result.jid!);
        if (result.status === "buffered") buffered++;
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    await waitFor(() => pushed.length >= 100, "pushes before the stop");
    await redis.stop();
    const stoppedAt = pushed.length;
    await waitFor(() => pushed.length >= stoppedAt + 50, "pushes while Redis is down", 20_000);
    redis = await startRedis({ port, dir, args: ["--appendonly", "yes", "--appendfsync", "always"] });
    await waitFor(
      () => client.buffered === 0 && pushed.length >= stoppedAt + 150,
      "flushed, and pushing again",
      30_000,
    );
    stop = true;
    await pusher;
    assert.ok(buffered >= 50, `${buffered} pushes were buffered`);
    const raws = (await transport.call("LRANGE", "queue:default", 0, -1)) as string[];
    const written = raws.reverse().map((raw) => JSON.parse(raw) as { jid: string; args: number[] });
    assert.equal(new Set(written.map((j) => j.jid)).size, written.length, "no jid written twice");
    assert.deepEqual(written.map((j) => j.jid), pushed, "every push written once, in push order");
    assert.deepEqual(written.map((j) => j.args[0]), pushed.map((_, i) => i));
    console.log(
      `reliable push across a restart: ${pushed.length} pushed, ${buffered} buffered, ${written.length} in Redis`,
    );
    await transport.close();
  });

  it("skips on the resend a push whose reply a proxy lost, after its job ran", async (t) => {
    if (!redis) return t.skip("no redis-server");
    const admin = ioredisTransport({ url: redis.url });
    await admin.call("FLUSHALL");
    const proxy = await startLossyProxy({ redisPort: redis.port });
    const transport = ioredisTransport({ url: proxy.url });
    const client = createClient({ transport, reliablePush: true });
    try {
      await client.push(Note, [0]); // loads the script, so the lost request is the push itself
      await drain({ transport: admin, jobs: [Note], budgetMs: 5_000, logger: silentLogger });
      proxy.dropNextReply();
      const lost = await client.pushDetailed(Note, [1]);
      assert.equal(lost.status, "buffered");
      assert.equal(proxy.dropped, 1);
      const ran = await drain({ transport: admin, jobs: [Note], budgetMs: 5_000, logger: silentLogger });
      assert.equal(ran.processed, 1, "the push whose reply was lost had landed, and ran");
      assert.equal(await client.flushBuffered(), 0);
      assert.equal(await admin.call("LLEN", "queue:default"), 0, "and was not written again");
    } finally {
      await transport.close();
      await admin.close();
      await proxy.stop();
    }
  });
});
