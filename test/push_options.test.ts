import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { createClient, defineJob, memoryTransport, PayloadError } from "../mod.ts";
import { MAX_SCHEDULE_AHEAD_MS, resolveRunAt } from "../src/push_options.ts";
import { isQueueName } from "../src/queue_name.ts";

/** An array nested `depth` levels deep: depth 1 is `[]`. */
function nested(depth: number): unknown[] {
  let value: unknown[] = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

const YEAR_S = 365.25 * 24 * 3600;

describe("push option rules", () => {
  it("refuses run times that are not finite or more than 100 years ahead, writing nothing", async () => {
    const redis = memoryTransport();
    const client = createClient({ transport: redis });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ in: 1e308 }, /'in' must be at most 100 years ahead: current value is 1e\+308/],
      [{ in: 101 * YEAR_S }, /'in' must be at most 100 years ahead/],
      [{ in: NaN }, /'in' must be a finite number of seconds: current value is NaN/],
      [{ in: Infinity }, /'in' must be a finite number of seconds: current value is Infinity/],
      [{ at: 1e308 }, /'at' must be at most 100 years ahead/],
      [{ at: Infinity }, /'at' must be a Date or epoch seconds: current value is Infinity/],
      [
        { at: new Date(Date.now() + 101 * YEAR_S * 1000) },
        /'at' must be at most 100 years ahead: current value is "2\d{3}-/,
      ],
      [{ at: new Date(NaN) }, /'at' is an invalid Date/],
      [{ at: 60, in: 60 }, /'at' and 'in' are both set/],
    ];
    for (const [options, re] of cases) {
      await assert.rejects(
        client.push("Later", [1], options),
        (e: unknown) => e instanceof PayloadError && re.test(e.message),
        `${JSON.stringify(options)} -> ${re}`,
      );
    }
    await assert.rejects(
      client.pushBulk("Later", [[1], [2]], { at: [60, 1e308] }),
      /'at' must be at most 100 years ahead/,
    );
    assert.equal(await redis.call("EXISTS", "schedule", "queues"), 0);
    // 99 years is a schedule, written with a finite score.
    await client.push("Later", [1], { in: 99 * YEAR_S });
    const [, score] = (await redis.call("ZRANGE", "schedule", 0, -1, "WITHSCORES")) as string[];
    assert.ok(Number.isFinite(Number(score)) && Number(score) > Date.now() / 1000 + 98 * YEAR_S, score);
  });

  it("keeps Sidekiq's rules for small and past times", () => {
    const now = 1_700_000_000_000;
    assert.equal(resolveRunAt(30, undefined, now), now + 30_000);
    assert.equal(resolveRunAt(1_600_000_000, undefined, now), undefined, "a past time means now");
    assert.equal(resolveRunAt(undefined, -1e308, now), undefined, "a huge negative interval means now");
    assert.equal(resolveRunAt(undefined, MAX_SCHEDULE_AHEAD_MS / 1000, now), now + MAX_SCHEDULE_AHEAD_MS);
  });

  it("refuses args nested deeper than a Sidekiq payload may be, with a PayloadError, never a RangeError", async () => {
    const redis = memoryTransport();
    const client = createClient({ transport: redis });
    for (const depth of [99, 5_000, 200_000]) {
      await assert.rejects(
        client.push("Deep", [nested(depth)]),
        (e: unknown) =>
          e instanceof PayloadError && /args nests more than 99 levels deep: .*at most 100/.test(e.message),
        `depth ${depth}`,
      );
    }
    // A recursive schema never sees what JSON safety refused.
    type Tree = unknown[];
    const tree: v.GenericSchema<Tree> = v.array(v.lazy(() => tree));
    const Nested = defineJob({ name: "Nested", args: v.tuple([tree]), perform() {} });
    await assert.rejects(
      client.push(Nested, [nested(5_000)]),
      (e: unknown) => e instanceof PayloadError && /args nests more than 99 levels/.test(e.message),
    );
    // The payload is level 1, args level 2: args holding a 98-deep array make 100 levels, Ruby's limit.
    await client.push("Deep", [nested(98)]);
    const raw = (await redis.call("RPOP", "queue:default")) as string;
    assert.equal(JSON.parse(raw).args[0].flat(Infinity).length, 0);
    assert.equal(await redis.call("EXISTS", "queue:default"), 0);
  });

  it("checks extra values and middleware-added fields for JSON safety", async () => {
    const client = createClient({
      transport: memoryTransport(),
      middleware: [(payload, _ctx, next) => {
        payload.when = new Date();
        return next();
      }],
    });
    await assert.rejects(
      client.push("M", [1]),
      (e: unknown) => e instanceof PayloadError && /when is a Date/.test(e.message),
    );
    const plain = createClient({ transport: memoryTransport() });
    await assert.rejects(
      plain.push("M", [1], { extra: { deep: nested(150) } }),
      /extra.deep nests more than 99 levels/,
    );
    await assert.rejects(plain.push("M", [1], { extra: { n: NaN } }), /extra.n is NaN/);
  });

  it("refuses a queue no worker can listen to, from any source", async () => {
    for (const name of ["a b", "a,b", "", "tab\there", "esc\u001b[31m", "rtl\u202eoverride"]) {
      assert.equal(isQueueName(name), false, JSON.stringify(name));
    }
    for (const name of ["default", "low-priority", "app:emails", "é", "日本"]) {
      assert.equal(isQueueName(name), true, name);
    }
    const rerouting = createClient({
      transport: memoryTransport(),
      middleware: [(payload, _ctx, next) => {
        payload.queue = "no such, queue";
        return next();
      }],
    });
    await assert.rejects(rerouting.push("R", [1]), /client middleware set 'queue' to "no such, queue"/);
    await assert.rejects(
      createClient({ transport: memoryTransport() }).push("Evil\u001b[2J", [1]),
      /class name without control characters/,
    );
  });
});
