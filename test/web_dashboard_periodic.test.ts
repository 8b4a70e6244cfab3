/**
 * The dashboard's Periodic pages through hono's `app.request()` on every
 * transport of the matrix: the schedules with their timing, zone, next and
 * last run, last jid and state; a schedule's page; Pause, Resume and
 * Enqueue now as POST forms (a replayed Enqueue now enqueues once); the
 * empty state; and the commands a page costs (constant whatever the number
 * of schedules).
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import type { Client } from "../src/client.ts";
import { createClient, defineJob, type Transport } from "../mod.ts";
import { PeriodicSet } from "../src/features/mod.ts";
import { enqueueDuePeriodic, type PeriodicSchedule, registerPeriodic } from "../src/features/periodic/mod.ts";
import { dashboard } from "../src/web/mod.ts";
import { matrix } from "./support/matrix.ts";

const same = { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" };
const post = (app: Hono, path: string, fields: Record<string, string>) =>
  app.request(path, { method: "POST", headers: same, body: new URLSearchParams(fields) });
const html = async (app: Hono, path: string, status = 200) => {
  const res = await app.request(path);
  const text = await res.text();
  assert.equal(res.status, status, `${path}: ${res.status} ${text.slice(0, 200)}`);
  return text;
};
/** The table row of one schedule. */
const rowOf = (page: string, name: string) => {
  const row = [...page.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => m[1]).find((r) => r.includes(`>${name}</a>`));
  assert.ok(row, `a row for ${name}`);
  return row;
};
const tokenIn = (row: string) => /name="token" value="([\w-]{22})"/.exec(row)![1];

const Report = defineJob({ name: "Report", queue: "reports", perform: (_ctx, _kind: string) => {} });
const SCHEDULES: PeriodicSchedule[] = [
  { cron: "0 7 * * MON-FRI", tz: "Europe/Berlin", job: Report, args: ["daily"], name: "daily-report" },
  { every: 30, job: "Heartbeat", queue: "low", name: "heartbeat" },
];

