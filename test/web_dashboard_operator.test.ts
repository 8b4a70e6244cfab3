/**
 * The dashboard as an experienced Sidekiq operator uses it (issue 30), page
 * by page through `app.request()` on memory, a private redis-server and the
 * Upstash gateway: destructive actions ask first (a confirmation page when
 * no script asked) and act once confirmed; a big queue pages by one LRANGE
 * with numbered pages, a jump form, positions and both orders, and a page
 * past the end says so; the substr filter ignores case in Redis's own glob;
 * a Quiet or Stop shows as requested until a heartbeat confirms it; times
 * are absolute beside relative; the footer names the Redis with its
 * password masked; a job's payload shows its backtrace once; Metrics says a
 * class whose runs all failed was not timed; a jid is found where it waits.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createClient, defineJob, drain, memoryTransport, silentLogger, type Transport } from "../mod.ts";
import { keys } from "../src/keys.ts";
import { MetricsTracker } from "../src/features/metrics/tracker.ts";
import { dashboard } from "../src/web/mod.ts";
import { caselessPattern } from "../src/web/dashboard/page_routes.tsx";
import { pendingSignal } from "../src/web/dashboard/params.ts";
import { matrix } from "./support/matrix.ts";

const same = { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" };
const post = (app: Hono, path: string, fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return app.request(path, { method: "POST", headers: same, body });
};
const html = async (app: Hono, path: string, status = 200) => {
  const res = await app.request(path);
  const text = await res.text();
  assert.equal(res.status, status, `${path}: ${res.status} ${text.slice(0, 200)}`);
  return text;
};
const unescape = (s: string) =>
  s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const keysIn = (page: string) => [...page.matchAll(/name="key" value="([^"]+)"/g)].map((m) => m[1]);
/** The hidden fields of the confirmation page's form, as it would post them back. */
const confirmFields = (page: string) => {
  const form = /<form method="post" action="([^"]+)" class="actions">([\s\S]*?)<\/form>/.exec(page);
  assert.ok(form, "a confirmation form");
  const fields = [...form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)]
    .map(([, name, value]) => [name, unescape(value)] as [string, string]);
  return { action: unescape(form[1]), fields };
};
const postFields = (app: Hono, path: string, fields: Array<[string, string]>) =>
  app.request(path, { method: "POST", headers: same, body: new URLSearchParams(fields) });

const Flaky = defineJob({
  name: "Flaky",
  retry: 3,
  backtrace: 10,
  perform: (_ctx, _n: number) => {
    throw new TypeError("the flux capacitor is off");
  },
});

