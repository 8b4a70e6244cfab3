/**
 * The seams a feature plugs into, each through the one `Feature` contract:
 * composed write guards, option rules, "run later", entry ops in the admin
 * API, outcome observers and writes, poll tasks (isolated from each other),
 * lifecycle hooks and dashboard pages.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import {
  ConfigError,
  createClient,
  createWorker,
  defineJob,
  type Feature,
  PayloadError,
  RunLater,
  silentLogger,
  type Transport,
  TransportError,
} from "../mod.ts";
import { uniqueJobs } from "../src/features/mod.ts";
import { Queue } from "../src/api/mod.ts";
import { createJobDefiner, defineScript, GUARD_STATUS, type GuardFragment } from "../src/extend.ts";
import { drain, pollOnce } from "../mod.ts";
import { dashboard, lazyRoute } from "./support/dashboard_kit.ts";
import { heldCount, plantHeld } from "./support/held.ts";
import { waitFor } from "./support/matrix.ts";
import { aroundScripts, eachValueScript, framesOf, markScript } from "./support/outcome_writes.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";

/** A guard that counts the jobs it let through, in `tally`. */
const TALLY: GuardFragment = {
  name: "tally",
  keys: 1,
  args: 0,
  lua: `
local function tally_check(j) return PUSHED end
local function tally_apply(j, status) redis.call("INCR", j.keys[1]) end
`,
  twin: { check: () => [GUARD_STATUS.pushed], apply: (redis, j) => void redis.call("INCR", j.keys[0]) },
};

/** A guard that refuses every job (as a closed batch would). */
const REFUSE: GuardFragment = {
  name: "refuse",
  keys: 0,
  args: 0,
  lua: `local function refuse_check(j) return DUPLICATE, "refused" end`,
  twin: { check: () => [GUARD_STATUS.duplicate, "refused"] },
};

function guarding(name: string, fragment: GuardFragment, keys: string[] = []): Feature {
  return { name, client: (_payload, ctx, next) => (ctx.guard?.({ fragment, keys, args: [] }), next()) };
}

/**
 * The args of `script`'s writes in a call, or undefined if the call has none: a call of the script itself, or a
 * fetch that carries its writes (`carrying`: KEYS and ARGV after the fetch's own, then their counts).
 */
function writesIn(script: string, called: { name: string }, argv: readonly unknown[]): readonly unknown[] | undefined {
  if (called.name === script) return argv;
  if (!called.name.endsWith(`+${script}`)) return undefined;
  const na = Number(argv[argv.length - 1]);
  return argv.slice(argv.length - 2 - na, argv.length - 2);
}

const Sync = defineJob({ name: "Sync", unique: { for: 60 }, perform(_ctx, _id: number) {} });

