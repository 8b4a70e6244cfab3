/**
 * Limiters (`edgekiq/features`, `Limiter`): each kind's limit on one
 * transport of the matrix (memory twin, a real redis-server through
 * ioredis, and Upstash's REST protocol), leases that end, counters,
 * refusals of bad input, and `within()` inside `perform` putting an
 * over-limit job back in the `schedule` set instead of failing it.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, createClient, defineJob, drain } from "../mod.ts";
import { keys } from "../src/keys.ts";
import { Limiter, OverLimit } from "../src/features/mod.ts";
import { eachTarget } from "./support/targets.ts";
import { waitFor } from "./support/matrix.ts";

const k = keys();
/** Waits until the clock is in the first part of a fixed interval, so a test's calls do not straddle two. */
const earlyIn = (periodMs: number, within: number) =>
  waitFor(() => Date.now() % periodMs < within, "the start of an interval", periodMs + 1000);

eachTarget("limiters", (t) => {
  const site = () => ({ transport: t.redis, keys: k });

  it("concurrent: at most N holders; a release or an ended lease gives the slot back; a holder renews its own", async () => {
    const erp = Limiter.concurrent("erp", 2, { lease: 0.3 });
    const a = await erp.take(site(), { holder: "a" });
    const b = await erp.take(site(), { holder: "b" });
    const c = await erp.take(site(), { holder: "c" });
    assert.deepEqual([a.ok, b.ok, c.ok], [true, true, false]);
    assert.ok(c.waitMs > 0 && c.waitMs <= 300, `wait ${c.waitMs}`);
    assert.equal((await erp.take(site(), { holder: "a" })).ok, true, "a holder takes its own slot again");
    await erp.release(site(), a, 5);
    assert.equal((await erp.take(site(), { holder: "c" })).ok, true, "a's slot went to c");
    assert.equal((await erp.take(site(), { holder: "d" })).ok, false);
    await waitFor(async () => (await erp.take(site(), { holder: "d" })).ok, "the leases end", 3000);
    assert.equal(await t.redis.call("HGET", k.limiterStats("erp"), "hold"), "5", "the hold time measured");
  });

  it("bucket: N per fixed interval; the wait is the rest of the interval", async () => {
    const mail = Limiter.bucket("mail", 3, "1s");
    await earlyIn(1000, 500);
    const got: Awaited<ReturnType<Limiter["take"]>>[] = [];
    for (let i = 0; i < 5; i++) got.push(await mail.take(site()));
    assert.deepEqual(got.map((r) => r.ok), [true, true, true, false, false]);
    assert.ok(got[3].waitMs > 0 && got[3].waitMs <= 1000);
    await new Promise((r) => setTimeout(r, got[4].waitMs + 5));
    assert.equal((await mail.take(site())).ok, true, "the next interval has room");
  });

  it("window: N in any sliding interval; the wait is until the oldest call leaves it", async () => {
    const gh = Limiter.window("gh", 2, "400ms");
    assert.equal((await gh.take(site())).ok, true);
    assert.equal((await gh.take(site())).ok, true);
    const over = await gh.take(site());
    assert.equal(over.ok, false);
    assert.ok(over.waitMs > 0 && over.waitMs <= 400, `wait ${over.waitMs}`);
    await new Promise((r) => setTimeout(r, over.waitMs + 5));
    assert.equal((await gh.take(site())).ok, true);
  });

  it("leaky: a burst, then one per drip", async () => {
    const sms = Limiter.leaky("sms", 10, "1s", { burst: 3 });
    const got: Awaited<ReturnType<Limiter["take"]>>[] = [];
    for (let i = 0; i < 4; i++) got.push(await sms.take(site()));
    assert.deepEqual(got.map((r) => r.ok), [true, true, true, false]);
    assert.ok(got[3].waitMs > 0 && got[3].waitMs <= 100, `one drip is 100 ms: ${got[3].waitMs}`);
    await new Promise((r) => setTimeout(r, got[3].waitMs + 5));
    assert.equal((await sms.take(site())).ok, true);
    assert.equal((await sms.take(site())).ok, false);
  });

  it("points: each call spends its cost from a refilling budget", async () => {
    const gql = Limiter.points("gql", 100, "1s");
    assert.equal((await gql.take(site(), { cost: 60 })).ok, true);
    const over = await gql.take(site(), { cost: 50 });
    assert.equal(over.ok, false);
    assert.ok(over.waitMs > 50 && over.waitMs <= 110, `10 points at 0.1/ms: ${over.waitMs}`);
    assert.equal((await gql.take(site(), { cost: 40 })).ok, true, "what is left still pays a smaller cost");
    await assert.rejects(gql.take(site(), { cost: 101 }), ConfigError);
  });

  it("unlimited: always yes, and no command", async () => {
    const none = Limiter.unlimited("none");
    assert.equal((await none.take(site())).ok, true);
    assert.equal(await none.within(site(), () => 7), 7);
    assert.equal(await t.redis.call("EXISTS", k.limiters), 0);
  });

  it("counts uses and over-limit events, lists the limiter, and expires its keys", async () => {
    const mail = Limiter.bucket("stats-mail", 1, "1m", { ttl: "2m" });
    await mail.take(site());
    await mail.take(site());
    await mail.take(site());
    const stats = await t.redis.call("HGETALL", k.limiterStats("stats-mail")) as string[];
    const h = Object.fromEntries(stats.flatMap((v, i) => (i % 2 ? [] : [[v, stats[i + 1]]])));
    assert.deepEqual([h.use, h.over, h.use_m, h.over_m, h.kind, h.limit, h.per], [
      "1",
      "2",
      "1",
      "2",
      "bucket",
      "1",
      "60000",
    ]);
    assert.ok(Number(await t.redis.call("PTTL", k.limiterStats("stats-mail"))) > 60_000);
    assert.ok(Number(await t.redis.call("PTTL", k.limiter("stats-mail"))) <= 60_000);
    assert.notEqual(await t.redis.call("ZSCORE", k.limiters, "stats-mail"), null);
  });

  it("refuses a key of the wrong type with nothing written", async () => {
    await t.redis.call("SET", k.limiter("typo"), "x");
    await assert.rejects(Limiter.window("typo", 1, 1).take(site()), /WRONGTYPE/);
    assert.equal(await t.redis.call("EXISTS", k.limiterStats("typo")), 0);
  });

  it("within() inside perform: over the limit the job waits in the schedule set, not failed, not retried", async () => {
    const runs: string[] = [];
    const Call = defineJob({
      name: "Call",
      async perform(ctx, n: number) {
        await Limiter.bucket("call", 2, "1m").within(ctx, () => void runs.push(String(n)));
      },
    });
    const client = createClient({ transport: t.redis });
    await client.pushBulk(Call, [[1], [2], [3]]);
    await earlyIn(60_000, 50_000);
    const result = await drain({ transport: t.redis, jobs: [Call], budgetMs: 10_000, concurrency: 1 });
    assert.equal(runs.length, 2);
    assert.equal(result.failed, 0);
    assert.equal(await t.redis.call("ZCARD", "retry"), 0);
    const [raw, score] = await t.redis.call("ZRANGE", "schedule", 0, -1, "WITHSCORES") as string[];
    assert.equal(JSON.parse(raw).retry_count, undefined, "unchanged: no retry count");
    const at = Number(score) * 1000 - Date.now();
    assert.ok(at > 0 && at <= 72_000, `runs again when the interval ends (with jitter): in ${at} ms`);
  });
}, ["memory", "ioredis", "upstash"]);

