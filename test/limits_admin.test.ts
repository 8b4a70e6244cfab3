/**
 * The limits admin API (`FlowLimiters`: list, inspect, reset; `FlowGroups`:
 * backlogs, pause) and the dashboard's Limits page through hono's
 * `app.request()`, with hostile limiter and group names escaped.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createClient, defineJob } from "../mod.ts";
import { FlowGroups, FlowLimiters, flowLimits, Limiter } from "../src/features/mod.ts";
import { keys } from "../src/keys.ts";
import { dashboard } from "../src/web/mod.ts";
import { eachTarget } from "./support/targets.ts";

const k = keys();

eachTarget("limits admin", (t) => {
  const site = () => ({ transport: t.redis, keys: k });

  it("lists limiters most recently used first with their counters; inspects one; resets one", async () => {
    const erp = Limiter.concurrent("erp", 1);
    const taken = await erp.take(site(), { holder: "a" });
    await erp.take(site(), { holder: "b" });
    await new Promise((r) => setTimeout(r, 5));
    await Limiter.bucket("mail", 5, "1m").take(site());
    const limiters = new FlowLimiters(site());
    const list = await limiters.list();
    assert.deepEqual(list.map((l) => l.name), ["mail", "erp"]);
    const info = (await limiters.get("erp"))!;
    assert.deepEqual(
      [info.kind, info.limit, info.perMs, info.use, info.over, info.thisMinute.use + info.lastMinute.use, info.held],
      ["concurrent", 1, 60_000, 1, 1, 1, 1],
    );
    await erp.release(site(), taken, 40);
    assert.equal((await limiters.get("erp"))!.holdMs, 40);
    await erp.take(site(), { holder: "c" });
    assert.equal(await limiters.reset("erp"), true);
    assert.equal(await limiters.get("erp"), undefined);
    assert.equal((await erp.take(site(), { holder: "d" })).ok, true, "every slot back after a reset");
    assert.equal(await limiters.reset("nothing"), false);
  });

  it("shows the Limits page: limiters and the biggest group backlogs, names escaped", async () => {
    await Limiter.window("<b>evil</b>", 1, "1s").take(site());
    const limits = flowLimits();
    const Work = defineJob({ name: "Work", perform() {} });
    const client = createClient({ transport: t.redis, features: [limits] });
    await client.pushBulk(Work, [[], [], []], { group: "<i>big</i>" });
    await client.push(Work, [], { group: "small" });
    await new FlowGroups(site()).pause("default", "small");
    assert.deepEqual(await new FlowGroups(site()).top("default"), [
      { queue: "default", group: "<i>big</i>", backlog: 3, paused: false },
      { queue: "default", group: "small", backlog: 1, paused: true },
    ]);
    const app = new Hono().route("/jobs", dashboard({ transport: t.redis, auth: () => true, features: [limits] }));
    const res = await app.request("/jobs/limits");
    const text = await res.text();
    assert.equal(res.status, 200, text.slice(0, 300));
    assert.match(text, /&lt;b&gt;evil&lt;\/b&gt;/);
    assert.doesNotMatch(text, /<b>evil/);
    assert.match(
      text,
      /&lt;i&gt;big&lt;\/i&gt;<\/code><\/td><td data-label="Backlog">3<\/td><td data-label="State">ready/,
    );
    assert.match(text, /small<\/code><\/td><td data-label="Backlog">1<\/td><td data-label="State">paused/);
    assert.match(text, /href="\/jobs\/limits"/, "in the nav");
  });
}, ["memory", "ioredis"]);
