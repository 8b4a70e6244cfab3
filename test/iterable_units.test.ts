/**
 * Iterable jobs in isolation, on the memory transport: the sources, the
 * state format, definition checks, and stepping in the test harness.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  cancelJob,
  ConfigError,
  defineIterableJob,
  Discard,
  Interrupt,
  iterateArray,
  iterateKeyset,
  iterateRange,
  IterationError,
  JobArgsError,
} from "../mod.ts";
import { iterationStates } from "../src/features/mod.ts";
import { parseState } from "../src/features/iterable/iteration_states.ts";
import { loadState, rubyFloat } from "../src/features/iterable/state.ts";
import { createTestHarness } from "../src/testing.ts";
import { upTo, walker } from "./support/iterable.ts";

const collect = async <T>(source: Iterable<T> | AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of source) out.push(x);
  return out;
};

describe("iteration sources", () => {
  it("iterateArray yields [item, next index] from the cursor, as Sidekiq's array_enumerator", async () => {
    assert.deepEqual(await collect(iterateArray(["a", "b", "c"], null)), [["a", 1], ["b", 2], ["c", 3]]);
    assert.deepEqual(await collect(iterateArray(["a", "b", "c"], 2)), [["c", 3]]);
    assert.deepEqual(await collect(iterateArray(["a"], 5)), []);
    assert.throws(() => [...iterateArray(["a"], -1)], IterationError);
    assert.throws(() => [...iterateArray(["a"], "x" as unknown as number)], /cursor must be an index >= 0/);
  });

  it("iterateRange walks up or down, ends before `to`, and resumes at the next number", async () => {
    assert.deepEqual(await collect(iterateRange({ from: 0, to: 10, step: 4 }, null)), [[0, 4], [4, 8], [8, 12]]);
    assert.deepEqual(await collect(iterateRange({ from: 0, to: 10, step: 4 }, 8)), [[8, 12]]);
    assert.deepEqual(await collect(iterateRange({ from: 3, to: 0, step: -1 }, null)), [[3, 2], [2, 1], [1, 0]]);
    assert.deepEqual(await collect(iterateRange({ from: 1, to: 3 }, null)), [[1, 2], [2, 3]]);
    assert.throws(() => [...iterateRange({ from: 0, to: 5, step: 0 }, null)], /'step' must not be 0/);
    assert.throws(() => [...iterateRange({ from: 0, to: Infinity }, null)], /'to' must be a finite number/);
  });

  it("iterateRange refuses numbers past Number.MAX_SAFE_INTEGER, and a step too small to move", () => {
    // At most `n` steps: a source that never advances must fail, not hang the test.
    const first = <T>(source: Iterable<T>, n: number): T[] => {
      const out: T[] = [];
      for (const x of source) if (out.push(x) >= n) break;
      return out;
    };
    const big = 2 ** 53;
    assert.throws(() => first(iterateRange({ from: big, to: big + 10 }, null), 20), /'from' must be.*MAX_SAFE_INTEGER/);
    assert.throws(() => first(iterateRange({ from: 0, to: -big - 2, step: -1 }, null), 20), /'to' must be/);
    assert.throws(() => first(iterateRange({ from: 0, to: 10, step: big * 4 }, null), 20), /'step' must be/);
    assert.throws(() => first(iterateRange({ from: 0, to: 10 }, -big - 2), 20), /cursor must be/);
    // A cursor past the end (the last item's `n + step`) is where a finished range resumes: nothing left.
    assert.deepEqual(first(iterateRange({ from: 0, to: 10 }, big + 2), 20), []);
    // 2^52 + 0.5 rounds back to 2^52: the range would re-run one item forever.
    assert.throws(
      () => first(iterateRange({ from: 2 ** 52, to: 2 ** 52 + 4, step: 0.5 }, null), 20),
      /step 0\.5 does not move past 4503599627370496/,
    );
    const top = Number.MAX_SAFE_INTEGER;
    assert.deepEqual(first(iterateRange({ from: top - 2, to: top }, null), 20), [[top - 2, top - 1], [top - 1, top]]);
  });

  it("iterateKeyset pages by key after the cursor, stops on a short page, and refuses a page that makes no progress", async () => {
    const rows = [3, 5, 8, 13, 21].map((id) => ({ id }));
    const asked: Array<number | null> = [];
    const fetchPage = (after: number | null, limit: number) => {
      asked.push(after);
      return rows.filter((r) => after === null || r.id > after).slice(0, limit);
    };
    const all = await collect(iterateKeyset({ fetchPage, key: (r) => r.id, pageSize: 2 }, null));
    assert.deepEqual(all.map(([row, key]) => [row.id, key]), [[3, 3], [5, 5], [8, 8], [13, 13], [21, 21]]);
    assert.deepEqual(asked, [null, 5, 13], "each page starts after the last key; the short page ends it");
    const resumed = await collect(iterateKeyset({ fetchPage, key: (r) => r.id, pageSize: 2 }, 8));
    assert.deepEqual(resumed.map(([row]) => row.id), [13, 21]);
    const stuck = iterateKeyset({ fetchPage: () => [{ id: 1 }], key: (r) => r.id, pageSize: 1 }, 1);
    await assert.rejects(collect(stuck), /returned a page ending at its own cursor 1/);
    const bad = iterateKeyset({ fetchPage: () => null as unknown as [], key: () => 1 }, null);
    await assert.rejects(collect(bad), /'fetchPage' must return an array/);
    await assert.rejects(collect(iterateKeyset({ fetchPage, key: (r) => r.id, pageSize: 0 }, null)), /'pageSize'/);
  });
});

describe("iteration state", () => {
  it("writes rt as Ruby's Float#to_s does", () => {
    const cases: Array<[number, string]> = [
      [0, "0.0"],
      [5, "5.0"],
      [0.1, "0.1"],
      [123.456, "123.456"],
      [0.0001, "0.0001"],
      [0.00001, "1.0e-05"],
      [2.5e-7, "2.5e-07"],
      [1e14, "100000000000000.0"],
      [999999999999999.9, "999999999999999.9"],
      [1e15, "1.0e+15"],
      [1e16, "1.0e+16"],
      [12345678.9, "12345678.9"],
    ];
    for (const [value, ruby] of cases) assert.equal(rubyFloat(value), ruby, String(value));
  });

  it("reads state as Sidekiq's IterableJobQuery does, and refuses to resume from a cursor that is not JSON", async () => {
    assert.equal(parseState([]), undefined);
    assert.deepEqual(parseState(["ex", "3", "c", '{"id":7}', "rt", "1.5", "cancelled", "1700000000"]), {
      executions: 3,
      cursor: { id: 7 },
      runtime: 1.5,
      cancelled: 1700000000,
    });
    assert.deepEqual(parseState(["cancelled", "1700000000"]), {
      executions: 0,
      cursor: null,
      runtime: 0,
      cancelled: 1700000000,
    }, "a job cancelled before its first save (Sidekiq 8's own job would fail on load_json(nil) here)");
    assert.equal(parseState(["c", "not json"])?.cursor, "not json");
    const t = createTestHarness({ jobs: [] });
    await t.transport.call("HSET", "it-x", "c", "not json");
    await assert.rejects(
      loadState(t.transport, "it-x"),
      /Cannot resume iterable job from it-x as its cursor is not JSON/,
    );
  });

  it("never extends the TTL once set (Sidekiq's EXPIRE NX), and iterationStates reads many jids at once", async () => {
    const w = walker();
    const t = createTestHarness({ jobs: [w.job] });
    const a = (await w.job.performAsync(t.client, 5))!;
    await t.step({ items: 1 });
    await t.transport.call("EXPIRE", `it-${a}`, 100);
    await t.step({ items: 1 }); // an interrupted job is next again: saves, must not extend
    assert.ok(Number(await t.transport.call("TTL", `it-${a}`)) <= 100);
    const b = "b".repeat(24);
    const cancelledAt = await cancelJob(t.client, b);
    const states = await iterationStates(t.client, [a, b, "nope", a]);
    assert.deepEqual([...states.keys()], [a, b]);
    assert.equal(states.get(a)?.cursor, 2);
    assert.deepEqual(states.get(b), { executions: 0, cursor: null, runtime: 0, cancelled: cancelledAt });
    assert.equal(states.get(a)?.executions, 2);
  });
});

describe("defineIterableJob", () => {
  const base = { name: "X", each: () => [], perItem() {} };
  it("checks its definition at once", () => {
    const cases: Array<[object, RegExp]> = [
      [{ ...base, perform() {} }, /iterable job must not define 'perform'/],
      [{ ...base, each: 1 }, /Cannot define job X as 'each' must be a function: current value is 1/],
      [{ ...base, perItem: undefined }, /'perItem' must be a function/],
      [{ ...base, onStop: "x" }, /'onStop' must be a function/],
      [{ ...base, maxIterationRuntime: 0 }, /'maxIterationRuntime' must be > 0 seconds and finite/],
      [{ ...base, flushInterval: Infinity }, /'flushInterval' must be > 0 seconds and finite/],
      [{ ...base, retry: -1 }, /'retry' must be >= 0: current value is -1/],
      [{ ...base, name: "" }, /'name' must be a non-empty string/],
    ];
    for (const [spec, message] of cases) {
      assert.throws(() => defineIterableJob(spec as Parameters<typeof defineIterableJob>[0]), ConfigError);
      assert.throws(() => defineIterableJob(spec as Parameters<typeof defineIterableJob>[0]), message);
    }
  });

  it("types perItem's item from what each yields, and checks args at push", async () => {
    const Typed = defineIterableJob({
      name: "Typed",
      args: v.tuple([v.string()]),
      async *each(_ctx, cursor: number | null, prefix) {
        for (let i = cursor ?? 0; i < 2; i++) yield [{ label: `${prefix}${i}` }, i + 1];
      },
      perItem(ctx, item, prefix) {
        const label: string = item.label;
        const resumeAt: number | null = ctx.cursor;
        return [label, prefix, resumeAt];
      },
    });
    const t = createTestHarness({ jobs: [Typed] });
    // @ts-expect-error a number is not the declared string
    await assert.rejects(Typed.performAsync(t.client, 42), JobArgsError);
    await Typed.performAsync(t.client, "p");
    assert.equal((await t.step())?.outcome, "done");
  });
});

describe("stepping iterable jobs in the test harness", () => {
  it("steps a few items at a time, resuming from the saved cursor, then runs to the end", async () => {
    const w = walker();
    const t = createTestHarness({ jobs: [w.job] });
    const jid = await w.job.performAsync(t.client, 7);
    const first = await t.step({ items: 3 });
    assert.deepEqual(first, {
      jid,
      class: "Walk",
      outcome: "interrupted",
      iteration: { executions: 1, cursor: 3, runtime: first!.iteration!.runtime, cancelled: undefined },
    });
    assert.equal((await t.enqueued()).length, 1, "back on its queue");
    assert.equal((await t.step({ items: 2 }))?.iteration?.cursor, 5);
    const last = await t.step();
    assert.equal(last?.outcome, "done");
    assert.equal(last?.iteration, undefined, "state removed");
    assert.deepEqual(w.seen, upTo(7));
    assert.deepEqual(w.hooks, ["start:1", "stop", "resume:2", "stop", "resume:3", "stop", "complete"]);
    assert.equal(await t.step(), undefined, "nothing left");
  });

  it("an item error is thrown to the test with the state saved at that item", async () => {
    const w = walker({
      perItem(_ctx, item) {
        if (item === 2) throw new Error("boom");
      },
    });
    const t = createTestHarness({ jobs: [w.job] });
    const jid = (await w.job.performAsync(t.client, 5))!;
    await assert.rejects(t.step(), /boom/);
    assert.deepEqual((await iterationStates(t.client, [jid])).get(jid)?.cursor, 2);
  });

  it("Interrupt and Discard thrown by an item, a source that closes, a source of nothing", async () => {
    const events: string[] = [];
    const Job = defineIterableJob({
      name: "Flow",
      async *each(_ctx, cursor: number | null, mode: string) {
        try {
          for (let i = cursor ?? 0; i < 5; i++) yield [i, i + 1];
        } finally {
          events.push(`closed:${mode}`);
        }
      },
      perItem(_ctx, item, mode) {
        if (item === 1 && mode === "interrupt") throw new Interrupt("later");
        if (item === 1 && mode === "discard") throw new Discard("no");
      },
      onStop: (ctx) => void events.push(`stop@${ctx.cursor}`),
    });
    const Nothing = defineIterableJob({ name: "Nothing", each: () => null, perItem() {} });
    const t = createTestHarness({ jobs: [Job, Nothing] });
    await Job.performAsync(t.client, "interrupt");
    const interrupted = await t.step();
    assert.equal(interrupted?.outcome, "interrupted");
    assert.equal(interrupted?.iteration?.cursor, 1, "item 1 runs again on resume");
    await t.clear();
    const discarded = await Job.performAsync(t.client, "discard");
    const result = await t.step();
    assert.equal(result?.outcome, "discarded");
    assert.equal(await t.transport.call("EXISTS", `it-${discarded}`), 0);
    assert.deepEqual(events, ["closed:interrupt", "stop@1", "closed:discard"]);
    await Nothing.performAsync(t.client);
    assert.equal((await t.step())?.outcome, "done");
  });

  it("fails clearly on a source that does not yield pairs, and on a cursor that is not JSON", async () => {
    const Bad = defineIterableJob({ name: "Bad", each: () => [1, 2] as unknown as [], perItem() {} });
    const Dated = defineIterableJob({
      name: "Dated",
      each: (_ctx, _cursor: Date | null) => [[1, new Date(0)], [2, new Date(1)]] as const,
      perItem() {},
    });
    const t = createTestHarness({ jobs: [Bad, Dated] });
    await Bad.performAsync(t.client);
    await assert.rejects(
      t.step(),
      /Cannot iterate Bad as 'each' must yield \[item, cursor\] pairs: current value is 1/,
    );
    await Dated.performAsync(t.client);
    await assert.rejects(
      t.step({ items: 1 }),
      (e: Error) =>
        e instanceof IterationError && /Cannot save the cursor of Dated as cursor is a Date/.test(e.message),
    );
  });
});
