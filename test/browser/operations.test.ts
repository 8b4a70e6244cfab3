/**
 * Issue 29's dashboard controls in a real browser: playwright-core drives
 * Debian's chromium (headless) against the dashboard served over node:http
 * on a private redis-server, with an edgekiq worker running. On the Queues
 * page, Pause asks first (the browser's dialog; dismissed, nothing
 * happens), then the queue shows a paused badge and the worker takes none
 * of its jobs; Resume lets them run. On the Busy page, Cancel on a running
 * job's row asks first, and the job's `ctx.stopping` aborts on the worker.
 * No console error or CSP violation on either page.
 *
 * Node only (playwright-core drives the browser from Node). Skips loudly
 * without chromium; fails instead under CI=true. Screenshots of the Queues
 * page with a paused queue and of the Busy page with its Cancel buttons go
 * to $EDGEKIQ_SCREENSHOTS if set (docs/screenshots), else to a temporary
 * directory.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Hono } from "hono";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createClient, defineJob, Interrupt, type Transport, type Worker } from "../../mod.ts";
import { jobCancellation } from "../../src/features/mod.ts";
import { Queue } from "../../src/api/mod.ts";
import { dashboard, verifyBasic } from "../../src/web/mod.ts";
import { runtimeName } from "../support/child.ts";
import { redisAvailable, waitFor } from "../support/matrix.ts";
import { serve, type Served } from "../support/serve.ts";
import { testWorker } from "../support/worker.ts";
import { seedShowcase } from "./seed.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--no-first-run"];
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

describe("issue 29's dashboard controls in chromium", { skip }, () => {
  let server: { url: string; stop(): Promise<void> } | null;
  let transport: Transport;
  let served: Served;
  let browser: Browser;
  let context: BrowserContext;
  let base: string;
  let shots: string;
  let worker: Worker;
  const problems: string[] = [];
  const ran: string[] = [];
  const stopped: string[] = [];
  const pinged: string[] = [];

  // Mail goes out only while its queue runs; an export runs until it is told to stop.
  const SendNewsletter = defineJob({ name: "SendNewsletter", perform: (ctx, _to: string) => void ran.push(ctx.jid) });
  const Ping = defineJob({ name: "Ping", perform: (ctx) => void pinged.push(ctx.jid) });
  const ExportLedger = defineJob({
    name: "ExportLedger",
    async perform(ctx, _account: string) {
      await new Promise((resolve) => ctx.stopping.addEventListener("abort", resolve, { once: true }));
      stopped.push(`${ctx.jid}: ${(ctx.stopping.reason as Error)?.message}`);
      throw new Interrupt();
    },
  });

  async function open(path: string): Promise<Page> {
    const page = await context.newPage();
    page.on("console", (m) => m.type() === "error" && problems.push(`${path}: console: ${m.text()}`));
    page.on("pageerror", (e) => problems.push(`${path}: page error: ${e.message}`));
    const res = await page.goto(`${base}${path}`);
    assert.equal(res?.status(), 200, path);
    await page.waitForLoadState("load");
    return page;
  }

  before(async () => {
    const { testRedis } = await import("../support/redis.ts");
    const { ioredisTransport } = await import("../../src/transport/adapters/ioredis/ioredis_transport.ts");
    server = await testRedis();
    transport = ioredisTransport({ url: server!.url });
    const cancel = jobCancellation();
    const app = new Hono().route(
      "/admin/jobs",
      dashboard({
        transport,
        features: [cancel],
        auth: (c) => verifyBasic(c.req.raw, USER.username, USER.password),
      }),
    );
    served = await serve((req) => app.fetch(req));
    base = `${served.url}/admin/jobs`;
    shots = process.env.EDGEKIQ_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), "edgekiq-shots-"));
    mkdirSync(shots, { recursive: true });
    await seedShowcase(transport);
    await transport.call("SADD", "queues", "mail"); // a queue the app has used before: listed, empty now
    worker = testWorker(transport, {
      jobs: [SendNewsletter, ExportLedger, Ping],
      queues: ["mail", "exports"],
      concurrency: 5,
      heartbeatInterval: 0.5,
      tag: "ops-1",
      features: [cancel],
    });
    await worker.run();
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 30_000 });
    context = await browser.newContext({ httpCredentials: USER, viewport: { width: 1280, height: 860 } });
  });

  after(async () => {
    await worker?.stop();
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await served?.stop();
    await transport?.close();
    await server?.stop();
    if (!process.env.EDGEKIQ_SCREENSHOTS && shots) rmSync(shots, { recursive: true, force: true });
  });

  it("Pause on the Queues page stops the worker taking a queue's jobs; Resume lets them run", SLOW, async () => {
    const client = createClient({ transport });
    const mail = new Queue(client, "mail");
    const page = await open("/queues");
    const row = () => page.locator("tr", { hasText: "mail" }).filter({ has: page.locator('a[href$="/queues/mail"]') });
    page.once("dialog", (d) => void d.dismiss());
    await row().locator('button[value="pause"]').click();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await mail.isPaused(), false, "dismissed: not paused");
    page.once("dialog", (d) => {
      assert.match(d.message(), /Pause queue "mail"\? No edgekiq process takes its/);
      void d.accept();
    });
    await row().locator('button[value="pause"]').click();
    await page.waitForURL(/notice=queue-paused/);
    assert.equal(await mail.isPaused(), true);
    assert.equal(await row().locator(".status.quiet", { hasText: "paused" }).count(), 1);
    // A pause takes effect at a process's next fetch; a wait already under way on the queue (idle, at most
    // blockSeconds) may still take a job arriving during it. A job pushed after the pause to another queue is
    // taken by a fetch begun after it, and that fetch's process watches the paused queue no more.
    const ping = await client.push(Ping, [], { queue: "exports" });
    await waitFor(() => pinged.includes(ping!), "a fetch after the pause");

    await client.pushBulk(SendNewsletter, Array.from({ length: 12 }, (_, i) => [`reader${i}@example.com`]), {
      queue: "mail",
    });
    await page.reload();
    await page.screenshot({ path: join(shots, "queues.png"), fullPage: true });
    await new Promise((r) => setTimeout(r, 1_000)); // several fetch rounds: none takes the paused queue's jobs
    assert.deepEqual(ran, []);
    assert.equal(await mail.size(), 12);

    page.once("dialog", (d) => void d.accept());
    await row().locator('button[value="resume"]').click();
    await page.waitForURL(/notice=queue-resumed/);
    await waitFor(() => ran.length === 12, "the queue's jobs once resumed");
    assert.equal(await row().locator(".status.quiet").count(), 0);
    await page.close();
    assert.deepEqual(problems, []);
  });

  it("Cancel on a running job's row of the Busy page stops it on the worker", SLOW, async () => {
    const client = createClient({ transport });
    const jid = (await client.push(ExportLedger, ["acct_5521"], { queue: "exports" }))!;
    await client.push(ExportLedger, ["acct_7730"], { queue: "exports" });
    await waitFor(async () => (await transport.call("HGET", worker.identity, "busy")) === "2", "both running");
    const page = await open("/busy");
    await page.screenshot({ path: join(shots, "busy-cancel.png"), fullPage: true });
    const row = page.locator("tr", { hasText: jid });
    page.once("dialog", (d) => {
      assert.match(d.message(), new RegExp(`Cancel ExportLedger ${jid}\\? Its ctx.stopping aborts`));
      void d.accept();
    });
    await row.locator('button[value="cancel"]').click();
    await page.waitForURL(/notice=job-cancelled/);
    assert.match(await page.textContent(".notice") ?? "", /Cancel sent/);
    await waitFor(() => stopped.length === 1, "the job stopped", 10_000);
    assert.deepEqual(stopped, [`${jid}: cancelled (cancelJob)`]);
    await page.close();
    assert.deepEqual(problems, []);
  });
});
