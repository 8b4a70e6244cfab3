/**
 * The dashboard in a real browser: playwright-core drives Debian's
 * chromium (headless) against the dashboard served by a real HTTP server
 * (node:http) over a private redis-server, with an edgekiq worker running.
 * Every page loads without a console error or CSP violation; the live chart
 * advances as jobs run; Retry on a failed job makes it run; Quiet reaches a
 * process; bulk and "all" deletes work (the latter after a confirm dialog,
 * or a confirmation page without JavaScript); the Live Poll toggle
 * refreshes a list in place; a poll interval forced below 2 s in
 * localStorage is still 2 s, and a hidden tab does not poll; a form posted
 * from another origin is refused. The Metrics pages draw their charts once
 * jobs have run (the overview, a class's series and histogram); on the
 * Periodic page Pause, Resume and Enqueue now act on a schedule.
 *
 * Issue 30 (an operator's review): every destructive action asks first (a
 * dialog, or a confirmation page without JavaScript); the nav badges follow
 * Live Poll; the live chart draws a steady line for a steady load from a
 * worker that beats every 5 s (the per-poll change it used to plot swings
 * between 0 and a beat's worth), labels its axis with distinct times from
 * the first load and names its zone (UTC, or local on request); a Quiet
 * shows as requested until the process's next heartbeat confirms it; at
 * 390×844 the nav folds (with and without JavaScript), nothing overflows,
 * every button is on screen, Retries' errors get the width and Busy's
 * Quiet/Stop are reachable.
 *
 * Node only (playwright-core drives the browser from Node). Skips loudly
 * without chromium; fails instead under CI=true. Screenshots of the
 * Dashboard, Busy, a queue, Retries, a job, Metrics, a class's metrics and Periodic (and, at
 * 390×844, the Dashboard, a queue, Retries, Busy and a job) go to $EDGEKIQ_SCREENSHOTS if set
 * (docs/screenshots, shown in docs/features.md and docs/dashboard.md), else to a temporary directory.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Hono } from "hono";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createClient, defineJob, type Transport, type Worker } from "../../mod.ts";
import { PeriodicSet } from "../../src/features/mod.ts";
import { enqueueDuePeriodic, type PeriodicSchedule } from "../../src/features/periodic/mod.ts";
import { dashboard, verifyBasic } from "../../src/web/mod.ts";
import { runtimeName } from "../support/child.ts";
import { redisAvailable, waitFor } from "../support/matrix.ts";
import { serve, type Served } from "../support/serve.ts";
import { testWorker } from "../support/worker.ts";
import { seedMetrics, seedShowcase } from "./seed.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = [
  "--no-sandbox",
  "--headless",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const USER = { username: "ops", password: "browser-test-secret" };

function skipReason(): string | false {
  if (runtimeName !== "node") return `playwright-core drives the browser from Node; this is ${runtimeName}`;
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === "true") throw new Error(`CI=true but there is no chromium at ${CHROMIUM}`);
    console.error(`SKIP: no chromium at ${CHROMIUM} (apt-get install chromium) — browser tests skipped`);
    return "no chromium";
  }
  return !redisAvailable() && "no redis";
}
const skip = skipReason();
const SLOW = { timeout: 60_000 };
// Their jobs go to queues the test's worker does not read, so they wait there (and never block its slots).
const SCHEDULES: PeriodicSchedule[] = [
  {
    cron: "30 2 * * *",
    tz: "Europe/Berlin",
    job: "GenerateMonthlyReport",
    queue: "reports",
    args: ["daily"],
    name: "nightly-report",
  },
  {
    cron: "0 7 * * MON-FRI",
    tz: "America/New_York",
    job: "SendDigest",
    queue: "mail",
    args: ["weekday"],
    name: "weekday-digest",
  },
  { every: 60, job: "RefreshExchangeRates", queue: "maintenance", name: "exchange-rates" },
  { every: 900, job: "PurgeExpiredSessions", queue: "maintenance", name: "purge-sessions", missed: { catchUp: 3 } },
  { cron: "0 0 1 * *", tz: "UTC", job: "CloseBillingPeriod", queue: "reports", name: "month-end-billing" },
];

describe("dashboard in chromium", { skip }, () => {
  let server: { url: string; stop(): Promise<void> } | null;
  let transport: Transport;
  let served: Served;
  let evil: Served;
  let browser: Browser;
  let context: BrowserContext;
  let base: string;
  let shots: string;
  let release!: () => void;
  const workers: Worker[] = [];
  const problems: string[] = [];

  const Work = defineJob({
    name: "SendInvoiceEmail",
    perform: async (ctx, _account: number) => void (await transport.call("RPUSH", "ran", ctx.jid)),
  });
  const Flaky = defineJob({
    name: "SyncStripeCharges",
    retry: 5,
    backtrace: 8,
    perform: async (ctx, _customer: string) => {
      if ((await transport.call("GET", "mode")) === "fail") {
        throw new Error("Stripe API timed out after 30s (HTTP 504)");
      }
      await transport.call("RPUSH", "ran", ctx.jid);
    },
  });
  let gate: Promise<void>;
  const Slow = defineJob({ name: "GenerateMonthlyReport", perform: (_ctx, _month: string) => gate });

  async function open(path: string, ctx: BrowserContext = context): Promise<Page> {
    const page = await ctx.newPage();
    page.on("console", (m) => m.type() === "error" && problems.push(`${path}: console: ${m.text()}`));
    page.on("pageerror", (e) => problems.push(`${path}: page error: ${e.message}`));
    const res = await page.goto(`${base}${path}`);
    assert.equal(res?.status(), 200, path);
    await page.waitForLoadState("load");
    return page;
  }
  const shot = (page: Page, name: string, fullPage = false) =>
    page.screenshot({ path: join(shots, `${name}.png`), fullPage });

  before(async () => {
    const { testRedis } = await import("../support/redis.ts");
    const { ioredisTransport } = await import("../../src/transport/adapters/ioredis/ioredis_transport.ts");
    server = await testRedis();
    transport = ioredisTransport({ url: server!.url });
    gate = new Promise<void>((r) => (release = r));
    const app = new Hono().route(
      "/admin/jobs",
      dashboard({ transport, auth: (c) => verifyBasic(c.req.raw, USER.username, USER.password) }),
    );
    served = await serve((req) => app.fetch(req));
    base = `${served.url}/admin/jobs`;
    // Another origin (localhost, not 127.0.0.1): its page posts a form to the dashboard.
    const attack = `<!doctype html><form id="f" method="post" action="${base}/dead/all">` +
      `<input name="action" value="delete"><input name="token" value="AAAAAAAAAAAAAAAAAAAAAA">` +
      `<input name="confirm" value="1"></form><script>document.getElementById("f").submit()</script>`;
    evil = await serve(() => new Response(attack, { headers: { "content-type": "text/html" } }));
    shots = process.env.EDGEKIQ_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), "edgekiq-shots-"));
    mkdirSync(shots, { recursive: true });

    await seedShowcase(transport);
    await seedMetrics(transport);
    const worker = testWorker(transport, {
      jobs: [Work, Flaky, Slow],
      concurrency: 5,
      heartbeatInterval: 0.5,
      tag: "web-1",
      labels: ["blue", "eu-west"],
      periodic: SCHEDULES,
      periodicOwner: "billing",
    });
    workers.push(worker);
    await worker.run();
    // The worker registered the schedules; the ones due now are enqueued (its poller is off in tests).
    await enqueueDuePeriodic({ client: createClient({ transport }), schedules: SCHEDULES });

    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 30_000 });
    context = await browser.newContext({ httpCredentials: USER, viewport: { width: 1280, height: 860 } });
  });

  after(async () => {
    release?.();
    await Promise.allSettled(workers.map((w) => w.stop()));
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await served?.stop();
    await evil?.stop();
    await transport?.close();
    await server?.stop();
    if (!process.env.EDGEKIQ_SCREENSHOTS && shots) rmSync(shots, { recursive: true, force: true });
  });

  it("every page loads without console errors or CSP violations", SLOW, async () => {
    await createClient({ transport }).push(Slow, ["2024-05"]);
    await createClient({ transport }).push(Slow, ["2024-06"]);
    await waitFor(async () => (await transport.call("HGET", workers[0].identity, "busy")) === "2", "two jobs running");
    const [, score] = (await transport.call("ZRANGE", "retry", 0, 0, "WITHSCORES")) as string[];
    const jobPath = `/retries/${Number(score)}-0a1b2c3d4e5f60718293a4b0`;
    const pages = ["", "/busy", "/queues", "/queues/webhooks", "/retries", "/scheduled", "/dead", jobPath];
    pages.push("/metrics", "/metrics/SyncStripeCharges?period=2h", "/periodic", "/periodic/nightly-report");
    for (const path of pages) {
      const page = await open(path);
      assert.ok(await page.locator("main").isVisible(), path);
      if (path === "") {
        await page.waitForSelector("#history-chart canvas");
        await page.waitForSelector("#live-chart canvas");
      }
      const name = {
        "": "dashboard",
        "/busy": "busy",
        "/queues/webhooks": "queue",
        "/retries": "retries",
        [jobPath]: "job",
      }[path];
      if (name && name !== "dashboard") await shot(page, name, name === "job");
      await page.close();
    }
    assert.deepEqual(problems, []);
  });

  it("the live chart advances when jobs run, and the counters follow", SLOW, async () => {
    const page = await open("/?interval=2");
    await page.waitForSelector("#live-chart canvas");
    // Jobs count from the chart's first reading: a burst flushed before it would be in its baseline.
    await page.waitForFunction(() => Number(document.getElementById("live-chart")!.getAttribute("data-readings")) >= 1);
    const initial = Number((await page.textContent('.cards [data-stat="processed"]'))!.replace(/,/g, ""));
    const client = createClient({ transport });
    const ran = Number(await transport.call("LLEN", "ran"));
    // Bursts of jobs over ~14 s: the chart plots what ran in each 2 s poll.
    const bursts = [15, 40, 25, 60, 35, 80, 45];
    for (const n of bursts) {
      await client.pushBulk(Work, Array.from({ length: n }, (_, j) => [j]));
      await new Promise((r) => setTimeout(r, 2_000));
    }
    const total = bursts.reduce((a, b) => a + b, 0);
    await waitFor(async () => Number(await transport.call("LLEN", "ran")) >= ran + total, "jobs ran");
    await page.waitForFunction(
      (t) => Number(document.getElementById("live-chart")!.getAttribute("data-processed")) >= t,
      total,
      { timeout: 20_000 },
    );
    // Points start once a whole 20 s window has been read.
    await page.waitForFunction(
      () => Number(document.getElementById("live-chart")!.getAttribute("data-points")) >= 3,
      null,
      {
        timeout: 20_000,
      },
    );
    // The counters follow /stats: the card reaches the flushed total without a reload.
    const flushed = Number(await transport.call("GET", "stat:processed"));
    await page.waitForFunction(
      (t) => Number(document.querySelector('.cards [data-stat="processed"]')!.textContent!.replace(/,/g, "")) >= t,
      flushed,
      { timeout: 10_000 },
    );
    assert.ok(flushed > initial, `${flushed} > ${initial}`);
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("the Metrics page charts the classes that ran; a class's page draws its series and histogram", SLOW, async () => {
    const page = await open("/metrics");
    await page.waitForSelector("#metrics-chart canvas");
    const row = page.locator("tr", { hasText: "SendInvoiceEmail" });
    assert.equal(await row.count(), 1, "the worker's jobs (the live chart's test ran them) are in the table");
    const runs = Number((await row.locator("td").nth(1).textContent())!.replace(/,/g, ""));
    const ran = Number(await transport.call("LLEN", "ran"));
    assert.ok(runs >= ran, `${runs} runs listed, at least the ${ran} the worker ran plus the seeded ones`);
    assert.equal(await page.getAttribute("#metrics-chart", "data-metric"), "ms");
    assert.equal(await page.locator("#metrics-chart .u-legend .u-series").count(), 6, "x and the top five classes");
    await page.selectOption("#metric", "p");
    assert.equal(await page.getAttribute("#metrics-chart", "data-metric"), "p");
    await page.waitForSelector("#metrics-chart canvas");
    await page.selectOption("#metric", "ms");
    await page.setViewportSize({ width: 1100, height: 860 }); // after a redraw, a resize still fits the chart
    await page.waitForFunction(() => document.querySelector("#metrics-chart canvas")!.clientWidth < 1100);
    await page.setViewportSize({ width: 1280, height: 860 });
    await shot(page, "metrics", true);
    await page.click('a[href*="/metrics/SyncStripeCharges"]');
    await page.waitForURL(/\/metrics\/SyncStripeCharges\?period=1h$/);
    await page.waitForSelector("#job-chart canvas");
    await page.waitForSelector("#histogram-chart canvas");
    await page.selectOption('select[name="period"]', "4h");
    await page.click('#metrics-form button[type="submit"]');
    await page.waitForURL(/period=4h$/);
    await page.waitForSelector("#histogram-chart canvas");
    await shot(page, "metrics-job", true);
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("Pause, Resume and Enqueue now on a periodic schedule", SLOW, async () => {
    const set = new PeriodicSet(createClient({ transport }));
    const page = await open("/periodic");
    const row = () => page.locator("tr", { hasText: "nightly-report" });
    assert.match(await row().textContent() ?? "", /30 2 \* \* \*.*Europe\/Berlin.*enabled/s);
    await row().locator('button[value="pause"]').click();
    await page.waitForURL(/notice=paused/);
    assert.equal((await set.get("nightly-report"))!.enabled, false);
    assert.match(await row().textContent() ?? "", /paused/);
    await row().locator('button[value="resume"]').click();
    await page.waitForURL(/notice=resumed/);
    assert.equal((await set.get("nightly-report"))!.enabled, true);
    const before = Number(await transport.call("LLEN", "queue:reports"));
    await row().locator('button[value="enqueue"]').click();
    await page.waitForURL(/notice=run-now/);
    assert.equal(await transport.call("LLEN", "queue:reports"), before + 1);
    const jid = (await set.get("nightly-report"))!.lastJid!;
    assert.ok((await row().textContent())!.includes(jid), "the row shows the new last jid");
    await page.goto(`${base}/periodic`);
    await page.locator("tr", { hasText: "weekday-digest" }).locator('button[value="pause"]').click();
    await page.waitForURL(/notice=paused/);
    await shot(page, "periodic", true);
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("clicking Retry on a failed job makes it run", SLOW, async () => {
    await transport.call("SET", "mode", "fail");
    const jid = (await createClient({ transport }).push(Flaky, ["cus_9f2a"]))!;
    await waitFor(
      async () => ((await transport.call("ZRANGE", "retry", 0, -1)) as string[]).some((r) => r.includes(jid)),
      "the failure in the retry set",
    );
    await transport.call("SET", "mode", "ok");
    const page = await open("/retries");
    await page.click(`a[href*="${jid}"] >> nth=-1`);
    await page.waitForURL(new RegExp(`${jid}$`));
    assert.match(await page.textContent("main") ?? "", /Stripe API timed out after 30s/);
    assert.match(await page.textContent("main") ?? "", /dashboard\.test\.ts/, "the backtrace is shown");
    await page.click('button[value="retry"]');
    await page.waitForURL(/notice=retried/);
    assert.match(await page.textContent(".notice") ?? "", /Retried 1 job/);
    await waitFor(
      async () => ((await transport.call("LRANGE", "ran", 0, -1)) as string[]).includes(jid),
      "the retried job ran",
    );
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("Quiet on the Busy page reaches the process", SLOW, async () => {
    // A slow beat, so the page can be seen before the process confirms.
    const extra = testWorker(transport, { jobs: [Work], heartbeatInterval: 3, tag: "batch-2" });
    workers.push(extra);
    await extra.run();
    await waitFor(async () => (await transport.call("HGET", extra.identity, "info")) !== null, "its heartbeat");
    const page = await open("/busy");
    const row = page.locator("tr", { hasText: extra.identity });
    await row.locator('button[value="quiet"]').click();
    await page.waitForURL(/notice=quieted/);
    // Until a heartbeat confirms it, the row says it was asked (and offers no second Quiet).
    const asked = page.locator("tr", { hasText: extra.identity });
    if ((await transport.call("HGET", extra.identity, "quiet")) !== "true") {
      assert.equal(await asked.locator(".status.pending").textContent(), "quiet requested");
      assert.equal(await asked.locator('button[value="quiet"]').count(), 0);
    }
    await waitFor(async () => (await transport.call("HGET", extra.identity, "quiet")) === "true", "quiet", 15_000);
    await page.reload();
    assert.equal(await page.locator("tr", { hasText: extra.identity }).locator(".status.quiet").count(), 1);
    assert.equal(await page.locator("tr", { hasText: extra.identity }).locator(".status.pending").count(), 0);
    await page.close();
    assert.deepEqual(problems, []);
  });

  it(
    "a queued job's Delete, selected Kill and a job's Delete ask first; without JavaScript a page asks",
    SLOW,
    async () => {
      const client = createClient({ transport });
      await client.pushBulk("PruneAuditLog", [["2024-01"], ["2024-02"], ["2024-03"]], { queue: "confirm-me" });
      const page = await open("/queues/confirm-me");
      const dialogs: string[] = [];
      page.once("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));
      await page.locator('button.danger:has-text("Delete")').first().click();
      await waitFor(() => dialogs.length === 1, "the dialog");
      assert.deepEqual(dialogs, ["Are you sure you want to delete this PruneAuditLog job?"]);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await transport.call("LLEN", "queue:confirm-me"), 3, "dismissed: nothing deleted");
      page.once("dialog", (d) => void d.accept());
      await page.locator('button.danger:has-text("Delete")').first().click();
      await page.waitForURL(/notice=deleted/);
      assert.equal(await transport.call("LLEN", "queue:confirm-me"), 2);

      // Selected rows on Retries: the question counts them; dismissed, nothing moves.
      const now = Date.now() / 1000;
      for (let i = 0; i < 3; i++) {
        const job = { class: "ShipOrder", args: [i], jid: `ship${i}`, queue: "default", error_class: "Timeout" };
        await transport.call("ZADD", "retry", now + 3600 + i, JSON.stringify(job));
      }
      await page.goto(`${base}/retries?substr=ShipOrder`);
      await page.locator('input[name="key"]').nth(0).check();
      await page.locator('input[name="key"]').nth(1).check();
      page.once("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));
      await page.click('.bar button[value="kill"]');
      await waitFor(() => dialogs.length === 2, "the second dialog");
      assert.equal(dialogs[1], "Are you sure you want to kill these 2 retries? They move to the Dead set.");
      const dead = Number(await transport.call("ZCARD", "dead"));
      page.once("dialog", (d) => void d.accept());
      await page.click('.bar button[value="kill"]');
      await page.waitForURL(/notice=killed/);
      assert.equal(await transport.call("ZCARD", "dead"), dead + 2);
      await transport.call("DEL", "dead"); // the tests below start from an empty Dead set

      // One job's page: Delete asks.
      const [, score] = (await transport.call(
        "ZRANGE",
        "retry",
        "(" + (now + 3601),
        "+inf",
        "BYSCORE",
        "WITHSCORES",
        "LIMIT",
        0,
        1,
      )) as string[];
      await page.goto(`${base}/retries/${Number(score)}-ship2`);
      page.once("dialog", (d) => void (dialogs.push(d.message()), d.accept()));
      await page.click('button[value="delete"]');
      await page.waitForURL(/notice=deleted/);
      assert.equal(dialogs[2], "Are you sure you want to delete this retry?");
      await page.close();

      const noJs = await browser.newContext({ httpCredentials: USER, javaScriptEnabled: false });
      try {
        const plain = await open("/queues/confirm-me", noJs);
        await plain.locator('button.danger:has-text("Delete")').first().click();
        assert.match(await plain.textContent("main") ?? "", /Are you sure\?.*delete this PruneAuditLog job\?/s);
        assert.equal(await transport.call("LLEN", "queue:confirm-me"), 2);
        await plain.click("text=Yes, do it");
        await plain.waitForURL(/notice=deleted/);
        assert.equal(await transport.call("LLEN", "queue:confirm-me"), 1);
      } finally {
        await noJs.close();
      }
      assert.deepEqual(problems, []);
    },
  );

  it("the nav badges follow Live Poll: one source with the counters", SLOW, async () => {
    const page = await open("/scheduled?interval=2");
    await page.click("#live-toggle");
    const before = Number(await transport.call("ZCARD", "dead"));
    await transport.call("ZADD", "dead", Date.now() / 1000, JSON.stringify({ class: "Z", args: [], jid: "badge1" }));
    const shown = () =>
      page.evaluate(() =>
        [".nav [data-stat=dead]", "#summary [data-stat=dead]"].map((s) => document.querySelector(s)!.textContent)
      );
    await page.waitForFunction(
      (n) => document.querySelector(".nav [data-stat=dead]")!.textContent === String(n),
      before + 1,
      { timeout: 10_000 },
    );
    assert.deepEqual(await shown(), [String(before + 1), String(before + 1)]);
    await transport.call("DEL", "dead");
    await page.click("#live-toggle");
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("the live chart: a steady load draws a steady line; distinct times from the first load, its zone named", {
    timeout: 120_000,
  }, async () => {
    const page = await open("/?interval=2");
    await page.waitForSelector("#live-chart canvas");
    // First load, no data yet: the time axis already spans the last minutes with distinct labels, in UTC.
    const axis = () =>
      page.evaluate(() => {
        const plot = (document.getElementById("live-chart") as unknown as {
          edgekiqPlot: { axes: Array<{ _values: string[] | null; label?: string }> };
        }).edgekiqPlot;
        return { values: plot.axes[0]._values ?? [], label: plot.axes[0].label };
      });
    const first = await axis();
    assert.ok(first.values.length >= 3, `${first.values.length} labels`);
    assert.equal(new Set(first.values).size, first.values.length, `distinct: ${first.values.join(" ")}`);
    const utcNow = new Date().toISOString().slice(11, 16);
    assert.ok(first.values.some((v) => v.slice(0, 2) === utcNow.slice(0, 2)), `UTC hours: ${first.values}`);
    assert.equal(first.label, "UTC");
    await page.click("#live-zone");
    assert.match((await axis()).label ?? "", /^Local time/);
    assert.equal(await page.getAttribute("#live-chart", "data-zone"), "local");
    await page.click("#live-zone");
    assert.equal((await axis()).label, "UTC");

    // A steady load on a worker that beats every 5 s (slower than the 2 s poll).
    const Steady = defineJob({ name: "SteadyJob", queue: "steady", perform: () => {} });
    const worker = testWorker(transport, { jobs: [Steady], queues: ["steady"], heartbeatInterval: 5, concurrency: 5 });
    workers.push(worker);
    await worker.run();
    const client = createClient({ transport });
    let pushing = true;
    const load = (async () => {
      while (pushing) {
        await client.pushBulk(Steady, [[], [], [], [], []]);
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    try {
      await page.waitForFunction(
        () =>
          ((document.getElementById("live-chart") as unknown as { edgekiqSeries?: { rates: number[] } })
            .edgekiqSeries?.rates.length ?? 0) >= 14,
        null,
        { timeout: 90_000, polling: 500 },
      );
    } finally {
      pushing = false;
      await load;
    }
    const series = await page.evaluate(() =>
      (document.getElementById("live-chart") as unknown as { edgekiqSeries: { rates: number[]; deltas: number[] } })
        .edgekiqSeries
    );
    // Skip the points whose window began before the load did.
    const rates = series.rates.slice(-6);
    const deltas = series.deltas.slice(-12);
    const spread = (xs: number[]) => {
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      return Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length) / mean;
    };
    console.log(
      `live chart, steady ~10 jobs/s, 5 s beats, 2 s polls: per-poll change ${deltas.join(" ")} ` +
        `(cv ${spread(deltas).toFixed(2)}); 20 s rate ${rates.map((r) => r.toFixed(1)).join(" ")} /s ` +
        `(cv ${spread(rates).toFixed(2)})`,
    );
    assert.ok(deltas.includes(0), "the counters move only when the worker beats (the old chart's zeros)");
    assert.ok(rates.every((r) => r > 0), `no zeros: ${rates}`);
    assert.ok(Math.max(...rates) / Math.min(...rates) < 1.6, `steady: ${rates}`);
    await shot(page, "dashboard", true);
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("at 390×844: the nav folds, nothing overflows, every button is on screen", { timeout: 120_000 }, async () => {
    const phone = await browser.newContext({ httpCredentials: USER, viewport: { width: 390, height: 844 } });
    const noJs = await browser.newContext({
      httpCredentials: USER,
      viewport: { width: 390, height: 844 },
      javaScriptEnabled: false,
    });
    try {
      const [, score] = (await transport.call("ZRANGE", "retry", 0, 0, "WITHSCORES")) as string[];
      const [raw] = (await transport.call("ZRANGE", "retry", 0, 0)) as string[];
      const jobPath = `/retries/${Number(score)}-${JSON.parse(raw).jid}`;
      const pages: Array<[string, string]> = [
        ["", "mobile-dashboard"],
        ["/queues", ""],
        ["/queues/webhooks", "mobile-queue"],
        ["/retries", "mobile-retries"],
        ["/busy", "mobile-busy"],
        [jobPath, "mobile-job"],
      ];
      for (const [path, name] of pages) {
        const page = await open(path, phone);
        const layout = await page.evaluate(() => {
          const offscreen = [...document.querySelectorAll("button, a.btn, .nav-button, input, select")]
            .filter((el) => (el as HTMLElement).offsetParent !== null)
            .map((el) => [el.textContent?.trim() || el.getAttribute("name"), el.getBoundingClientRect()] as const)
            .filter(([, r]) => r.width > 0 && (r.left < 0 || r.right > globalThis.innerWidth + 0.5))
            .map(([what, r]) => `${what} at ${Math.round(r.left)}–${Math.round(r.right)}`);
          return {
            header: document.querySelector("header.top")!.getBoundingClientRect().height,
            width: document.documentElement.scrollWidth,
            offscreen,
            summary: getComputedStyle(document.getElementById("summary")!).display,
          };
        });
        assert.ok(layout.header <= 60, `${path || "/"}: the header is ${layout.header} px tall`);
        assert.ok(layout.width <= 390, `${path || "/"}: the page is ${layout.width} px wide`);
        assert.deepEqual(layout.offscreen, [], `${path || "/"}: controls off screen`);
        if (path === "") assert.equal(layout.summary, "none", "the counters are not repeated above the cards");
        if (path === "/retries") {
          const error = await page.locator("td.args:has(b)").first().boundingBox();
          assert.ok(error && error.width >= 300, `the error has ${error?.width} px`);
          assert.ok(
            await page.locator("tbody .abs").first().isVisible(),
            "the absolute time is shown, not only on hover",
          );
        }
        if (path === "/busy") {
          for (const action of ["quiet", "stop"]) {
            const button = page.locator(`tbody button[value="${action}"]`).first();
            if (await button.count() === 0) continue;
            const box = (await button.boundingBox())!;
            assert.ok(box.x >= 0 && box.x + box.width <= 390, `${action} at ${box.x}`);
          }
          assert.ok(await page.locator('tbody button[value="stop"]').count() > 0, "Stop is offered");
        }
        if (name) await shot(page, name, name === "mobile-job" || name === "mobile-retries");
        await page.close();
      }
      // The folded nav opens with a tap, with or without JavaScript, and its links go places.
      for (const ctx of [phone, noJs]) {
        const page = await open("/busy", ctx);
        assert.equal(await page.locator(".nav").isVisible(), false, "folded");
        await page.click(".nav-button");
        assert.ok(await page.locator('.nav a:has-text("Retries")').isVisible());
        const height = (await page.locator("header.top").boundingBox())!.height;
        assert.ok(height < 500, `open: ${height} px`);
        await page.click('.nav a:has-text("Retries")');
        await page.waitForURL(/\/retries$/);
        await page.close();
      }
    } finally {
      await phone.close();
      await noJs.close();
    }
    assert.deepEqual(problems, []);
  });

  it("bulk delete of selected rows; delete all after the confirm dialog", SLOW, async () => {
    const now = Date.now() / 1000;
    for (let i = 0; i < 5; i++) {
      await transport.call(
        "ZADD",
        "dead",
        now - i,
        JSON.stringify({ class: "Gone", args: [i], jid: `dead${i}`, queue: "default" }),
      );
    }
    const page = await open("/dead");
    assert.equal(await page.locator('input[name="key"]').count(), 5);
    await page.check("[data-select-all]");
    const asked: string[] = [];
    page.once("dialog", (d) => void (asked.push(d.message()), d.accept()));
    await page.click('.bar button[value="delete"]');
    await page.waitForURL(/notice=deleted/);
    assert.deepEqual(asked, ["Are you sure you want to delete these 5 dead jobs?"]);
    assert.match(await page.textContent(".notice") ?? "", /Deleted 5 jobs/);
    assert.equal(await transport.call("ZCARD", "dead"), 0);

    for (let i = 0; i < 3; i++) {
      await transport.call(
        "ZADD",
        "dead",
        now - i,
        JSON.stringify({ class: "Gone", args: [i], jid: `again${i}`, queue: "default" }),
      );
    }
    await page.goto(`${base}/dead`);
    page.once("dialog", (d) => void d.dismiss());
    await page.click('form[action$="/dead/all"] button[value="delete"]');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await transport.call("ZCARD", "dead"), 3, "dismissed: nothing deleted");
    page.once("dialog", (d) => {
      assert.match(d.message(), /Delete all 3 dead jobs\?/);
      void d.accept();
    });
    await page.click('form[action$="/dead/all"] button[value="delete"]');
    await page.waitForURL(/notice=deleted/);
    assert.equal(await transport.call("ZCARD", "dead"), 0);
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("without JavaScript, delete all asks on a confirmation page", SLOW, async () => {
    await transport.call(
      "ZADD",
      "dead",
      Date.now() / 1000,
      JSON.stringify({ class: "Gone", args: [], jid: "nojs", queue: "q" }),
    );
    const noJs = await browser.newContext({ httpCredentials: USER, javaScriptEnabled: false });
    try {
      const page = await open("/dead", noJs);
      await page.click('form[action$="/dead/all"] button[value="delete"]');
      assert.match(await page.textContent("main") ?? "", /Are you sure\?.*Delete all 1 dead job\?/s);
      assert.equal(await transport.call("ZCARD", "dead"), 1);
      await page.click("text=Yes, do it");
      await page.waitForURL(/notice=deleted/);
      assert.equal(await transport.call("ZCARD", "dead"), 0);
    } finally {
      await noJs.close();
    }
  });

  it("the Live Poll toggle refreshes a list in place", SLOW, async () => {
    const page = await open("/scheduled?interval=2");
    const before = await page.locator('input[name="key"]').count();
    await page.click("#live-toggle");
    assert.equal(await page.getAttribute("#live-toggle", "aria-pressed"), "true");
    await createClient({ transport }).push(Work, [42], { in: 9000 });
    await page.waitForFunction((n) => document.querySelectorAll('input[name="key"]').length === n + 1, before, {
      timeout: 10_000,
    });
    await page.click("#live-toggle"); // off again, for the other tests' pages
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("a poll interval forced below 2 s in localStorage still polls every 2 s", SLOW, async () => {
    const page = await context.newPage();
    await page.addInitScript(() => localStorage.setItem("edgekiq.interval", "0.01"));
    let polls = 0;
    page.on("request", (r) => void (r.url().endsWith("/admin/jobs/stats") && polls++));
    await page.goto(`${base}/`);
    await new Promise((r) => setTimeout(r, 5_000));
    assert.ok(polls >= 2 && polls <= 4, `${polls} polls in 5 s`);
    assert.equal(await page.inputValue("#interval"), "2");
    // A hidden tab stops polling; showing it again resumes at once.
    const visibility = (hidden: boolean) =>
      page.evaluate((h) => {
        Object.defineProperty(document, "hidden", { value: h, configurable: true });
        document.dispatchEvent(new Event("visibilitychange"));
      }, hidden);
    await visibility(true);
    const whileHidden = polls;
    await new Promise((r) => setTimeout(r, 4_500));
    assert.equal(polls, whileHidden, "no polls while hidden");
    await visibility(false);
    await waitFor(() => polls > whileHidden, "a poll on return", 3_000);
    await page.close();
  });

  it("a form posted from another origin is refused (403) and changes nothing", SLOW, async () => {
    await transport.call(
      "ZADD",
      "dead",
      Date.now() / 1000,
      JSON.stringify({ class: "Keep", args: [], jid: "keep", queue: "q" }),
    );
    const page = await context.newPage();
    const refused = page.waitForResponse((r) => r.url() === `${base}/dead/all`);
    await page.goto(`http://localhost:${evil.port}/`);
    const res = await refused;
    assert.equal(res.status(), 403);
    assert.equal(res.request().headers()["sec-fetch-site"] ?? "cross-site", "cross-site");
    await page.waitForLoadState("load");
    assert.match(await page.textContent("main") ?? "", /cross-site request refused/);
    assert.equal(await transport.call("ZCARD", "dead"), 1);
    await page.close();
  });
});
