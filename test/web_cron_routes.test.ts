/**
 * The cron routes (`edgekiq/web`) through hono's `app.request()`: auth,
 * poll, drain and tick, on every transport of the matrix.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  ConfigError,
  createClient,
  defineJob,
  memoryTransport,
  pollAndDrain,
  silentLogger,
  type Transport,
} from "../mod.ts";
import { cronRoutes, verifyBearer } from "../src/web/mod.ts";
import { matrix, waitFor } from "./support/matrix.ts";

const SECRET = "s3cret-token";

/** A transport that records the name of each script it runs. */
function spying(inner: Transport): { transport: Transport; scripts: string[] } {
  const scripts: string[] = [];
  const transport: Transport = {
    kind: inner.kind,
    blocking: inner.blocking,
    get counters() {
      return inner.counters;
    },
    call: (command, ...args) => inner.call(command, ...args),
    block: (command, options) => inner.block(command, options),
    pipeline: (commands, options) => inner.pipeline(commands, options),
    script: (script, keys, args) => {
      scripts.push(script.name);
      return inner.script(script, keys, args);
    },
    close: () => Promise.resolve(),
  };
  return { transport, scripts };
}
const bearer = (token = SECRET) => ({ method: "POST", headers: { authorization: `Bearer ${token}` } });

let ran: string[] = [];
const Work = defineJob({ name: "Work", perform: (_ctx, tag: string) => void ran.push(tag) });
const Boom = defineJob({
  name: "Boom",
  retry: 1,
  perform: () => {
    throw new Error("boom");
  },
});

