/**
 * The Feeder and the AckBook on their own, against a scripted fetcher: the
 * one owner of a fetched job's life (hand out, finish, put back, recovered
 * while stalled), suspects one at a time, the idle policies, and the ack
 * book's take/confirm/restore.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AckBook } from "../src/server/ack_book.ts";
import { Feeder, type IdlePolicy } from "../src/server/feeder.ts";
import type { Blocked, Fetcher, Take } from "../src/server/fetcher.ts";
import { Prefetch } from "../src/server/prefetch.ts";
import { type UnitOfWork, unitOfWork } from "../src/server/unit_of_work.ts";
import { waitFor } from "./support/matrix.ts";

/** A fetcher whose takes come from a script, recording what the feeder asks of it. */
class ScriptedFetcher implements Fetcher {
  readonly queues = ["default"];
  readonly weights = { default: 1 };
  readonly mode = "strict";
  readonly heldKeys = ["held"];
  takes: Take[] = [];
  calls: string[] = [];
  acked: Array<[string, boolean]> = [];
  requeued: string[] = [];
  #token = 1000;

  heldKeyOf(): string {
    return "held";
  }
  register(): Promise<void> {
    return Promise.resolve();
  }
  take(max: number, startNow = 0): Promise<Take> {
    this.calls.push(`take ${max} ${startNow}`);
    return Promise.resolve(this.takes.shift() ?? { units: [], alive: true, reregistered: false });
  }
  block(signal: AbortSignal): Promise<Blocked> {
    this.calls.push("block");
    return new Promise((resolve) =>
      signal.addEventListener("abort", () => resolve({ units: [], alive: true, reregistered: false }), { once: true })
    );
  }
  ack(unit: UnitOfWork, mayBeRequeued: boolean): void {
    this.acked.push([JSON.parse(unit.raw).jid, mayBeRequeued]);
  }
  started(): void {}
  writeStart(unit: UnitOfWork): Promise<void> {
    this.calls.push(`start ${JSON.parse(unit.raw).jid}`);
    return Promise.resolve();
  }
  releaseLater(): void {}
  flush(): Promise<void> {
    this.calls.push("flush");
    return Promise.resolve();
  }
  requeue(units: readonly UnitOfWork[]): Promise<number> {
    this.requeued.push(...units.map((u) => JSON.parse(u.raw).jid));
    return Promise.resolve(units.length);
  }
  release(): Promise<number> {
    return Promise.resolve(0);
  }
  /** A batch of jobs with these jids (a jid ending in `!` is a suspect, in `?` recovered but not started). */
  batch(...jids: string[]): Take {
    const units = jids.map((jid) => {
      const mark = jid.endsWith("!") ? ',"edgekiq_recovered":1' : jid.endsWith("?") ? ',"edgekiq_recovered":0' : "";
      return unitOfWork("default", `{"class":"J","jid":"${jid}"${mark}}`, this.#token++);
    });
    return { units, alive: true, reregistered: false };
  }
}

function feeder(
  fetcher: Fetcher,
  idle: IdlePolicy = "drain",
  concurrency = 2,
  prefetch = new Prefetch({ concurrency, min: 0, max: 10 }),
): Feeder {
  return new Feeder({
    fetcher,
    concurrency,
    prefetch,
    idle,
    pollMaxMs: 50,
    onDead: () => Promise.resolve(),
    onRecovered: () => {},
    onError: (error) => {
      throw error;
    },
  });
}

const jid = (u: UnitOfWork | undefined) => (u ? JSON.parse(u.raw).jid : undefined);

describe("Feeder", () => {
  it("hands out fetched units, tracks them while they run and acknowledges each once finished", async () => {
    const f = new ScriptedFetcher();
    f.takes.push(f.batch("a", "b"));
    const feed = feeder(f);
    feed.start();
    const first = await feed.next();
    const second = feed.take() ?? await feed.next();
    assert.deepEqual([jid(first), jid(second)], ["a", "b"]);
    assert.equal(feed.running.size, 2);
    assert.equal(feed.inHand, 2);
    await feed.finish(first!, "ack", 1);
    await feed.finish(second!, "requeue", 1);
    assert.deepEqual(f.acked, [["a", false]]);
    assert.deepEqual(f.requeued, ["b"]);
    assert.equal(feed.running.size, 0);
    await feed.quiet();
  });

  it("a unit whose perform is over and whose writes remain is not busy, and frees its room for the next fetch", async () => {
    const f = new ScriptedFetcher();
    f.takes.push(f.batch("a", "b"));
    const feed = feeder(f, "drain", 2);
    feed.start();
    const a = await feed.next();
    const b = feed.take() ?? await feed.next();
    f.takes.push(f.batch("c"));
    // Both slots are taken: no room to fetch into until one is over.
    assert.equal(feed.take(), undefined);
    feed.ran(a!, 1);
    assert.equal(feed.running.size, 2, "still handed out: its outcome is not written yet");
    assert.deepEqual([...feed.performing.values()].map((u) => jid(u.unit)), ["b"]);
    const c = feed.take() ?? await feed.next();
    assert.equal(jid(c), "c", "fetched into the room a left while its writes finish");
    assert.equal(feed.running.size, 3);
    for (const unit of [a, b, c]) await feed.finish(unit!, "ack", 1);
    assert.equal(feed.performing.size, 0);
    await feed.quiet();
  });

  it("a job's time for the prefetch is its perform, not the wait for its outcome writes", async () => {
    const times: number[] = [];
    const prefetch = new (class extends Prefetch {
      override job(ms: number): void {
        times.push(ms);
        super.job(ms);
      }
    })({ concurrency: 1, min: 0, max: 10 });
    const f = new ScriptedFetcher();
    f.takes.push(f.batch("a", "b"));
    const feed = feeder(f, "drain", 1, prefetch);
    feed.start();
    const a = await feed.next();
    feed.ran(a!, 2);
    await feed.finish(a!, "ack", 500);
    const b = feed.take() ?? await feed.next();
    await feed.finish(b!, "ack", 3);
    // Counted as 500 ms, a's write wait would make jobs look slow and shrink what is fetched ahead.
    assert.deepEqual(times, [2, 3]);
    await feed.quiet();
  });

  it("acknowledges running units with their payload once the held hashes were recovered while it stalled", async () => {
    const f = new ScriptedFetcher();
    f.takes.push(f.batch("a"));
    const feed = feeder(f);
    feed.start();
    const a = await feed.next();
    // The next fetch finds the registration gone: what was held is back on the queue.
    f.takes.push({ units: [], alive: true, reregistered: true });
    const waiting = feed.next();
    await waitFor(() => f.calls.filter((c) => c.startsWith("take")).length >= 2, "a second fetch");
    await feed.finish(a!, "ack", 1);
    assert.deepEqual(f.acked, [["a", true]], "acked by payload: its requeued copy is taken back");
    await feed.quiet();
    assert.equal(await waiting, undefined);
  });

  it("starts suspects one at a time, each after the one before it finished", async () => {
    const f = new ScriptedFetcher();
    f.takes.push(f.batch("p!", "q!"));
    const feed = feeder(f);
    feed.start();
    const p = await feed.next();
    assert.equal(jid(p), "p!");
    assert.equal(feed.take(), undefined, "the second suspect waits for the first");
    await feed.begin(p!);
    assert.ok(f.calls.includes("start p!"), "a recovered job's start is written before it runs");
    await feed.finish(p!, "ack", 1);
    assert.ok(f.calls.includes("flush"), "a suspect's ack is written before the next suspect starts");
    assert.equal(jid(feed.take() ?? await feed.next()), "q!");
    await feed.quiet();
  });

  it("puts every running unit back at hard shutdown, then acknowledges a late finisher by payload", async () => {
    const f = new ScriptedFetcher();
    f.takes.push(f.batch("a"));
    const feed = feeder(f);
    feed.start();
    const a = await feed.next();
    assert.equal(await feed.requeueRunning(), 1);
    assert.deepEqual(f.requeued, ["a"]);
    await feed.finish(a!, "ack", 1);
    assert.deepEqual(f.acked, [["a", true]]);
    await feed.quiet();
  });

  it("quiet gives back what was fetched but not started, and flushes", async () => {
    const f = new ScriptedFetcher();
    f.takes.push(f.batch("a", "b", "c"));
    const feed = feeder(f, "drain", 1);
    feed.start();
    const a = await feed.next();
    await feed.quiet();
    assert.deepEqual(f.requeued, ["b", "c"]);
    assert.ok(f.calls.includes("flush"));
    assert.equal(await feed.next(), undefined, "no more units once quiet");
    assert.ok(feed.stopping.aborted, "running jobs see ctx.stopping");
    await feed.finish(a!, "ack", 1);
    assert.deepEqual(f.acked, [["a", false]]);
  });

  it("the block policy waits in Redis when the queues are empty, cut short by quiet", async () => {
    const f = new ScriptedFetcher();
    const feed = feeder(f, "block");
    feed.start();
    const waiting = feed.next();
    await waitFor(() => f.calls.includes("block"), "a blocking fetch");
    await feed.quiet();
    assert.equal(await waiting, undefined);
  });

  it("a unit's control stops only that job, and its ctx.stopping follows quiet too", async () => {
    const f = new ScriptedFetcher();
    f.takes.push(f.batch("a", "b"));
    const feed = feeder(f);
    feed.start();
    const a = await feed.next();
    const b = feed.take() ?? await feed.next();
    const sa = feed.control(a!)!.signal();
    const sb = feed.control(b!)!.signal();
    feed.control(a!)!.stop("cancelled");
    assert.equal(sa.aborted, true);
    assert.equal(sb.aborted, false);
    await feed.quiet();
    assert.equal(sb.aborted, true);
    await feed.finish(a!, "ack", 1);
    await feed.finish(b!, "ack", 1);
  });
});

describe("AckBook", () => {
  const same = (qi: number) => qi;
  it("sends a done batch as one entry naming its pieces, and keeps it until the call carrying it is confirmed", () => {
    const book = new AckBook();
    book.track(1, 7, 2, 3);
    book.ack(1, 7, 0, "a", false);
    book.ack(1, 7, 1, "b", false);
    const entry = book.take(false);
    assert.deepEqual(entry.args(same), [1, 7, 3, 0, 0], "batch 7, stored in 3 pieces");
    entry.restore();
    assert.equal(book.pending, 1, "restored: it goes again");
    const again = book.take(false);
    assert.deepEqual(again.args(same), [1, 7, 3, 0, 0]);
    again.confirm();
    assert.equal(book.pending, 0);
  });

  it("holds a partly done batch's acks back until they are due (or all are asked for)", () => {
    const book = new AckBook();
    book.track(1, 8, 3, 2);
    book.ack(1, 8, 1, "b", false);
    assert.deepEqual(book.take(false).args(same), [0, 0, 0], "not due yet: a quick batch costs one HDEL later");
    const all = book.take(true);
    assert.deepEqual(all.args(same), [0, 1, 8, 3, 2, 1, 1, 0], "batch 8: size 3, 2 pieces, 1 ack: job 1");
    all.restore();
    assert.deepEqual(book.take(true).args(same), [0, 1, 8, 3, 2, 1, 1, 0], "restored acks go again");
  });

  it("acknowledges by payload a job that may have been put back, or whose batch it no longer knows", () => {
    const book = new AckBook();
    book.track(1, 9, 1);
    book.ack(1, 9, 0, "raw-a", true);
    book.ack(2, 99, 4, "raw-z", false);
    const entry = book.take(false);
    assert.deepEqual([...entry.queues], [1, 2], "the call must name both queues");
    // Queue indexes become where the call names them (here queue 1 second, queue 2 first).
    assert.deepEqual(entry.args((qi) => 3 - qi), [1, 9, 1, 0, 2, 2, 9, 0, "raw-a", 1, 99, 4, "raw-z"]);
  });

  it("counts put-back jobs as settled, so a batch of finished and requeued jobs is dropped", () => {
    const book = new AckBook();
    book.track(1, 10, 2);
    book.putBack(10, 1);
    book.ack(1, 10, 1, "b", false);
    assert.deepEqual(book.take(false).args(same), [1, 10, 1, 0, 0]);
  });
});
