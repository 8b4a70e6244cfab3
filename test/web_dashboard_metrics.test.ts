/**
 * The dashboard's Metrics pages through hono's `app.request()` on every
 * transport of the matrix: the top classes over a period with their chart
 * data and deploy marks, the class filter, one class's series and
 * histogram, jobs run by a real drain, and the commands a page costs
 * (constant whatever the number of classes and the period).
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { Client } from "../src/client.ts";
import { createClient, defineJob, drain, silentLogger, type Transport } from "../mod.ts";
import { markDeploy } from "../src/features/mod.ts";
import { HISTOGRAM_LABELS } from "../src/features/metrics/histogram.ts";
import { histogramWindow, minuteBucket, tenMinuteBucket } from "../src/features/metrics/buckets.ts";
import { MetricsTracker } from "../src/features/metrics/tracker.ts";
import { dashboard } from "../src/web/mod.ts";
import { matrix } from "./support/matrix.ts";

const html = async (app: Hono, path: string, status = 200) => {
  const res = await app.request(path);
  const text = await res.text();
  assert.equal(res.status, status, `${path}: ${res.status} ${text.slice(0, 200)}`);
  return text;
};
/** A `data-*` attribute's JSON, as the page script reads it. */
const dataOf = (page: string, attr: string) => {
  const raw = new RegExp(`${attr}="([^"]*)"`).exec(page)?.[1];
  assert.ok(raw, `the page has ${attr}`);
  return JSON.parse(
    raw.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&"),
  );
};
/** The table's rows as [class, runs, failures, total, average]. */
const rowsOf = (page: string) =>
  [...page.matchAll(
    /<tr><td>(?:<i class="swatch c\d"><\/i>)?<a class="mono" href="[^"]*">([^<]*)<\/a><\/td>(.*?)<\/tr>/g,
  )]
    .map(([, name, cells]) => [name, ...[...cells.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((m) => m[1])]);

/** Runs recorded as the worker's tracker records them, flushed for this minute. */
async function recordRuns(client: Client, runs: Array<[name: string, ms: number, failed: boolean]>): Promise<void> {
  const tracker = new MetricsTracker();
  for (const [name, ms, failed] of runs) tracker.record(name, ms, failed);
  await tracker.flush(client.transport, client.keys);
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const Fine = defineJob({ name: "Fine", perform: (_ctx, _n: number) => {} });

for (const target of matrix(["memory", "ioredis", "bun", "upstash"])) {
  describe(`dashboard Metrics on ${target.name}`, () => {
    let transport: Transport;
    let client: Client;
    let app: Hono;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
      client = createClient({ transport });
      app = new Hono().route("/admin/jobs", dashboard({ transport, auth: () => true }));
    });

    it("lists the classes that ran, most total time first, charts the top ones, marks deploys", async () => {
      await recordRuns(client, [
        ["Slowish", 300, false],
        ["Slowish", 300, false],
        ...Array.from({ length: 4 }, (): [string, number, boolean] => ["Quick", 5, false]),
        ["Quick", 5, true],
      ]);
      await markDeploy(client, "v2 ships the mailer");
      const page = await html(app, "/admin/jobs/metrics");
      assert.deepEqual(rowsOf(page), [
        ["Slowish", "2", "0", "600 ms", "300 ms"],
        ["Quick", "5", "1", "20 ms", "5.00 ms"],
      ]);
      assert.match(page, /href="\/admin\/jobs\/metrics\/Slowish\?period=1h"/);
      const chart = dataOf(page, "data-metrics");
      assert.equal(chart.t.length, 60, "an hour of minutes");
      assert.deepEqual(chart.jobs.map((j: { name: string }) => j.name), ["Slowish", "Quick"]);
      assert.equal(sum(chart.jobs[0].ms), 600);
      assert.ok(
        chart.jobs[0].ms.slice(-2).includes(600),
        "in this minute's bucket, the last (or, past a minute, the one before)",
      );
      assert.equal(chart.marks.length, 1);
      assert.equal(chart.marks[0][1], "v2 ships the mailer");
      assert.match(page, /Deploys: .*v2 ships the mailer/);
      assert.match(page, /<option value="1h" selected="">Last 1h<\/option>/);
      assert.match(page, /in 1-minute buckets/);

      assert.deepEqual(rowsOf(await html(app, "/admin/jobs/metrics?substr=QUI")).map((r) => r[0]), ["Quick"]);
      assert.match(await html(app, "/admin/jobs/metrics?substr=nomatch"), /No job class matching “nomatch” ran/);
      const day = await html(app, "/admin/jobs/metrics?period=24h");
      assert.deepEqual(rowsOf(day).map((r) => r[0]), ["Slowish", "Quick"]);
      assert.equal(dataOf(day, "data-metrics").t.length, 144, "24 hours of 10-minute buckets");
      assert.match(day, /in 10-minute buckets/);
    });

    it("a class's page: totals, series, Sidekiq's 26-bucket histogram; 10-minute periods have none", async () => {
      await recordRuns(client, [["Slowish", 300, false], ["Slowish", 280, false], ["Slowish", 10, true]]);
      await markDeploy(client, "v3");
      const page = await html(app, "/admin/jobs/metrics/Slowish");
      assert.match(page, /<span>Runs<\/span><b>3<\/b>/);
      assert.match(page, /<span>Failures<\/span><b>1<\/b>/);
      assert.match(page, /<span>Average time<\/span><b>290 ms<\/b>/);
      const series = dataOf(page, "data-series");
      assert.equal(series.t.length, 60);
      const minute = series.p.findIndex((p: number) => p > 0);
      assert.deepEqual([series.p[minute], series.f[minute], series.avg[minute], sum(series.p)], [3, 1, 290, 3]);
      assert.equal(series.avg[0], null, "no average where nothing succeeded");
      assert.equal(series.marks[0][1], "v3");
      const histogram = dataOf(page, "data-histogram");
      assert.deepEqual(histogram.labels, HISTOGRAM_LABELS);
      assert.equal(histogram.counts.length, 26);
      assert.equal(histogram.counts[7], 2, "280 and 300 ms fall in 225-335 ms; the failure is not timed");
      assert.match(page, /<th>under 335ms<\/th><td class="num">2<\/td>/);
      assert.match(page, /href="\/admin\/jobs\/metrics\?period=1h">Metrics<\/a>/);

      const day = await html(app, "/admin/jobs/metrics/Slowish?period=72h");
      assert.match(day, /No histogram for this period/);
      assert.doesNotMatch(day, /data-histogram/);
      assert.match(await html(app, "/admin/jobs/metrics/Nope"), /Nope did not run in the last 1h/);
      const odd = "Billing::Invoice/Send Job";
      await recordRuns(client, [[odd, 50, false]]);
      const listed = await html(app, "/admin/jobs/metrics");
      assert.ok(listed.includes(`href="/admin/jobs/metrics/${encodeURIComponent(odd)}?period=1h"`));
      assert.match(await html(app, `/admin/jobs/metrics/${encodeURIComponent(odd)}`), /<span>Runs<\/span><b>1<\/b>/);
    });

    it("shows what a real drain's jobs wrote", async () => {
      await client.pushBulk(Fine, [[1], [2], [3]]);
      await drain({ transport, jobs: [Fine], budgetMs: 5_000, logger: silentLogger });
      const rows = rowsOf(await html(app, "/admin/jobs/metrics"));
      assert.deepEqual(rows.map((r) => r.slice(0, 3)), [["Fine", "3", "0"]]);
    });

    it("metricsFormat: sidekiq7 reads Sidekiq 7's keys, and its periods stop at 8h", async () => {
      const at = new Date();
      const tracker = new MetricsTracker({ sidekiq7: true });
      tracker.record("Legacy", 40, false);
      await tracker.flush(transport, client.keys, { now: at });
      const k = client.keys;
      await transport.call(
        "DEL",
        k.metrics(minuteBucket(at)),
        k.metrics(tenMinuteBucket(at)),
        k.histogram("Legacy", histogramWindow(at)),
      );
      const seven = new Hono().route("/j", dashboard({ transport, auth: () => true, metricsFormat: "sidekiq7" }));
      const page = await html(seven, "/j/metrics");
      assert.deepEqual(rowsOf(page).map((r) => r.slice(0, 2)), [["Legacy", "1"]]);
      assert.doesNotMatch(page, /value="24h"/);
      assert.equal(dataOf(await html(seven, "/j/metrics/Legacy"), "data-histogram").counts[2], 1, "40 ms: 30-45 ms");
      assert.match(
        await html(seven, "/j/metrics?period=24h", 400),
        /&#39;period&#39; must be one of 1h, 2h, 4h, 8h: current value is &quot;24h&quot;/,
      );
      assert.match(await html(app, "/admin/jobs/metrics"), /No jobs ran/, "the default reads Sidekiq 8's keys only");
    });

    it("says what an empty page means", async () => {
      const page = await html(app, "/admin/jobs/metrics");
      assert.match(page, /No jobs ran in the last 1h/);
      assert.match(page, /Workers write each job class/);
      assert.doesNotMatch(page, /data-metrics/);
    });

    it("each page costs four commands, whatever the period and the number of classes", async () => {
      await recordRuns(client, [["Slowish", 300, false]]);
      const paths = [
        "/admin/jobs/metrics",
        "/admin/jobs/metrics?period=72h&substr=slow",
        "/admin/jobs/metrics/Slowish",
        "/admin/jobs/metrics/Slowish?period=8h",
      ];
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
      await recordRuns(client, Array.from({ length: 40 }, (_, i): [string, number, boolean] => [`Job${i}`, i, false]));
      const large = await measure();
      assert.deepEqual(small, [4, 4, 4, 4], "three for the header, one script call for the metrics");
      assert.deepEqual(large, small);
      assert.deepEqual(trips, [3, 3, 3, 3], "round trips: the header's reads and the page's own go out side by side");
      console.log(`dashboard Metrics on ${target.name}: commands per load ${paths.map((p, i) => `${p} ${small[i]}`)}`);
    });
  });
}
