/**
 * The dashboard's pages and actions through hono's `app.request()` on every
 * transport of the matrix (memory, ioredis on a private redis-server, Bun's
 * client under Bun, @upstash/redis through the REST gateway fixture): what
 * each page shows, what each action does to Redis, links under nested
 * mounts, and the Redis commands each page load and `/stats` poll costs
 * (constant whatever the number of processes, queues and jobs).
 */
import { after, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createClient, defineJob, drain, silentLogger, type Transport, type Worker } from "../mod.ts";
import { type Keys, keys } from "../src/keys.ts";
import { dashboard } from "../src/web/mod.ts";
import { matrix, waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const same = { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" };
const post = (app: Hono, path: string, fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return app.request(path, { method: "POST", headers: same, body });
};
const html = async (app: Hono, path: string) => {
  const res = await app.request(path);
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return await res.text();
};
const keysIn = (page: string) => [...page.matchAll(/name="key" value="([^"]+)"/g)].map((m) => m[1]);
const tokenIn = (page: string) => /name="token" value="([\w-]{22})"/.exec(page)![1];

const Flaky = defineJob({
  name: "Flaky",
  retry: 3,
  backtrace: 10,
  perform: (_ctx, _n: number) => {
    throw new TypeError("the flux capacitor is off");
  },
});
const Fine = defineJob({ name: "Fine", perform: (_ctx, _n: number) => {} });

/** Fake heartbeats: `n` live processes, as a worker writes them. */
async function fakeFleet(transport: Transport, k: Keys, n: number): Promise<void> {
  const now = Date.now() / 1000;
  for (let i = 0; i < n; i++) {
    const id = `fake-${i}:1${i}:abcdef`;
    await transport.pipeline([
      ["SADD", k.processes, id],
      [
        "HSET",
        k.process(id),
        "info",
        JSON.stringify({ hostname: `fake-${i}`, pid: 10 + i, concurrency: 5, queues: ["default"] }),
        "busy",
        0,
        "beat",
        now,
        "quiet",
        "false",
        "rss",
        1024,
      ],
    ]);
  }
}

for (const target of matrix(["memory", "ioredis", "bun", "upstash", "cluster"])) {
  // The cluster target gets the cluster key layout ({edgekiq}:queue:...), as every client on it does.
  const k = keys("", target.name === "cluster" ? "cluster" : "sidekiq");
  describe(`dashboard on ${target.name}`, () => {
    let transport: Transport;
    let app: Hono;
    const workers: Worker[] = [];
    beforeEach(async () => {
      await Promise.allSettled(workers.splice(0).map((w) => w.stop()));
      await target.flush();
      transport ??= await target.open();
      app = new Hono().route("/admin/jobs", dashboard({ transport, auth: () => true }));
    });
    after(async () => void (await Promise.allSettled(workers.map((w) => w.stop()))));

    it("each page load and /stats poll costs a constant number of commands, whatever the fleet", async () => {
      const client = createClient({ transport });
      await client.push(Fine, [1]);
      await client.push(Fine, [2], { in: 600 });
      await transport.call(
        "ZADD",
        k.retry,
        Date.now() / 1000 + 60,
        JSON.stringify({ class: "X", args: [], jid: "r1", queue: "default" }),
      );
      await fakeFleet(transport, k, 1);
      const [, score] = (await transport.call("ZRANGE", k.retry, 0, 0, "WITHSCORES")) as string[];
      const pages = {
        "/stats": "/admin/jobs/stats",
        "dashboard": "/admin/jobs",
        "busy": "/admin/jobs/busy",
        "queues": "/admin/jobs/queues",
        "queue": "/admin/jobs/queues/default",
        "retries": "/admin/jobs/retries",
        "scheduled": "/admin/jobs/scheduled",
        "dead": "/admin/jobs/dead",
        "job": `/admin/jobs/retries/${Number(score)}-r1`,
      };
      const measure = async () => {
        const out: Record<string, [commands: number, roundTrips: number]> = {};
        for (const [name, path] of Object.entries(pages)) {
          await app.request(path); // warm: the first script call may load the script
          const { commands, roundTrips } = transport.counters;
          const res = await app.request(path);
          assert.equal(res.status, 200, path);
          await res.text();
          out[name] = [transport.counters.commands - commands, transport.counters.roundTrips - roundTrips];
        }
        return out;
      };
      const small = await measure();
      await fakeFleet(transport, k, 20);
      for (let q = 0; q < 20; q++) await client.pushBulk(Fine, [[1], [2], [3]], { queue: `q${q}` });
      const large = await measure();
      assert.deepEqual(large, small, "20 processes and 20 more queues cost the same");
      // The dashboard's Redis panel asks INFO of every primary: the test cluster has three, one server is one.
      const infos = target.name === "cluster" ? 3 : 1;
      const expected = {
        "/stats": 3,
        dashboard: 5 + infos,
        busy: 3,
        queues: 3,
        queue: 4,
        retries: 4,
        scheduled: 4,
        dead: 4,
        job: 4,
      };
      for (const [name, n] of Object.entries(expected)) assert.equal(small[name as keyof typeof pages][0], n, name);
      console.log(
        `dashboard on ${target.name}: commands (round trips) per load: ` +
          Object.entries(small).map(([name, [c, r]]) => `${name} ${c} (${r})`).join(", "),
      );
    });

    it("Dashboard and /stats show the counters; the history reads the daily keys", async () => {
      const client = createClient({ transport });
      await client.pushBulk(Fine, [[1], [2], [3]]);
      await client.push(Flaky, [1]);
      const today = new Date().toISOString().slice(0, 10);
      await drain({ transport, jobs: [Fine, Flaky], budgetMs: 5_000, logger: silentLogger });
      const stats = await (await app.request("/admin/jobs/stats")).json();
      assert.deepEqual(
        { ...stats.sidekiq, default_latency: 0 },
        {
          processed: 4,
          failed: 1,
          busy: 0,
          processes: 0,
          enqueued: 0,
          scheduled: 0,
          retries: 1,
          dead: 0,
          default_latency: 0,
        },
      );
      assert.match(stats.server_utc_time, /^\d\d:\d\d:\d\d UTC$/);
      const page = await html(app, "/admin/jobs?days=7");
      const history = JSON.parse(/data-history="([^"]*)"/.exec(page)![1].replace(/&quot;/g, '"'));
      assert.equal(history.days.length, 7);
      assert.equal(history.days.at(-1), today);
      assert.equal(history.processed.at(-1), 4);
      assert.equal(history.failed.at(-1), 1);
      assert.match(page, /<b data-stat="processed">4<\/b>/);
      assert.match(page, /Redis version<\/th><td>\d+\.\d+/);
    });

    it("Retries: list, filter, detail with the decoded backtrace, retry now, kill, delete", async () => {
      const client = createClient({ transport });
      await client.pushBulk(Flaky, [[1], [2], [3]]);
      await drain({ transport, jobs: [Flaky], budgetMs: 5_000, logger: silentLogger });
      const list = await html(app, "/admin/jobs/retries");
      const keys = keysIn(list);
      assert.equal(keys.length, 3);
      assert.match(list, /TypeError/);
      assert.match(list, /the flux capacitor is off/);
      assert.equal(keysIn(await html(app, "/admin/jobs/retries?substr=%5B2%5D")).length, 1, "substr matches args");
      assert.match(
        await html(app, "/admin/jobs/retries?substr=nomatch"),
        /No retries match “nomatch”/,
      );

      const detail = await html(app, `/admin/jobs/retries/${encodeURIComponent(keys[0])}`);
      assert.match(detail, /Backtrace/);
      assert.match(detail, /web_dashboard\.test\.ts/, "the zlib+base64 backtrace was decoded");
      assert.match(detail, /Retry count<\/th><td>0/);

      const retried = await post(app, `/admin/jobs/retries/${encodeURIComponent(keys[0])}`, { action: "retry" });
      assert.equal(retried.status, 303);
      assert.equal(retried.headers.get("location"), "/admin/jobs/retries?notice=retried&n=1");
      assert.equal(await transport.call("LLEN", k.queue("default")), 1);
      const again = await post(app, `/admin/jobs/retries/${encodeURIComponent(keys[0])}`, { action: "retry" });
      assert.equal(again.headers.get("location"), "/admin/jobs/retries?notice=gone&n=0", "a replay finds it gone");
      assert.equal(await transport.call("LLEN", k.queue("default")), 1, "and does not push it twice");

      const asked = await post(app, "/admin/jobs/retries", { action: "kill", key: [keys[1]] });
      assert.equal(asked.status, 200, "without confirm=1 a kill asks first");
      assert.match(await asked.text(), /Are you sure you want to kill this retry\? It moves to the Dead set\./);
      assert.equal(await transport.call("ZCARD", k.dead), 0, "and kills nothing");
      const killed = await post(app, "/admin/jobs/retries", { action: "kill", key: [keys[1]], confirm: "1" });
      assert.equal(killed.headers.get("location"), "/admin/jobs/retries?notice=killed&n=1");
      assert.equal(await transport.call("ZCARD", k.dead), 1);
      const deleted = await post(app, "/admin/jobs/retries", {
        action: "delete",
        key: [keys[2], keys[1]],
        confirm: "1",
      });
      assert.equal(deleted.headers.get("location"), "/admin/jobs/retries?notice=deleted&n=1");
      assert.equal(await transport.call("ZCARD", k.retry), 0);
      assert.match(await html(app, "/admin/jobs/retries"), /No retries/);
      assert.equal(
        (await post(app, "/admin/jobs/retries", { action: "retry" })).headers.get("location"),
        "/admin/jobs/retries?notice=none-selected&n=0",
      );
      assert.equal(
        (await post(app, "/admin/jobs/retries", { action: "enqueue", key: keys })).status,
        400,
        "not an action of this set",
      );
    });

    it("Scheduled: add to queue, delete; Dead: retry all after confirming", async () => {
      const client = createClient({ transport });
      const jid = (await client.push(Fine, [7], { in: 3600 }))!;
      await client.push(Fine, [8], { in: 3600 });
      const keys = keysIn(await html(app, "/admin/jobs/scheduled"));
      assert.equal(keys.length, 2);
      const mine = keys.find((key) => key.endsWith(jid))!;
      await post(app, "/admin/jobs/scheduled", { action: "enqueue", key: mine });
      const [queued] = (await transport.call("LRANGE", k.queue("default"), 0, -1)) as string[];
      assert.equal(JSON.parse(queued).jid, jid);
      await post(app, "/admin/jobs/scheduled", { action: "delete", key: keys, confirm: "1" });
      assert.equal(await transport.call("ZCARD", k.schedule), 0);

      const now = Date.now() / 1000;
      for (let i = 0; i < 3; i++) {
        await transport.call(
          "ZADD",
          k.dead,
          now - i,
          JSON.stringify({ class: "Fine", args: [i], jid: `dead${i}`, queue: "low", retry_count: 3 }),
        );
      }
      const page = await html(app, "/admin/jobs/dead");
      assert.deepEqual(keysIn(page).map((key) => key.split("-")[1]), ["dead0", "dead1", "dead2"], "newest first");
      const res = await post(app, "/admin/jobs/dead/all", { action: "retry", token: tokenIn(page), confirm: "1" });
      assert.equal(res.headers.get("location"), "/admin/jobs/dead?notice=retried&n=3");
      assert.equal(await transport.call("LLEN", k.queue("low")), 3);
      assert.equal(await transport.call("ZCARD", k.dead), 0);
    });

    it("Queues: sizes and latency, a queue's jobs with their JSON, delete one, clear", async () => {
      const client = createClient({ transport });
      const [a, b] = (await client.pushBulk(Fine, [[1], [2]], { queue: "mail" })) as string[];
      await client.push(Fine, [3]);
      const list = await html(app, "/admin/jobs/queues");
      assert.match(list, /href="\/admin\/jobs\/queues\/mail">mail<\/a><\/td><td class="num" data-label="Size">2<\/td>/);
      const queue = await html(app, "/admin/jobs/queues/mail");
      assert.ok(queue.includes(a) && queue.includes(b));
      assert.match(queue, /<details><summary>JSON<\/summary><pre>\{/);
      const value = /name="value" value="([^"]+)"/.exec(queue)![1].replace(/&quot;/g, '"');
      const asked = await post(app, "/admin/jobs/queues/mail/delete", { value });
      assert.match(await asked.text(), /Are you sure you want to delete this Fine job\?/, "asks first");
      assert.equal(await transport.call("LLEN", k.queue("mail")), 2, "and deletes nothing");
      const res = await post(app, "/admin/jobs/queues/mail/delete", { value, confirm: "1" });
      assert.equal(res.headers.get("location"), "/admin/jobs/queues/mail?notice=deleted&n=1");
      assert.equal(await transport.call("LLEN", k.queue("mail")), 1);
      assert.equal(
        (await post(app, "/admin/jobs/queues/mail/delete", { value, confirm: "1" })).headers.get("location"),
        "/admin/jobs/queues/mail?notice=gone&n=0",
      );
      const cleared = await post(app, "/admin/jobs/queues/mail", {
        action: "clear",
        token: tokenIn(queue),
        confirm: "1",
      });
      assert.equal(cleared.headers.get("location"), "/admin/jobs/queues?notice=cleared&n=1");
      assert.equal(await transport.call("EXISTS", k.queue("mail")), 0);
      assert.deepEqual(await transport.call("SMEMBERS", k.queues), ["default"]);
    });

    it("Busy: a running worker and its job; Quiet reaches it", { timeout: 30_000 }, async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const Slow = defineJob({
        name: "Slow",
        perform(ctx, _arg: string) {
          ctx.progress({ step: 3, of: 10, note: "<b>x</b>" });
          return gate;
        },
      });
      const worker = testWorker(transport, {
        jobs: [Slow],
        heartbeatInterval: 0.2,
        tag: "web-test",
        labels: ["blue"],
        pollMaxMs: 200,
      });
      workers.push(worker);
      try {
        await createClient({ transport }).push(Slow, ["payload-arg"]);
        await worker.run();
        await waitFor(
          async () => (await transport.call("HGET", k.process(worker.identity), "busy")) === "1",
          "a busy beat",
        );
        const page = await html(app, "/admin/jobs/busy");
        assert.ok(page.includes(worker.identity));
        assert.match(page, /<span class="tag">web-test<\/span><span class="tag">blue<\/span>/);
        assert.match(page, /<b>Slow<\/b>/);
        assert.match(page, /payload-arg/);
        // The job's latest ctx.progress(), from the work hash, escaped.
        await waitFor(
          async () => (await html(app, "/admin/jobs/busy")).includes("&quot;step&quot;:3"),
          "progress shown",
        );
        const shown = await html(app, "/admin/jobs/busy");
        assert.ok(shown.includes("&lt;b&gt;x&lt;/b&gt;") && !shown.includes("<b>x</b>"), "progress text is escaped");
        const res = await post(app, "/admin/jobs/busy", { identity: worker.identity, action: "quiet" });
        assert.match(
          res.headers.get("location")!,
          new RegExp(
            `^/admin/jobs/busy\\?notice=quieted&n=1&pending=quiet&target=${
              encodeURIComponent(worker.identity)
            }&at=\\d+$`,
          ),
        );
        // Requested until a beat confirms it (the worker beats every 0.2 s, so it may already be quiet).
        assert.match(
          await html(app, res.headers.get("location")!),
          /status pending[^>]*>quiet requested<|status quiet/,
        );
        await waitFor(
          async () => (await transport.call("HGET", k.process(worker.identity), "quiet")) === "true",
          "quiet",
        );
        assert.match(await html(app, "/admin/jobs/busy"), /status quiet/);
        assert.equal(
          (await post(app, "/admin/jobs/busy", { identity: "gone:1:x", action: "stop" })).headers.get("location"),
          "/admin/jobs/busy?notice=gone&n=0",
        );
      } finally {
        release();
      }
    });

    it("links and redirects follow the mount: nested, with parameters, or a proxy's basePath", async () => {
      await createClient({ transport }).push(Fine, [1]);
      const links = (page: string) => [...page.matchAll(/(?:href|action|src)="(\/[^"]*)"/g)].map((m) => m[1]);
      for (
        const [mounted, path, base] of [
          [app, "/admin/jobs/queues", "/admin/jobs"],
          [
            new Hono().route("/t/:tenant/jobs", dashboard({ transport, auth: () => true })),
            "/t/acme/jobs/queues",
            "/t/acme/jobs",
          ],
          [dashboard({ transport, auth: () => true }), "/queues", ""],
          [dashboard({ transport, auth: () => true, basePath: "/ops/sidekiq" }), "/queues", "/ops/sidekiq"],
        ] as const
      ) {
        const page = await html(mounted as Hono, path);
        const found = links(page);
        assert.ok(found.length > 10, path);
        for (const link of found) assert.ok(link === (base || "/") || link.startsWith(`${base}/`), `${path}: ${link}`);
        assert.match(page, new RegExp(`data-base="${base}"`));
        const token = tokenIn(page);
        const ask = await (mounted as Hono).request(`${path.replace(/\/queues$/, "")}/queues/default`, {
          method: "POST",
          headers: same,
          body: new URLSearchParams({ action: "clear", token }),
        });
        assert.match(
          await ask.text(),
          new RegExp(`action="${base}/queues/default"`),
          `${path}: the confirmation posts back`,
        );
        const res = await (mounted as Hono).request(`${path.replace(/\/queues$/, "")}/queues/default`, {
          method: "POST",
          headers: same,
          body: new URLSearchParams({ action: "clear", token, confirm: "1" }),
        });
        assert.equal(res.headers.get("location"), `${base}/queues?notice=cleared&n=1`, path);
        await createClient({ transport }).push(Fine, [1]);
      }
      const slash = await app.request("/admin/jobs/?days=7");
      assert.equal(slash.status, 308);
      assert.equal(slash.headers.get("location"), "/admin/jobs?days=7");
    });

    it("a key prefix is respected", async () => {
      const prefixed = dashboard({ transport, auth: () => true, prefix: "app" });
      await createClient({ transport, prefix: "app" }).push(Fine, [1], { queue: "ns" });
      await createClient({ transport }).push(Fine, [1], { queue: "plain" });
      const page = await html(prefixed as unknown as Hono, "/queues");
      assert.match(page, />ns</);
      assert.doesNotMatch(page, />plain</);
    });
  });
}