describe("web: auth", () => {
  const app = new Hono().route("/cron", cronRoutes({ transport: memoryTransport(), jobs: [Work], auth: SECRET }));

  it("401s JSON without, or with a wrong, bearer secret", async () => {
    for (
      const init of [{ method: "POST" }, bearer("wrong"), bearer(SECRET + "x"), bearer(""), {
        method: "POST",
        headers: { authorization: SECRET },
      }]
    ) {
      const res = await app.request("/cron/tick", init);
      assert.equal(res.status, 401);
      assert.deepEqual(await res.json(), { error: "unauthorized" });
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
    }
    assert.equal((await app.request("/cron/poll", bearer())).status, 200);
    assert.equal(
      (await app.request("/cron/poll", { method: "POST", headers: { authorization: `bearer   ${SECRET}` } })).status,
      200,
    );
  });

  it("accepts a verifier function, which sees the request and the env bindings", async () => {
    const seen: unknown[] = [];
    const custom = cronRoutes<{ KEY: string }>({
      transport: memoryTransport(),
      jobs: [Work],
      auth: (req, env) => {
        seen.push(env.KEY);
        return req.headers.get("x-cron-key") === env.KEY;
      },
    });
    assert.equal(
      (await custom.request("/poll", { method: "POST", headers: { "x-cron-key": "k1" } }, { KEY: "k1" })).status,
      200,
    );
    assert.equal(
      (await custom.request("/poll", { method: "POST", headers: { "x-cron-key": "no" } }, { KEY: "k1" })).status,
      401,
    );
    assert.deepEqual(seen, ["k1", "k1"]);
  });

  it("refuses to build open routes", () => {
    for (const auth of [undefined, "", 42]) {
      // deno-lint-ignore no-explicit-any
      assert.throws(() => cronRoutes({ transport: memoryTransport(), jobs: [Work], auth: auth as any }), ConfigError);
    }
    assert.throws(
      () => cronRoutes({ transport: memoryTransport(), jobs: [Work], auth: SECRET, budgetMs: 0 }),
      /budgetMs/,
    );
  });

  it("verifyBearer compares whole secrets only", async () => {
    const req = (h?: string) => new Request("http://x/", { headers: h ? { authorization: h } : {} });
    assert.equal(await verifyBearer(req(`Bearer ${SECRET}`), SECRET), true);
    assert.equal(await verifyBearer(req(`Bearer ${SECRET.slice(0, -1)}`), SECRET), false);
    assert.equal(await verifyBearer(req(), SECRET), false);
    assert.equal(await verifyBearer(req("Bearer "), ""), false, "an unset secret never matches");
    assert.equal(await verifyBearer(req(`Bearer ${SECRET}`), undefined), false);
  });

  it("a verifier that throws gets a generic 500: its message is logged, never sent to the caller", async () => {
    const reported: Array<[unknown, Record<string, unknown>]> = [];
    const leaky = cronRoutes({
      transport: memoryTransport(),
      jobs: [Work],
      auth: () => {
        throw new Error("KV lookup failed for https://kv.internal/?token=hunter2");
      },
      onError: (error, context) => reported.push([error, context]),
    });
    const res = await leaky.request("/tick", bearer());
    const body = await res.text();
    assert.equal(res.status, 500);
    assert.deepEqual(JSON.parse(body), { error: "internal error" });
    assert.doesNotMatch(body, /hunter2|kv\.internal|KV lookup/);
    assert.equal(reported.length, 1);
    assert.match(String(reported[0][0]), /hunter2/, "the detail reaches onError");
    assert.equal(reported[0][1].context, "cron auth /tick");

    const lines: string[] = [];
    const logged = cronRoutes({
      transport: memoryTransport(),
      jobs: [Work],
      auth: () => Promise.reject(new Error("verifier exploded")),
      logger: { ...silentLogger, error: (message: string) => void lines.push(message) },
    });
    const again = await logged.request("/poll", bearer());
    assert.equal(again.status, 500);
    assert.deepEqual(await again.json(), { error: "internal error" });
    assert.match(lines.join("\n"), /verifier exploded/, "without onError the logger gets it");
  });

  it("answers 500 JSON when Redis fails, and reports the error", async () => {
    const errors: unknown[] = [];
    const down: Transport = {
      kind: "down",
      blocking: false,
      counters: { commands: 0, roundTrips: 0 },
      call: () => Promise.reject(new Error("connection refused")),
      block: () => Promise.reject(new Error("connection refused")),
      pipeline: () => Promise.reject(new Error("connection refused")),
      script: () => Promise.reject(new Error("connection refused")),
      close: () => Promise.resolve(),
    };
    const broken = cronRoutes({ transport: down, jobs: [Work], auth: SECRET, onError: (e) => errors.push(e) });
    const res = await broken.request("/tick", bearer());
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { error: "connection refused" });
    assert.equal(errors.length, 1);
  });

  it("only answers POST (and GET /tick, for Vercel Cron)", async () => {
    assert.equal((await app.request("/cron/drain", { headers: { authorization: `Bearer ${SECRET}` } })).status, 404);
    assert.equal((await app.request("/cron/tick", { headers: { authorization: `Bearer ${SECRET}` } })).status, 200);
  });
});

