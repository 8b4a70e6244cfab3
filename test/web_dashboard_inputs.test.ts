/**
 * The dashboard's bounded inputs (days, page sizes, the live interval, the
 * filter, bulk actions, form size) and its actions on "all", which ask for
 * confirmation and do nothing when replayed. On the memory transport:
 * these are properties of the app.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createClient, memoryTransport, type Transport } from "../mod.ts";
import { dashboard } from "../src/web/mod.ts";

const same = { "sec-fetch-site": "same-origin" };
const form = (fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return body;
};

describe("dashboard: bounded inputs", () => {
  let transport: Transport;
  let app: Hono;
  beforeEach(() => {
    transport = memoryTransport();
    app = new Hono().route("/jobs", dashboard({ transport, auth: () => true }));
  });

  it("days must be 1-180: the history never reads more than 180 days", async () => {
    for (const days of ["7", "30", "90", "180", "1"]) {
      assert.equal((await app.request(`/jobs?days=${days}`)).status, 200);
    }
    for (const days of ["181", "100000", "0", "-1", "1e9", "abc", "7.5"]) {
      const res = await app.request(`/jobs?days=${days}`);
      assert.equal(res.status, 400, days);
      assert.match(await res.text(), /&#39;days&#39; must be a whole number from 1 to 180/);
    }
    const before = transport.counters.commands;
    await app.request("/jobs?days=180");
    const keys = 180 * 2;
    assert.ok(transport.counters.commands - before < 10, "one MGET per counter, not one command per day");
    assert.ok(keys > 0);
  });

  it("page sizes are capped at 100 and pages must be whole numbers", async () => {
    const now = Date.now() / 1000;
    await transport.pipeline(
      Array.from({ length: 150 }, (_, i) =>
        [
          "ZADD",
          "dead",
          now - i,
          JSON.stringify({ class: "J", args: [i], jid: `j${i}`, queue: "default" }),
        ] as const),
    );
    const rows = async (query: string) =>
      ((await (await app.request(`/jobs/dead${query}`)).text()).match(/name="key"/g) ?? []).length;
    assert.equal(await rows(""), 25);
    assert.equal(await rows("?count=1000000"), 100, "capped");
    assert.equal(await rows("?count=100&page=2"), 50);
    for (const bad of ["?page=0", "?page=-1", "?page=x", "?count=0", "?page=99999999999"]) {
      assert.equal((await app.request(`/jobs/dead${bad}`)).status, 400, bad);
    }
  });

  it("the live interval is floored at 2 s and capped at 20 s", async () => {
    const interval = async (q: string) =>
      /data-interval="(\d+)"/.exec(await (await app.request(`/jobs${q}`)).text())?.[1];
    assert.equal(await interval(""), "5");
    assert.equal(await interval("?interval=0.001"), "2");
    assert.equal(await interval("?interval=-5"), "2");
    assert.equal(await interval("?interval=1e9"), "20");
    assert.equal(await interval("?interval=10"), "10");
    assert.equal(await interval("?interval=abc"), "5");
  });

  it("substr is at most 200 characters; bulk actions name at most 100 jobs; forms at most 2 MiB", async () => {
    assert.equal((await app.request(`/jobs/retries?substr=${"a".repeat(200)}`)).status, 200);
    assert.equal((await app.request(`/jobs/retries?substr=${"a".repeat(201)}`)).status, 400);
    const keys = Array.from({ length: 101 }, (_, i) => `1700000000-${i}`);
    const res = await app.request("/jobs/retries", {
      method: "POST",
      headers: same,
      body: form({ action: "delete", key: keys }),
    });
    assert.equal(res.status, 400);
    const big = await app.request("/jobs/queues/default/delete", {
      method: "POST",
      headers: { ...same, "content-type": "application/x-www-form-urlencoded" },
      body: `value=${"x".repeat(3 * 1024 * 1024)}`,
    });
    assert.equal(big.status, 413);
  });
});

describe("dashboard: actions on all confirm, and do nothing when replayed", () => {
  let transport: Transport;
  let app: Hono;
  beforeEach(async () => {
    transport = memoryTransport();
    app = new Hono().route("/jobs", dashboard({ transport, auth: () => true }));
    await addDead(3);
  });
  async function addDead(n: number, from = 0) {
    const now = Date.now() / 1000;
    for (let i = from; i < from + n; i++) {
      await transport.call(
        "ZADD",
        "dead",
        now + i,
        JSON.stringify({ class: "J", args: [i], jid: `d${i}`, queue: "q" }),
      );
    }
  }
  const tokenOf = async (path: string) =>
    /name="token" value="([\w-]{22})"/.exec(await (await app.request(path)).text())![1];
  const deleteAll = (token: string, confirm?: string) =>
    app.request("/jobs/dead/all", {
      method: "POST",
      headers: same,
      body: form({ action: "delete", token, ...(confirm ? { confirm } : {}) }),
    });

  it("without confirm=1 the server asks (a page that works without JavaScript) and changes nothing", async () => {
    const token = await tokenOf("/jobs/dead");
    const res = await deleteAll(token);
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /Delete all 3 dead jobs\?/);
    assert.match(html, /name="confirm" value="1"/);
    assert.match(html, new RegExp(`name="token" value="${token}"`));
    assert.match(html, /action="\/jobs\/dead\/all"/);
    assert.equal(await transport.call("ZCARD", "dead"), 3);
  });

  it("confirmed, it runs once; the same form sent again does nothing, even to jobs that arrived since", async () => {
    const token = await tokenOf("/jobs/dead");
    const first = await deleteAll(token, "1");
    assert.equal(first.status, 303);
    assert.equal(first.headers.get("location"), "/jobs/dead?notice=deleted&n=3");
    assert.equal(await transport.call("ZCARD", "dead"), 0);
    await addDead(2, 10);
    const replay = await deleteAll(token, "1");
    assert.equal(replay.status, 303);
    assert.equal(replay.headers.get("location"), "/jobs/dead?notice=already-done&n=0");
    assert.equal(await transport.call("ZCARD", "dead"), 2, "the replay touched nothing");
    assert.match(await (await app.request(replay.headers.get("location")!)).text(), /already been sent/);
    assert.equal((await deleteAll("not-a-token", "1")).status, 400);
    assert.equal(
      (await deleteAll(await tokenOf("/jobs/dead"), "1")).headers.get("location"),
      "/jobs/dead?notice=deleted&n=2",
    );
  });

  it("queue clear and stop-all follow the same rule", async () => {
    await createClient({ transport }).push("J", [1], { queue: "low" });
    const token = await tokenOf("/jobs/queues");
    const clear = () =>
      app.request("/jobs/queues/low", {
        method: "POST",
        headers: same,
        body: form({ action: "clear", token, confirm: "1" }),
      });
    assert.equal((await clear()).headers.get("location"), "/jobs/queues?notice=cleared&n=1");
    await createClient({ transport }).push("J", [2], { queue: "low" });
    assert.equal((await clear()).headers.get("location"), "/jobs/queues?notice=already-done&n=0");
    assert.equal(await transport.call("LLEN", "queue:low"), 1);
  });
});