it("takes of one limiter made together share one script call, each with its own verdict", async () => {
  const { memoryTransport } = await import("../mod.ts");
  const memory = memoryTransport();
  let calls = 0;
  const transport = Object.create(memory, {
    script: {
      value: (...args: unknown[]) => {
        calls++;
        return (memory.script as (...a: unknown[]) => unknown)(...args);
      },
    },
  });
  const mail = Limiter.window("together", 5, "1m");
  const got = await Promise.all(Array.from({ length: 20 }, () => mail.take({ transport, keys: k })));
  assert.equal(got.filter((r) => r.ok).length, 5);
  assert.ok(calls <= 2, `${calls} script calls for 20 takes`);
  assert.equal(await memory.call("HGET", k.limiterStats("together"), "over"), "15");
});

it("refuses bad limiter definitions with the value named", () => {
  assert.throws(() => Limiter.concurrent("", 1), /name must be a string.*current value is ""/);
  assert.throws(() => Limiter.concurrent("x", 0), /limit must be a whole number > 0: current value is 0/);
  assert.throws(() => Limiter.bucket("x", 1, "soon" as never), /'per' must be .*current value is "soon"/);
  assert.throws(() => Limiter.leaky("x", 1, 1, { burst: 0 }), ConfigError);
  assert.ok(new OverLimit("x", 100).at >= Date.now() + 100);
});