for (const target of matrix(["memory", "ioredis", "bun", "upstash"])) {
  describe(`web: cron routes on ${target.name}`, () => {
    let transport: Transport;
    let app: Hono;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
      ran = [];
      app = new Hono().route(
        "/cron",
        cronRoutes({
          transport,
          jobs: [Work, Boom],
          queues: ["default", "low"],
          concurrency: 4,
          budgetMs: 5_000,
          auth: SECRET,
        }),
      );
    });

    it("POST /drain runs queued jobs and answers counts", async () => {
      const client = createClient({ transport });
      await client.pushBulk(Work, [["a"], ["b"], ["c"]]);
      await client.push(Work, ["d"], { queue: "low" });
      await client.push(Boom, []);
      const res = await app.request("/cron/drain", bearer());
      assert.equal(res.status, 200);
      const { drain } = await res.json();
      assert.deepEqual([drain.processed, drain.failed, drain.remaining, drain.requeued], [5, 1, 0, 0]);
      assert.ok(drain.commands > 0 && drain.commandsPerJob > 0);
      assert.deepEqual(ran.sort(), ["a", "b", "c", "d"]);
      assert.equal(await transport.call("ZCARD", "retry"), 1, "the failure was scheduled for retry");
      assert.equal(await transport.call("GET", "stat:processed"), "5");
    });

    it("POST /poll promotes due scheduled jobs; POST /tick polls then drains", async () => {
      const client = createClient({ transport });
      await client.push(Work, ["soon"], { in: 0.3 });
      await client.push(Work, ["later"], { in: 3600 });
      const early = await (await app.request("/cron/poll", bearer())).json();
      assert.equal(early.poll.promoted, 0);
      await new Promise((r) => setTimeout(r, 400));
      const tick = await (await app.request("/cron/tick", bearer())).json();
      assert.equal(tick.poll.promoted, 1);
      assert.equal(tick.drain.processed, 1);
      assert.deepEqual(ran, ["soon"]);
      assert.equal(await transport.call("ZCARD", "schedule"), 1, "the later job still waits");
    });

    it("takes the transport lazily from the env bindings", async () => {
      const lazy = cronRoutes<{ which: string }>({
        transport: (env) => (env.which === "t" ? transport : assert.fail()),
        jobs: [Work],
        auth: SECRET,
      });
      await createClient({ transport }).push(Work, ["lazy"]);
      const res = await lazy.request("/tick", bearer(), { which: "t" });
      assert.equal((await res.json()).drain.processed, 1);
      assert.deepEqual(ran, ["lazy"]);
    });

    it("periodic schedules: /poll and /tick enqueue due ticks and report them; one registration per instance", async () => {
      const { transport: spy, scripts } = spying(transport);
      const periodic = [{ every: 1, job: Work, args: ["tick"], name: "every-second" }] as const;
      const routes = cronRoutes<{ which: string }>({
        transport: (env) => (env.which === "t" ? spy : assert.fail()),
        jobs: [Work],
        periodic: [...periodic],
        periodicOwner: "web-test",
        budgetMs: 3_000,
        auth: SECRET,
      });
      const first = await (await routes.request("/poll", bearer(), { which: "t" })).json();
      assert.equal(first.poll.features.periodic, 1, "a new schedule enqueues its latest tick when it is within grace");
      assert.equal(await transport.call("LLEN", "queue:default"), 1);
      const [job] = (await transport.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.equal(JSON.parse(job).periodic.name, "every-second");
      await waitFor(async () => {
        const tick = await (await routes.request("/tick", bearer(), { which: "t" })).json();
        return tick.poll.features.periodic >= 1 && tick.drain.processed >= 1;
      }, "a later tick enqueued and drained");
      assert.ok(ran.includes("tick"));
      await routes.request("/poll", bearer(), { which: "t" });
      assert.equal(
        scripts.filter((name) => name === "periodicRegister").length,
        1,
        "the registration is cached by the instance's one Client, not sent per request",
      );
      const direct = spying(transport);
      for (let i = 0; i < 2; i++) {
        const { poll } = await pollAndDrain({
          transport: direct.transport,
          jobs: [Work],
          periodic: [...periodic],
          budgetMs: 2_000,
        });
        assert.equal(typeof poll.features.periodic, "number");
      }
      assert.equal(
        direct.scripts.filter((name) => name === "periodicRegister").length,
        1,
        "pollAndDrain caches it too",
      );
    });

    it("pollAndDrain does the same without HTTP", async () => {
      await createClient({ transport }).push(Work, ["direct"], { queue: "low" });
      const { poll, drain } = await pollAndDrain({ transport, jobs: [Work], queues: ["low"], budgetMs: 3_000 });
      assert.equal(poll.promoted, 0);
      assert.equal(drain.processed, 1);
      assert.deepEqual(ran, ["direct"]);
    });
  });
}
