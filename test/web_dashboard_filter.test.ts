/**
 * The job sets' `substr` filter scans a bounded part of a big set per
 * request and offers to continue where it stopped, and Live Poll does not
 * repeat a filtered scan (issue 25): on a real redis-server, whose ZSCAN
 * pages as production's does.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { memoryTransport } from "../mod.ts";
import { dashboard } from "../src/web/mod.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";

const ENTRIES = 30_000;

describe("dashboard: the substr filter on a big set", { skip: !redisAvailable() }, () => {
  const suite = suiteRedis();

  it("scans a bounded part per request, says so, and continues where it stopped until every match is found", async () => {
    const t = suite.redis;
    await t.call("FLUSHDB");
    const now = Date.now() / 1000;
    const job = (i: number) =>
      JSON.stringify({ class: i % 1000 === 0 ? "Needle" : "Hay", args: [i], jid: i.toString(16).padStart(24, "0") });
    for (let i = 0; i < ENTRIES; i += 1000) {
      const members = Array.from({ length: 1000 }, (_, j) => [now + 60 + i + j, job(i + j)]).flat();
      await t.call("ZADD", "retry", ...members);
    }
    const app = new Hono().route("/jobs", dashboard({ transport: t, auth: () => true }));
    // What the page costs without a filter: the header's counters and one page of the set.
    const baseline = t.counters.commands;
    await app.request("/jobs/retries");
    const pageCost = t.counters.commands - baseline - 1;
    const found = new Set<string>();
    let path = "/jobs/retries?substr=Needle";
    let requests = 0;
    for (; path && requests < 20; requests++) {
      const before = t.counters.commands;
      const res = await app.request(path);
      const page = await res.text();
      assert.equal(res.status, 200, page.slice(0, 300));
      const scans = t.counters.commands - before - pageCost;
      assert.ok(scans <= 10, `${path}: ${scans} ZSCANs in one request`);
      for (const [, jid] of page.matchAll(/value="[\d.e+]+-([0-9a-f]{24})"/g)) found.add(jid);
      const next = /<a class="btn" href="([^"]*)">Continue search<\/a>/.exec(page)?.[1].replace(/&amp;/g, "&");
      if (next) assert.match(page, /The search stopped after about [\d,]+ of [\d,]+ entries/);
      assert.doesNotMatch(page, /id="live-toggle"(?![^>]*disabled)/, "no live poll of a filtered list");
      path = next ?? "";
    }
    assert.ok(requests >= 3 && requests < 20, `${requests} requests`);
    assert.equal(found.size, ENTRIES / 1000, "every match found, over the continued searches");
  });
});

describe("dashboard: Live Poll on filtered lists", () => {
  it("is offered on a list, paused (disabled) while it is filtered, and the script honours it", async () => {
    const app = new Hono().route("/jobs", dashboard({ transport: memoryTransport(), auth: () => true }));
    const plain = await (await app.request("/jobs/dead")).text();
    assert.match(plain, /<button type="button" id="live-toggle" class="live" aria-pressed="false" hidden="">/);
    const filtered = await (await app.request("/jobs/dead?substr=x")).text();
    assert.match(
      filtered,
      /<button[^>]*id="live-toggle"[^>]*disabled=""[^>]*title="Live poll pauses while a filter is set"/,
    );
    const script = /src="(\/jobs\/assets\/[\w-]+\.js)"/.exec(filtered)![1];
    assert.match(await (await app.request(script)).text(), /tick = on && !toggle\.disabled \? refresh : null/);
  });
});