eachTarget("feature seams", (t) => {
  it("write guards compose: unique and a second feature's guard in one atomic script per push", async () => {
    const scripts: string[] = [];
    const spy = new Proxy(t.redis, {
      get(target, prop, receiver) {
        if (prop === "script") {
          return (
            s: { name: string },
            k: string[],
            a: unknown[],
          ) => (scripts.push(s.name), target.script(s as never, k, a as never));
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Transport;
    const client = createClient({ transport: spy, features: [uniqueJobs(), guarding("tally", TALLY, ["tally"])] });
    assert.equal((await client.pushDetailed(Sync, [1])).status, "pushed");
    assert.equal((await client.pushDetailed(Sync, [1])).status, "duplicate");
    assert.equal(await t.redis.call("GET", "tally"), "1", "the second guard applies only once the job is written");
    assert.deepEqual(scripts, ["guardedPush[tally+unique]", "guardedPush[tally+unique]"]);
    assert.equal(await t.redis.call("LLEN", "queue:default"), 1);
  });

  it("a guard that refuses a job leaves every other guard's state untouched (checks come before writes)", async () => {
    const client = createClient({ transport: t.redis, features: [uniqueJobs(), guarding("refuse", REFUSE)] });
    const result = await client.pushDetailed(Sync, [2]);
    assert.deepEqual(result, { jid: null, status: "duplicate", existing: "refused" });
    assert.deepEqual(await t.redis.call("KEYS", "edgekiq:unique:*"), [], "no lock taken for a job not written");
    assert.equal(await t.redis.call("LLEN", "queue:default"), 0);
  });

  it("per-push middleware work: done once for a bulk push (fields, guard), per job once another middleware needs it", async () => {
    let perJob = 0;
    let perPush = 0;
    const tag: Feature = {
      name: "tag",
      client: Object.assign(
        (payload: { [k: string]: unknown }, ctx: { guard?: (g: never) => void }, next: () => Promise<void>) => {
          perJob++;
          payload.tag = "t1";
          ctx.guard?.({ fragment: TALLY, keys: ["tally"], args: [] } as never);
          return next();
        },
        {
          perPush: () => (perPush++, { fields: { tag: "t1" }, guard: { fragment: TALLY, keys: ["tally"], args: [] } }),
        },
      ),
    };
    const client = createClient({ transport: t.redis, features: [tag] });
    await client.pushBulk("Plain", Array.from({ length: 5 }, (_, i) => [i]));
    assert.deepEqual([perPush, perJob], [1, 0], "one call for the push, none per job");
    assert.equal(await t.redis.call("GET", "tally"), "5", "every job went through the guard");
    const queued = ((await t.redis.call("LRANGE", "queue:default", 0, -1)) as string[]).map((raw) => JSON.parse(raw));
    assert.ok(
      queued.every((p) => p.tag === "t1" && typeof p.jid === "string" && p.enqueued_at),
      "each carries the field",
    );
    // Beside a middleware that runs per job, the per-push one runs per job too (the order of the chain is kept).
    const stamp: Feature = { name: "stamp", client: (payload, _ctx, next) => ((payload.stamp = 1), next()) };
    const both = createClient({ transport: t.redis, features: [tag, stamp] });
    await both.pushBulk("Plain", [[1], [2]]);
    assert.deepEqual([perPush, perJob], [1, 2]);
    assert.equal(await t.redis.call("GET", "tally"), "7");
    // A per-push field may not rewrite what the push sets itself.
    const bad: Feature = {
      name: "bad",
      client: Object.assign(() => {}, { perPush: () => ({ fields: { queue: "x" } }) }),
    };
    await assert.rejects(
      createClient({ transport: t.redis, features: [bad] }).pushBulk("Plain", [[1]]),
      (error: Error) => error instanceof PayloadError && /per-push fields must not set 'queue'/.test(error.message),
    );
    assert.equal(await t.redis.call("LLEN", "queue:default"), 7, "and it wrote nothing");
  });

  it("refuses two guards of one fragment on one write", async () => {
    const client = createClient({
      transport: t.redis,
      features: [guarding("a", TALLY, ["tally"]), guarding("b", TALLY, ["tally"])],
    });
    await assert.rejects(
      client.push("X", []),
      (e) => e instanceof ConfigError && /twice with guard 'tally'/.test(e.message),
    );
  });

  it("a unique push Redis refuses (WRONGTYPE queue) leaves no lock behind", async () => {
    const Uq = defineJob({ name: "Uq", queue: "uq", unique: { for: 600 }, perform() {} });
    const client = createClient({ transport: t.redis, features: [uniqueJobs()] });
    await t.redis.call("SET", "queue:uq", "not a list");
    await assert.rejects(client.push(Uq, []), (e) => e instanceof TransportError && e.kind === "wrongtype");
    assert.deepEqual(await t.redis.call("KEYS", "edgekiq:unique:*"), []);
    await t.redis.call("DEL", "queue:uq");
    assert.equal((await client.pushDetailed(Uq, [])).status, "pushed", "not a duplicate of a job that exists nowhere");
  });

  it("replace looks for the waiting copy at most 500 deep from either end of its queue", async () => {
    const Debounced = defineJob({ name: "Debounced", unique: { for: 600 }, perform(_ctx, _v: number) {} });
    const client = createClient({ transport: t.redis, features: [uniqueJobs()] });
    const by = { unique: { for: 600, by: () => "k" }, uniqueConflict: "replace" as const };
    const first = await client.push(Debounced, [1], by);
    const filler = (i: number) => JSON.stringify({ class: "Other", args: [i], queue: "default", jid: `f${i}` });
    await t.redis.call("LPUSH", "queue:default", ...Array.from({ length: 600 }, (_, i) => filler(i)));
    await t.redis.call("RPUSH", "queue:default", ...Array.from({ length: 600 }, (_, i) => filler(1000 + i)));
    const deep = await client.pushDetailed(Debounced, [2], by);
    assert.deepEqual(deep, { jid: null, status: "duplicate", existing: first }, "deeper than the bound: a duplicate");
    await t.redis.call("LTRIM", "queue:default", 0, 600 + 100); // the copy is now 100 from the pop end
    const near = await client.pushDetailed(Debounced, [3], by);
    assert.equal(near.status, "replaced");
    const queue = (await t.redis.call("LRANGE", "queue:default", 0, -1)) as string[];
    assert.equal(queue.length, 701);
    assert.equal(JSON.parse(queue[600]).args[0], 3, "replaced in place");
  });

  it("options: a feature's job options are checked at definition, its push options at push, typos refused", async () => {
    assert.throws(
      () => defineJob({ name: "Bad", unique: { for: -1 }, perform() {} }),
      (e) => e instanceof ConfigError && /unique.for/.test(e.message),
    );
    const plain = createClient({ transport: t.redis });
    await assert.rejects(
      plain.push(Sync, [1]),
      (e) => e instanceof ConfigError && /sets 'unique' but no feature of this client handles it/.test(e.message),
    );
    await assert.rejects(
      // @ts-expect-error: a typo is a type error, and refused at run time too
      plain.push("X", [], { queu: "x" }),
      (e) => e instanceof ConfigError && /'queu'/.test(e.message),
    );
    const unique = createClient({ transport: t.redis, features: [uniqueJobs()] });
    await assert.rejects(
      unique.push(Sync, [1], { unique: { for: 0 } }),
      (e) => e instanceof PayloadError && /unique.for/.test(e.message),
    );
    const define = createJobDefiner<{ limit?: number }>([{ job: { limit: { check: (v) => v, at: "run" } } }]);
    const Limited = define({ name: "Limited", limit: 5, perform() {} });
    assert.ok(await plain.push(Limited, []), "an option only the worker reads needs no client feature");
  });

  it("RunLater puts the job back to run later, unchanged: no retry, no failure", async () => {
    let runs = 0;
    const Later = defineJob({
      name: "Later",
      perform() {
        runs++;
        throw new RunLater({ inMs: 60_000, reason: "over a limit" });
      },
    });
    const gate: Feature = {
      name: "gate",
      server: (_job, payload, _queue, next) => {
        if (payload.args[0] === "gated") throw new RunLater({ inMs: 30_000 });
        return next();
      },
    };
    const client = createClient({ transport: t.redis });
    await client.push(Later, []);
    await client.push("Later", ["gated"]);
    const pushed = ((await t.redis.call("LRANGE", "queue:default", 0, -1)) as string[]).sort();
    t.worker = testWorker(t.redis, { jobs: [Later], features: [gate] });
    await t.worker.run();
    await waitFor(async () => Number(await t.redis.call("ZCARD", "schedule")) === 2, "both back in schedule");
    await t.worker.flushStats();
    const scheduled = (await t.redis.call("ZRANGE", "schedule", 0, -1, "WITHSCORES")) as string[];
    assert.deepEqual([scheduled[0], scheduled[2]].sort(), pushed, "byte for byte");
    assert.ok(Number(scheduled[1]) > Date.now() / 1000 + 20);
    assert.equal(runs, 1, "the middleware kept the gated job from running");
    assert.equal(await t.redis.call("ZCARD", "retry"), 0);
    assert.equal(await t.redis.call("GET", "stat:failed"), null);
  });

  it("entry ops: the admin API applies a feature's op atomically with a delete, only if the job was there", async () => {
    const marker: Feature = {
      name: "marker",
      entries: { ops: (raw) => [["release", `marker:${JSON.parse(raw).jid}`, "on"]] },
    };
    const client = createClient({ transport: t.redis, features: [marker] });
    const jid = (await client.push("Marked", []))!;
    await t.redis.call("SET", `marker:${jid}`, "on");
    const queue = new Queue(client, "default");
    const [record] = await queue.page(0, 1);
    assert.equal(await queue.delete(record), true);
    assert.equal(await t.redis.call("EXISTS", `marker:${jid}`), 0);
    await t.redis.call("SET", `marker:${jid}`, "on");
    assert.equal(await queue.delete(record), false);
    assert.equal(await t.redis.call("GET", `marker:${jid}`), "on", "no op for an entry that was not removed");
  });

  it("observe and outcome: every outcome is seen, and a feature's write is durable before the job's ack", async () => {
    const seen: string[] = [];
    let failWrites = 2;
    const RECORD = defineScript<unknown>({
      name: "recordResult",
      idempotent: true,
      keys: ["result"],
      argv: ["value"],
      lua: `return redis.call("SET", KEYS[1], ARGV[1])`,
      twin: (redis, keys, argv) => redis.call("SET", keys[0], argv[0]),
    });
    const flaky = new Proxy(t.redis, {
      get(target, prop, receiver) {
        if (prop === "script") {
          return (s: { name: string }, k: string[], a: unknown[]) =>
            s.name === "recordResult" && failWrites-- > 0
              ? Promise.reject(new TransportError("connection", "Connection is closed.", { maybeApplied: false }))
              : target.script(s as never, k, a as never);
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Transport;
    const results: Feature = {
      name: "results",
      observe: (o) => void seen.push(`${o.payload.class}:${o.kind}`),
      outcome: (o) =>
        o.kind === "succeeded"
          ? { script: RECORD, keys: [`result:${o.payload.jid}`], args: [String(o.result)] }
          : undefined,
    };
    const Answer = defineJob({ name: "Answer", perform: () => 42 });
    const Broken = defineJob({ name: "Broken", retry: 1, perform: () => Promise.reject(new Error("x")) });
    const client = createClient({ transport: t.redis });
    const jid = await client.push(Answer, []);
    await client.push(Broken, []);
    t.worker = testWorker(flaky, { jobs: [Answer, Broken], features: [results], onError: () => {} });
    await t.worker.run();
    await waitFor(async () => (await t.redis.call("GET", `result:${jid}`)) === "42", "the result written", 15_000);
    await waitFor(() => seen.length === 2, "both outcomes seen");
    assert.deepEqual(seen.sort(), ["Answer:succeeded", "Broken:retry"]);
  });

  it("a slot starts its next jobs while earlier ones' outcome writes are on their way (at most sixteen per slot)", async () => {
    const RECORD = defineScript<unknown>({
      name: "slowRecord",
      idempotent: true,
      keys: ["result"],
      argv: ["value"],
      lua: `return redis.call("SET", KEYS[1], ARGV[1])`,
      twin: (redis, keys, argv) => redis.call("SET", keys[0], argv[0]),
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = new Proxy(t.redis, {
      get(target, prop, receiver) {
        if (prop === "script") {
          return async (s: { name: string }, k: string[], a: unknown[]) => {
            if (s.name === "slowRecord") await gate;
            return target.script(s as never, k, a as never);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Transport;
    const recorder: Feature = {
      name: "recorder",
      outcome: (o) => ({ script: RECORD, keys: [`result:${o.payload.jid}`], args: [o.kind] }),
    };
    const started: string[] = [];
    const Step = defineJob({ name: "Step", perform: (ctx) => void started.push(ctx.jid) });
    const jids = await createClient({ transport: t.redis }).pushBulk(Step, Array.from({ length: 24 }, () => []));
    t.worker = testWorker(slow, { jobs: [Step], features: [recorder], concurrency: 1, onError: () => {} });
    await t.worker.run();
    // Every write is held: the slot runs on ahead of them, then waits once sixteen are on their way (a seventeenth job
    // has run by then); what it fetches ahead is bounded too.
    await waitFor(() => started.length >= 2, "the second job started while the first's write waits");
    let before = -1;
    while (started.length !== before) {
      before = started.length;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(started.length >= 2 && started.length <= 17, `${started.length} jobs ran while every write waited`);
    assert.equal((await t.worker.running()).length, 0, "none of them counts as running: each perform is over");
    release();
    await waitFor(async () => (await t.redis.call("GET", `result:${jids[23]}`)) === "succeeded", "all written");
    await waitFor(async () => (await heldCount(t.redis, t.worker!.identity)) === 0, "and acknowledged");
  });

  it("coalescing outcome writes: jobs finishing together share calls, shared keys go once, a failed call or a lost reply is sent again and applies once", async () => {
    const calls: { items: number; keys: number; shared: number }[] = [];
    let failCalls = 2;
    // Framed: per write its number of keys (-n: write n's keys), args (-m: a run of m jids in one arg, joined by
    // newlines); each write INCRs its counter once per jid.
    const TALLY = defineScript<unknown>({
      name: "tally",
      idempotent: true,
      keys: ["...per write: counter, seen set"],
      argv: ["...per write: #keys, #args or -m, jid or m jids joined by newlines"],
      lua: `
local a, next_key, placed, n = 1, 1, {}, 0
local function tally(kb, jid)
  if redis.call("SADD", KEYS[kb + 1], jid) == 1 then redis.call("INCR", KEYS[kb]) end
end
while a <= #ARGV do
  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local kb = next_key
  if nk < 0 then kb = placed[-nk] else next_key = next_key + nk end
  if na < 0 then
    for jid in string.gmatch(ARGV[a + 2], "[^\\n]+") do
      n = n + 1
      tally(kb, jid)
    end
    a = a + 3
  else
    n = n + 1
    placed[n] = kb
    tally(kb, ARGV[a + 2])
    a = a + 2 + na
  end
end
return 1`,
      twin(redis, keys, argv) {
        const placed: number[] = [];
        let nextKey = 0;
        for (let a = 0; a < argv.length;) {
          const nk = Number(argv[a]);
          const na = Number(argv[a + 1]);
          const kb = nk < 0 ? placed[-nk - 1] : nextKey;
          if (nk >= 0) nextKey += nk;
          for (const jid of na < 0 ? argv[a + 2].split("\n") : [argv[a + 2]]) {
            placed.push(kb);
            if (redis.call("SADD", keys[kb + 1], jid) === 1) redis.call("INCR", keys[kb]);
          }
          a += na < 0 ? 3 : 2 + na;
        }
        return 1;
      },
    });
    const counting = aroundScripts(t.redis, (s, k, a, run) => {
      const writes = writesIn("tally", s, a);
      if (!writes) return run();
      const frames = framesOf(writes);
      calls.push({
        items: frames.reduce((n, f) => n + f.writes, 0),
        keys: s.name === "tally" ? k.length : Number(a[a.length - 2]),
        shared: frames.reduce((n, f) => n + (f.nk < 0 ? f.writes : 0), 0),
      });
      // The first call fails before it reaches Redis; the second is applied and its reply lost.
      const lost = () => new TransportError("connection", "Connection is closed.", { maybeApplied: true });
      failCalls--;
      if (failCalls === 1) return Promise.reject(lost());
      if (failCalls === 0) return run().then(() => Promise.reject(lost()));
      return run();
    });
    const shared = ["tally:count", "tally:seen"];
    const tally: Feature = {
      name: "tally",
      outcome: (o) =>
        o.kind === "succeeded" ? { script: TALLY, keys: shared, args: [o.payload.jid], coalesce: true } : undefined,
    };
    const Quick = defineJob({ name: "Quick", perform: () => {} });
    await createClient({ transport: t.redis }).pushBulk(Quick, Array.from({ length: 60 }, () => []));
    const drained = await drain({
      transport: counting,
      jobs: [Quick],
      features: [tally],
      concurrency: 20,
      budgetMs: 20_000,
      onError: () => {},
    });
    assert.equal(drained.processed, 60);
    assert.equal(await t.redis.call("GET", "tally:count"), "60", "every job's write applied exactly once");
    const items = calls.reduce((n, c) => n + c.items, 0);
    assert.ok(items >= 60, `every write sent (a failed call's again): ${items}`);
    assert.ok(calls.length < 60, `jobs finishing together share calls: ${calls.length} calls for 60 jobs`);
    assert.ok(calls.some((c) => c.items > 1 && c.keys === 2 && c.shared === c.items - 1), "shared keys sent once");
  });

  it("coalesced writes of jobs that finish in one burst go in one call, carried by a fetch, not the first alone and the rest after", async () => {
    const sizes: number[] = [];
    let own = 0;
    const NOTE = markScript("note", "note");
    const counting = aroundScripts(t.redis, (s, _k, a, run) => {
      const writes = writesIn("note", s, a);
      if (writes) sizes.push(framesOf(writes).reduce((n, f) => n + f.writes, 0));
      if (s.name === "note") own++;
      return run();
    });
    const key = ["note"];
    const note: Feature = {
      name: "note",
      outcome: (o) => ({ script: NOTE, keys: key, args: [o.payload.jid], coalesce: true }),
    };
    const Quick = defineJob({ name: "Quick", perform: async () => {} });
    await createClient({ transport: t.redis }).pushBulk(Quick, Array.from({ length: 40 }, () => []));
    const drained = await drain({
      transport: counting,
      jobs: [Quick],
      features: [note],
      concurrency: 10,
      budgetMs: 20_000,
    });
    assert.equal(drained.processed, 40);
    assert.equal(sizes.reduce((n, size) => n + size, 0), 40, "every write sent once");
    // Ten slots run their jobs side by side: the first call carries what they all finished, not one job's write.
    assert.ok(sizes[0] >= 10, `the first call carries the burst: ${sizes.join(", ")}`);
    assert.ok(sizes.length <= 4, `40 jobs in a few calls: ${sizes.join(", ")}`);
    // Reliable fetch carries them in the fetches that follow (the acks go with a later one): no call of their own.
    assert.equal(own, 0, "no call of the write's own");
  });

  it("a drain is not over while a carried outcome write is unwritten: work the write pushes (a callback) runs in it", async () => {
    // Each write pushes a follow-up job, as a batch's last success pushes its callback.
    const FOLLOW = eachValueScript("follow", {
      keys: ["queue"],
      lua: `redis.call("LPUSH", KEYS[1], value)`,
      twin: (redis, keys, payload) => void redis.call("LPUSH", keys[0], payload),
    });
    // Every plain fetch's reply comes late: the last job finishes while the fetch that finds the queue empty is out.
    const slow = aroundScripts(t.redis, async (s, _k, _a, run) => {
      const reply = await run();
      if (s.name === "fetch") await new Promise((r) => setTimeout(r, 100));
      return reply;
    });
    const ran: string[] = [];
    const queueKey = ["queue:default"];
    const follow: Feature = {
      name: "follow",
      outcome: (o) =>
        o.payload.class === "First"
          ? {
            script: FOLLOW,
            keys: queueKey,
            args: [JSON.stringify({ class: "Second", args: [], queue: "default", jid: "f0110w", retry: false })],
            coalesce: true,
          }
          : undefined,
    };
    const First = defineJob({
      name: "First",
      perform: async () => void (await new Promise((r) => setTimeout(r, 20)), ran.push("First")),
    });
    const Second = defineJob({ name: "Second", perform: () => void ran.push("Second") });
    await createClient({ transport: t.redis }).push(First, []);
    const drained = await drain({
      transport: slow,
      jobs: [First, Second],
      features: [follow],
      concurrency: 2,
      budgetMs: 20_000,
    });
    assert.deepEqual(ran, ["First", "Second"], "the job its write pushed ran in the same drain");
    assert.equal(drained.processed, 2);
  });

  it("a coalesced write that can never apply buries its own job only, not the jobs it shared a call with", async () => {
    const BUMP = defineScript<unknown>({
      name: "bump",
      idempotent: true,
      keys: ["...per write: its hash"],
      argv: ["...per write: #keys, #args"],
      lua: `
local a, k = 1, 1
while a <= #ARGV do
  redis.call("HSET", KEYS[k], "done", 1)
  k = k + tonumber(ARGV[a])
  a = a + 2 + tonumber(ARGV[a + 1])
end
return 1`,
      twin(redis, keys, argv) {
        for (let a = 0, k = 0; a < argv.length; a += 2 + Number(argv[a + 1])) {
          redis.call("HSET", keys[k], "done", 1);
          k += Number(argv[a]);
        }
        return 1;
      },
    });
    const bump: Feature = {
      name: "bump",
      outcome: (o) => ({ script: BUMP, keys: [`bump:${o.payload.args[0]}`], args: [], coalesce: true }),
    };
    // Job 3's hash is a list: HSET on it fails with WRONGTYPE, which no retry can fix. (The script applies once per
    // write by contract: a call that failed part-way may be sent again, write by write.)
    await t.redis.call("RPUSH", "bump:3", "not a counter");
    const Quick = defineJob({ name: "Quick", perform: async (_ctx, _n: number) => {} });
    await createClient({ transport: t.redis }).pushBulk(Quick, Array.from({ length: 8 }, (_, i) => [i]));
    const drained = await drain({
      transport: t.redis,
      jobs: [Quick],
      features: [bump],
      concurrency: 8,
      budgetMs: 20_000,
      onError: () => {},
    });
    assert.equal(drained.processed, 8);
    const dead = (await t.redis.call("ZRANGE", "dead", 0, -1)) as string[];
    assert.equal(dead.length, 1, `only the job whose write cannot apply is buried: ${dead.length}`);
    assert.match(dead[0], /"args":\[3\]/);
    assert.match(dead[0], /Cannot record the job's outcome/);
    for (const i of [0, 1, 2, 4, 5, 6, 7]) {
      assert.equal(await t.redis.call("HGET", `bump:${i}`, "done"), "1", `job ${i}'s write applied`);
    }
  });

  it("poll tasks: each step is isolated, so a failing feature never stops orphan recovery", async () => {
    const errors: string[] = [];
    const broken: Feature = {
      name: "broken",
      poll: { run: () => Promise.reject(new Error("unreadable schedule")) },
    };
    const raw = JSON.stringify({ class: "Rec", args: [], queue: "default", jid: "orphan" });
    await plantHeld(t.redis, { identity: "ghost:1:abcdefabcdef", jobs: [raw] });
    const client = createClient({ transport: t.redis });
    const result = await pollOnce({ client, features: [broken], onError: (e) => void errors.push(String(e)) });
    assert.deepEqual(result.failed, ["broken"]);
    assert.equal(result.recovered, 1);
    assert.match(errors.join(), /unreadable schedule/);
    assert.equal(await t.redis.call("LLEN", "queue:default"), 1);
  });

  it("lifecycle: start runs before anything is fetched (its error fails run), stop after the last job", async () => {
    const calls: string[] = [];
    const life: Feature = {
      name: "life",
      start: () => (calls.push("start"), Promise.resolve()),
      beat: () => (calls.push("beat"), Promise.resolve()),
      stop: () => (calls.push("stop"), Promise.resolve()),
    };
    const worker = testWorker(t.redis, { jobs: [], features: [life] });
    await worker.run();
    await worker.beat();
    await worker.stop();
    assert.deepEqual(calls.filter((c, i) => c !== calls[i - 1]), ["start", "beat", "stop"]);
    const failing = createWorker({
      transport: t.redis,
      jobs: [],
      logger: silentLogger,
      handleSignals: false,
      features: [{ name: "bad", start: () => Promise.reject(new ConfigError("bad schedule")) }],
    });
    await assert.rejects(failing.run(), /bad schedule/);
    await failing.stop();
  });

  it("dashboard: a feature's page and nav entry, its module loaded on first request", async () => {
    let loaded = 0;
    const hello: Feature = {
      name: "hello",
      dashboard: {
        nav: [{ section: "hello", path: "/hello", label: "Hello" }],
        routes: (app, deps) =>
          lazyRoute(app, deps, "GET", "/hello", () => {
            loaded++;
            return Promise.resolve((c) => c.text("hello from a feature"));
          }),
      },
    };
    const app = dashboard({ transport: t.redis, auth: () => true, features: [hello] });
    const home = await (await app.request("/")).text();
    assert.match(home, /href="\/hello"[^>]*>Hello/);
    assert.equal(loaded, 0);
    assert.equal(await (await app.request("/hello")).text(), "hello from a feature");
    await app.request("/hello");
    assert.equal(loaded, 1);
  });
}, ["memory", "ioredis"]);