for (const target of matrix(["memory", "ioredis", "upstash"])) {
  describe(`dashboard for operators on ${target.name}`, () => {
    let transport: Transport;
    let app: Hono;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
      app = new Hono().route("/jobs", dashboard({ transport, auth: () => true }));
    });

    it("destructive actions ask first: a confirmation page without JavaScript, then they act", async () => {
      const client = createClient({ transport });
      await client.pushBulk("ChargeCard", [[1], [2]], { queue: "billing" });
      const queue = await html(app, "/jobs/queues/billing");
      // The browser asks with the row's own question; the form starts unconfirmed.
      assert.match(
        queue,
        /<input type="hidden" name="confirm" value=""\/><button type="submit" class="danger" data-confirm="Are you sure you want to delete this ChargeCard job\?">Delete<\/button>/,
      );
      const value = unescape(/name="value" value="([^"]+)"/.exec(queue)![1]);
      const page = await (await post(app, "/jobs/queues/billing/delete", { value })).text();
      assert.match(page, /Are you sure\?[\s\S]*Are you sure you want to delete this ChargeCard job\?/);
      assert.equal(await transport.call("LLEN", "queue:billing"), 2, "asking deleted nothing");
      const form = confirmFields(page);
      assert.equal(form.action, "/jobs/queues/billing/delete");
      const done = await postFields(app, form.action, form.fields);
      assert.equal(done.headers.get("location"), "/jobs/queues/billing?notice=deleted&n=1");
      assert.equal(await transport.call("LLEN", "queue:billing"), 1);

      // Selected rows: the question counts them, and the page repeats every key.
      await client.pushBulk(Flaky, [[1], [2], [3]]);
      await drain({ transport, jobs: [Flaky], budgetMs: 5_000, logger: silentLogger });
      const list = await html(app, "/jobs/retries");
      assert.match(list, /value="delete" class="danger" data-confirm="Are you sure you want to delete this retry\?"/);
      assert.match(list, /data-confirm-many="Are you sure you want to delete these \{n\} retries\?"/);
      assert.match(list, /<button type="submit" name="action" value="retry">Retry now<\/button>/, "Retry now asks not");
      const [a, b, c] = keysIn(list);
      const bulk = await (await post(app, "/jobs/retries", { action: "kill", key: [a, b] })).text();
      assert.match(bulk, /Are you sure you want to kill these 2 retries\? They move to the Dead set\./);
      const again = confirmFields(bulk);
      assert.deepEqual(again.fields.filter(([n]) => n === "key").map(([, v]) => v), [a, b]);
      assert.equal(await transport.call("ZCARD", "dead"), 0);
      assert.equal(
        (await postFields(app, again.action, again.fields)).headers.get("location"),
        "/jobs/retries?notice=killed&n=2",
      );
      assert.equal(await transport.call("ZCARD", "dead"), 2);

      // One job's page: Delete asks, Retry now does not.
      const jobPath = `/jobs/retries/${encodeURIComponent(c)}`;
      assert.match(await html(app, jobPath), /data-confirm="Are you sure you want to delete this retry\?"/);
      const one = await (await post(app, jobPath, { action: "delete" })).text();
      assert.match(one, /Are you sure you want to delete this retry\?/);
      assert.equal(await transport.call("ZCARD", "retry"), 1);
      const confirmOne = confirmFields(one);
      assert.equal(confirmOne.action, jobPath);
      assert.equal(
        (await postFields(app, confirmOne.action, confirmOne.fields)).headers.get("location"),
        "/jobs/retries?notice=deleted&n=1",
      );
      assert.equal(await transport.call("ZCARD", "retry"), 0);
      assert.doesNotMatch(list + bulk + one + (await html(app, "/jobs/retries")), /retrys/i);
    });

    it("a big queue: one page read per request, numbered pages, a jump form, positions, both orders", async () => {
      const client = createClient({ transport });
      await client.pushBulk("Import", Array.from({ length: 130 }, (_, i) => [i]), { queue: "big" });
      const rows = (page: string) =>
        [...page.matchAll(/<td class="num muted" data-label="#">(\d+)<\/td>[\s\S]*?<span class="mono">(\d+)<\/span>/g)]
          .map(([, position, arg]) => [Number(position), Number(arg)]);
      // Newest first (Sidekiq's default): position 1 is the oldest, the next to run.
      const second = await html(app, "/jobs/queues/big?page=2");
      assert.deepEqual(rows(second).slice(0, 2), [[105, 104], [104, 103]]);
      assert.equal(rows(second).length, 25);
      assert.match(second, /26–50 of 130/);
      assert.match(second, /<a class="btn" href="\/jobs\/queues\/big">1<\/a>/);
      for (const p of [3, 4, 6]) {
        assert.match(second, new RegExp(`<a class="btn" href="/jobs/queues/big\\?page=${p}">${p}</a>`));
      }
      assert.match(second, /<span class="btn current" aria-current="page">2<\/span>/);
      assert.match(second, /<form method="get" action="\/jobs\/queues\/big" class="jump">/);
      const oldest = await html(app, "/jobs/queues/big?order=asc&page=6&count=25");
      assert.deepEqual(rows(oldest), [[126, 125], [127, 126], [128, 127], [129, 128], [130, 129]]);
      assert.match(oldest, /<input type="hidden" name="order" value="asc"\/>/, "the jump keeps the order");
      assert.match(oldest, /class="active">Oldest first</);
      // Past the end: said so, with the way back, never "131–130 of 130".
      const past = await html(app, "/jobs/queues/big?page=99");
      assert.match(past, /Page 99 is past the end/);
      assert.match(past, /Page 99 of 6: past the end/);
      assert.match(past, /<a class="btn" href="\/jobs\/queues\/big\?page=6">Back to page 6<\/a>/);
      assert.doesNotMatch(past, /2,?451|131–/);

      // Bounded: the same commands whatever the page or order, and LRANGE asks for one page only.
      const ranges: unknown[][] = [];
      const spied: Transport = Object.create(transport, {
        call: {
          value: (command: string, ...args: unknown[]) => {
            if (command === "LRANGE") ranges.push(args);
            return transport.call(command, ...(args as string[]));
          },
        },
      });
      const spiedApp = new Hono().route("/jobs", dashboard({ transport: spied, auth: () => true }));
      const costs: number[] = [];
      for (const path of ["/jobs/queues/big", "/jobs/queues/big?page=4&order=asc", "/jobs/queues/big?page=99"]) {
        await spiedApp.request(path);
        const before = transport.counters.commands;
        await (await spiedApp.request(path)).text();
        costs.push(transport.counters.commands - before);
      }
      assert.deepEqual(costs, [4, 4, 4]);
      assert.deepEqual(ranges.slice(0, 4), [
        ["queue:big", 0, 24],
        ["queue:big", 0, 24],
        ["queue:big", -100, -76],
        ["queue:big", -100, -76],
      ]);
    });

    it("the substr filter ignores case, matched by Redis's own glob", async () => {
      const now = Date.now() / 1000;
      const entries: Array<[string, string]> = [
        ["ChargeCard", "a1"],
        ["CHARGECARD", "a2"],
        ["SendMail", "a3"],
        ["Odd[x]?*Name", "a4"],
      ];
      for (const [i, [klass, jid]] of entries.entries()) {
        await transport.call(
          "ZADD",
          "retry",
          now + 60 + i,
          JSON.stringify({ class: klass, args: [], jid, queue: "default" }),
        );
      }
      const found = async (substr: string) =>
        keysIn(await html(app, `/jobs/retries?substr=${encodeURIComponent(substr)}`)).map((k) => k.split("-")[1])
          .sort();
      assert.deepEqual(await found("chargecard"), ["a1", "a2"]);
      assert.deepEqual(await found("ChargeCard"), ["a1", "a2"]);
      assert.deepEqual(await found("SENDmail"), ["a3"]);
      assert.deepEqual(await found("[x]?"), ["a4"], "glob characters match literally");
      assert.deepEqual(await found("*charge*"), ["a1", "a2"], "a * is a wildcard, as in Sidekiq");
      assert.match(
        await html(app, "/jobs/retries?substr=nomatch"),
        /The filter matches any part of the job&#39;s JSON, ignoring case\./,
      );
    });

    it("Quiet and Stop show as requested until a heartbeat confirms them", async () => {
      const now = Date.now();
      for (const id of ["host-a:1:aaa", "host-b:2:bbb"]) {
        await transport.pipeline([
          ["SADD", "processes", id],
          [
            "HSET",
            id,
            "info",
            JSON.stringify({ hostname: id.split(":")[0], pid: 1, concurrency: 5, queues: ["default"] }),
            "busy",
            0,
            "beat",
            now / 1000,
            "quiet",
            "false",
          ],
        ]);
      }
      const row = (page: string, id: string) => {
        const at = page.indexOf(id);
        return page.slice(page.lastIndexOf("<tr>", at), page.indexOf("</tr>", at));
      };
      const quiet = await html(app, `/jobs/busy?notice=quieted&n=1&pending=quiet&target=host-a%3A1%3Aaaa&at=${now}`);
      assert.match(row(quiet, "host-a:1:aaa"), /class="status pending"[^>]*>quiet requested</);
      assert.doesNotMatch(row(quiet, "host-a:1:aaa"), /value="quiet"/, "no second Quiet while it is pending");
      assert.doesNotMatch(row(quiet, "host-b:2:bbb"), /requested/);
      // The beat that confirms it: quiet, no longer "requested".
      await transport.call("HSET", "host-a:1:aaa", "quiet", "true");
      const confirmed = await html(app, `/jobs/busy?pending=quiet&target=host-a%3A1%3Aaaa&at=${now}`);
      assert.match(row(confirmed, "host-a:1:aaa"), /status quiet">quiet</);
      assert.doesNotMatch(row(confirmed, "host-a:1:aaa"), /requested/);
      // Stop all: every process listed, until each leaves; an old mark is not shown.
      const stop = await html(app, `/jobs/busy?pending=stop&at=${now}`);
      assert.match(row(stop, "host-b:2:bbb"), />stop requested</);
      const stale = await html(app, `/jobs/busy?pending=stop&at=${now - 80_000}`);
      assert.doesNotMatch(stale, /requested/);
      assert.equal(pendingSignal("quiet", undefined, "12abc"), undefined, "a malformed mark is ignored");
      assert.equal(pendingSignal("<script>", undefined, String(now), now), undefined);
    });

    it("times are absolute beside relative; the oldest job's enqueue time beside latency", async () => {
      const enqueued = Math.floor(Date.now() / 1000) - 90;
      await transport.pipeline([
        ["SADD", "queues", "slow"],
        [
          "LPUSH",
          "queue:slow",
          JSON.stringify({ class: "X", args: [], jid: "j1", queue: "slow", enqueued_at: enqueued }),
        ],
      ]);
      const iso = new Date(enqueued * 1000).toISOString().slice(0, 19).replace("T", " ");
      const list = await html(app, "/jobs/queues");
      const oldest = /oldest enqueued (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC/.exec(list);
      assert.ok(oldest, "the oldest job's enqueue time on the Queues page");
      assert.ok(Math.abs(Date.parse(`${oldest[1]}Z`) - enqueued * 1000) <= 2_000, `${oldest[1]} vs ${iso}`);
      const queue = await html(app, "/jobs/queues/slow");
      const sentence = /Latency 9\d\.\d s: the oldest job was enqueued (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\./.exec(
        queue,
      );
      assert.ok(sentence, "the queue's latency with its oldest job's enqueue time");
      assert.ok(Math.abs(Date.parse(`${sentence[1]}Z`) - enqueued * 1000) <= 2_000, sentence[1]);
      assert.match(
        queue,
        new RegExp(
          `<time class="nowrap" datetime="[^"]+" title="${iso} UTC">1 minute ago</time>` +
            `<small class="abs"><span>${iso.slice(0, 10)}</span> <span>${iso.slice(11)} UTC</span></small>`,
        ),
        "relative, and the UTC time visible beside it",
      );
    });

    it("the footer names the Redis the page reads, never its password", async () => {
      const page = await html(app, "/jobs/queues");
      const shown = unescape(/id="redis-endpoint"[^>]*>([^<]*)</.exec(page)![1]);
      assert.equal(shown, transport.endpoint);
      if (target.name === "memory") assert.equal(shown, "memory");
      if (target.name === "upstash") assert.match(shown, /^http:\/\/127\.0\.0\.1:\d+$/, "the REST URL, no token");
      assert.doesNotMatch(page, /test-token/);
      if (target.name !== "ioredis") return;
      const { ioredisTransport } = await import("../src/transport/adapters/ioredis/ioredis_transport.ts");
      const port = new URL(target.url!).port;
      const secret = ioredisTransport({
        url: `redis://:s3cret-pw%21@127.0.0.1:${port}/3`,
        redisOptions: { lazyConnect: true },
      });
      try {
        assert.equal(secret.endpoint, `redis://:***@127.0.0.1:${port}/3`);
        const named = ioredisTransport({
          url: `redis://ops:pw@127.0.0.1:${port}`,
          redisOptions: { lazyConnect: true },
        });
        assert.equal(named.endpoint, `redis://ops:***@127.0.0.1:${port}/0`);
        await named.close();
        const refused = await dashboard({ transport: secret, auth: () => false }).request("/queues");
        assert.equal(refused.status, 401);
        assert.doesNotMatch(await refused.text(), /redis-endpoint|127\.0\.0\.1/, "nothing for a refused caller");
      } finally {
        await secret.close();
      }
    });

    it("a job's payload shows its backtrace once, decoded; the stored payload is one click away", async () => {
      await createClient({ transport }).push(Flaky, [1]);
      await drain({ transport, jobs: [Flaky], budgetMs: 5_000, logger: silentLogger });
      const [raw] = (await transport.call("ZRANGE", "retry", 0, 0)) as string[];
      const compressed = JSON.parse(raw).error_backtrace as string;
      const key = keysIn(await html(app, "/jobs/retries"))[0];
      const page = await html(app, `/jobs/retries/${encodeURIComponent(key)}`);
      assert.match(page, /<h2>Backtrace<\/h2><pre>[^<]*web_dashboard_operator\.test\.ts/);
      const payload = page.slice(page.indexOf("<h2>Payload</h2>"));
      const [shown, stored] = payload.split("<details>");
      assert.ok(!shown.includes(compressed.slice(0, 40)), "the payload block has no base64 backtrace");
      assert.match(shown, /&quot;error_class&quot;: &quot;TypeError&quot;/);
      assert.match(shown, /is shown above, decoded/);
      assert.match(stored, /<summary>The raw payload, as stored<\/summary>/);
      assert.ok(stored.includes(compressed.slice(0, 40)), "the stored payload keeps it");
    });

    it("Metrics: a class whose runs all failed says it was not timed, never 0 ms", async () => {
      const tracker = new MetricsTracker();
      for (let i = 0; i < 3; i++) tracker.record("AlwaysFails", 250, true);
      tracker.record("Works", 40, false);
      await tracker.flush(transport, keys());
      const list = await html(app, "/jobs/metrics");
      const row = list.slice(list.indexOf(">AlwaysFails</a>"), list.indexOf("</tr>", list.indexOf(">AlwaysFails</a>")));
      assert.match(row, /<td class="num">3<\/td><td class="num error">3<\/td>/);
      assert.match(row, /not timed<\/td><td class="num nowrap muted">not timed</);
      assert.doesNotMatch(row, /0 ms/);
      const own = await html(app, "/jobs/metrics/AlwaysFails?period=1h");
      assert.match(own, /<span>Total time<\/span><b>not timed<\/b>/);
      assert.match(own, /No successful run of AlwaysFails in the last 1h/);
      assert.doesNotMatch(own, /id="histogram-chart"/);
      assert.match(await html(app, "/jobs/metrics/Works?period=1h"), /id="histogram-chart"/);
    });

    it("a jid is found where it waits or runs, within bounds; one found nowhere says where it looked", async () => {
      const now = Date.now() / 1000;
      await transport.call(
        "ZADD",
        "dead",
        now,
        JSON.stringify({ class: "X", args: [], jid: "deadbeef01", queue: "q" }),
      );
      const dead = await app.request("/jobs/find?jid=deadbeef01");
      assert.equal(dead.headers.get("location"), `/jobs/dead/${encodeURIComponent(`${now}-deadbeef01`)}`);
      await transport.pipeline([
        ["SADD", "processes", "w:1:abc"],
        ["HSET", "w:1:abc", "info", JSON.stringify({ hostname: "w", pid: 1, concurrency: 1 }), "busy", 1, "beat", now],
        [
          "HSET",
          "w:1:abc:work",
          "t1",
          JSON.stringify({ queue: "q", payload: JSON.stringify({ class: "Y", jid: "running01" }), run_at: now }),
        ],
      ]);
      assert.equal((await app.request("/jobs/find?jid=running01")).headers.get("location"), "/jobs/busy");
      const missing = await html(app, "/jobs/find?jid=gone0001&queue=reports", 404);
      assert.match(missing, /gone0001<\/span> is not running, not among the newest 1,000 jobs of queue/);
      assert.match(missing, /Most likely it ran and succeeded/);
      assert.match(missing, /href="\/jobs\/dead\?substr=gone0001">Search Dead</);
      assert.equal((await app.request("/jobs/find")).status, 400);
    });
  });
}

describe("dashboard: the filter's pattern", () => {
  it("puts each ASCII letter in a class, escapes glob characters but *, and leaves other letters as typed", () => {
    assert.equal(caselessPattern("Card 4"), "*[cC][aA][rR][dD] 4*");
    assert.equal(caselessPattern('"jid":"ab'), '*"[jJ][iI][dD]":"[aA][bB]*');
    assert.equal(caselessPattern("x?[y]\\"), "*[xX]\\?\\[[yY]\\]\\\\*");
    assert.equal(caselessPattern("a*b"), "[aA]*[bB]");
    assert.equal(caselessPattern("été\u212a"), "*é[tT]é\u212a*", "é and the Kelvin sign as typed");
  });
});

describe("dashboard: nav badges", () => {
  it("carry the counter they show, and a zero one is hidden rather than absent (Live Poll fills it in)", async () => {
    const app = new Hono().route("/jobs", dashboard({ transport: memoryTransport(), auth: () => true }));
    const page = await html(app, "/jobs/queues");
    assert.match(page, /Retries<span class="badge warn" data-stat="retries" hidden="">0<\/span>/);
    assert.match(page, /Dead<span class="badge danger" data-stat="dead" hidden="">0<\/span>/);
  });
});