for (const target of matrix(["memory", "ioredis", "bun", "upstash"])) {
  describe(`dashboard Periodic on ${target.name}`, () => {
    let transport: Transport;
    let client: Client;
    let app: Hono;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
      client = createClient({ transport });
      app = new Hono().route("/admin/jobs", dashboard({ transport, auth: () => true }));
    });
    const declare = async (schedules = SCHEDULES) => {
      await registerPeriodic(client, schedules, { owner: "billing", force: true });
      return await enqueueDuePeriodic({ client, schedules });
    };

    it("lists schedules with timing, zone, next and last run, last jid and state; a schedule's own page", async () => {
      const { enqueued } = await declare();
      assert.equal(enqueued, 1, "the 30 s schedule's latest tick is within grace: enqueued at once");
      const [raw] = (await transport.call("LRANGE", "queue:low", 0, -1)) as string[];
      const jid = JSON.parse(raw).jid;
      const page = await html(app, "/admin/jobs/periodic");
      assert.ok(page.indexOf(">daily-report</a>") < page.indexOf(">heartbeat</a>"), "sorted by name");
      const daily = rowOf(page, "daily-report");
      assert.match(daily, /<td class="mono nowrap">0 7 \* \* MON-FRI<\/td><td class="nowrap">Europe\/Berlin<\/td>/);
      assert.match(
        daily,
        /<span class="mono">Report<\/span> on <span class="mono">reports<\/span> · &quot;daily&quot;/,
      );
      assert.match(daily, /<time [^>]*>in \d+ (minute|hour|day)s?<\/time>/, "the next run");
      assert.match(daily, /<span class="status ok">enabled<\/span>/);
      assert.match(daily, /<button type="submit" name="action" value="pause">Pause<\/button>/);
      const beat = rowOf(page, "heartbeat");
      assert.match(beat, /<td class="mono nowrap">every 30s<\/td><td class="nowrap">–<\/td>/);
      const link = `/admin/jobs/find?jid=${jid}&amp;queue=low`;
      assert.ok(beat.includes(`<td class="mono small"><a href="${link}">${jid}</a></td>`), "the last jid, a link");
      // The link finds the job where it waits: its queue's page, at its row.
      const found = await app.request(link.replace("&amp;", "&"));
      assert.equal(found.status, 302);
      assert.equal(found.headers.get("location"), `/admin/jobs/queues/low?page=1#job-${jid}`);
      assert.match(await html(app, "/admin/jobs/queues/low"), new RegExp(`<tr id="job-${jid}">`));
      assert.match(beat, /<time [^>]*>just now<\/time>/, "the last run");
      assert.match(page, /<span class="badge">2<\/span>/);

      const detail = await html(app, "/admin/jobs/periodic/daily-report");
      assert.match(detail, /<th>Job class<\/th><td><span class="mono">Report<\/span>/);
      assert.match(detail, /<th>Missed ticks<\/th><td>skip \(run once, now\)/);
      assert.match(detail, /<th>Declared by<\/th><td>billing<\/td>/);
      assert.match(detail, /<pre>\[\n {2}&quot;daily&quot;\n\]<\/pre>/);
      assert.match(detail, /name="from" value="detail"/);
      assert.match(await html(app, "/admin/jobs/periodic/nope", 404), /Schedule not found/);
    });

    it("Pause, Resume and Enqueue now are POST forms; a replayed Enqueue now enqueues once", async () => {
      await declare();
      const set = new PeriodicSet(client);
      const path = "/admin/jobs/periodic/heartbeat";
      const paused = await post(app, path, { action: "pause" });
      assert.equal(paused.status, 303);
      assert.equal(paused.headers.get("location"), "/admin/jobs/periodic?notice=paused&n=0");
      assert.equal((await set.get("heartbeat"))!.enabled, false);
      const page = await html(app, "/admin/jobs/periodic?notice=paused&n=0");
      assert.match(page, /Schedule paused/);
      assert.match(rowOf(page, "heartbeat"), /status quiet">paused<.*value="resume">Resume</);

      const resumed = await post(app, path, { action: "resume", from: "detail" });
      assert.equal(resumed.headers.get("location"), `${path}?notice=resumed&n=0`);
      assert.equal((await set.get("heartbeat"))!.enabled, true);
      const again = await post(app, path, { action: "resume" });
      assert.equal(again.headers.get("location"), "/admin/jobs/periodic?notice=not-paused&n=0");

      const before = Number(await transport.call("LLEN", "queue:low"));
      const token = tokenIn(rowOf(await html(app, "/admin/jobs/periodic"), "heartbeat"));
      const now = await post(app, path, { action: "enqueue", token });
      assert.equal(now.headers.get("location"), "/admin/jobs/periodic?notice=run-now&n=1");
      assert.equal(await transport.call("LLEN", "queue:low"), before + 1);
      const [raw] = (await transport.call("LRANGE", "queue:low", 0, 0)) as string[];
      assert.equal(JSON.parse(raw).periodic.manual, true);
      const replay = await post(app, path, { action: "enqueue", token });
      assert.equal(replay.headers.get("location"), "/admin/jobs/periodic?notice=already-done&n=0");
      assert.equal(await transport.call("LLEN", "queue:low"), before + 1, "a replay enqueues nothing");

      assert.equal((await post(app, path, { action: "enqueue" })).status, 400, "no token");
      assert.equal((await post(app, path, { action: "delete" })).status, 400, "not an action");
      const gone = await post(app, "/admin/jobs/periodic/nope", { action: "pause" });
      assert.equal(gone.headers.get("location"), "/admin/jobs/periodic?notice=schedule-gone&n=0");
      assert.match(
        await html(app, gone.headers.get("location")!),
        /notice error">Nothing was done: that schedule is gone/,
      );
    });

    it("says what an empty page means", async () => {
      const page = await html(app, "/admin/jobs/periodic");
      assert.match(page, /No periodic schedules/);
      assert.match(page, /Declare them in code/);
    });

    it("each page costs five commands, whatever the number of schedules", async () => {
      await declare();
      const paths = ["/admin/jobs/periodic", "/admin/jobs/periodic/heartbeat"];
      let trips: number[] = [];
      const measure = async () => {
        const out: number[] = [];
        trips = [];
        for (const path of paths) {
          await html(app, path); // warm: the first call of a script may load it
          const { commands, roundTrips } = transport.counters;
          await html(app, path);
          out.push(transport.counters.commands - commands);
          trips.push(transport.counters.roundTrips - roundTrips);
        }
        return out;
      };
      const small = await measure();
      await declare([
        ...SCHEDULES,
        ...Array.from({ length: 12 }, (_, i): PeriodicSchedule => ({ every: 60 + i, job: "Tick", name: `tick-${i}` })),
      ]);
      const large = await measure();
      assert.deepEqual(
        small,
        [5, 5],
        "three for the header; the names, then one script over their hashes (or two reads)",
      );
      assert.deepEqual(large, small);
      assert.deepEqual(trips, [4, 3], "round trips: the header's reads and the page's own go out side by side");
      console.log(`dashboard Periodic on ${target.name}: commands per load ${paths.map((p, i) => `${p} ${small[i]}`)}`);
    });
  });
}
