/**
 * The dashboard's Batches pages through hono's `app.request()`: the list
 * with each batch's progress bar, failures and callbacks' state; a batch's
 * page with its counts, callbacks, failed jobs and children; Cancel as a
 * POST form; and the job page's section (the seam `DashboardExtension.jobSection`):
 * a dead flow parent shows its flow and its children's state. Hostile
 * descriptions and error messages are escaped.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { type Client, createClient, defineJob, drain, silentLogger, type Transport } from "../mod.ts";
import { batchJobs } from "../src/features/batches/mod.ts";
import { dashboard } from "../src/web/mod.ts";
import { matrix } from "./support/matrix.ts";

const batches = batchJobs();
const same = { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" };
const html = async (app: Hono, path: string, status = 200) => {
  const res = await app.request(path);
  const text = await res.text();
  assert.equal(res.status, status, `${path}: ${res.status} ${text.slice(0, 300)}`);
  return text;
};

const Ok = defineJob({ name: "Ok", perform: (_ctx, n: number) => n });
const Boom = defineJob({
  name: "Boom",
  retry: 0,
  perform: () => {
    throw new Error("<b>boom</b>");
  },
});
const Parent = defineJob({ name: "Parent", perform: () => {} });

for (const target of matrix(["memory", "ioredis"])) {
  describe(`dashboard Batches on ${target.name}`, () => {
    let transport: Transport;
    let client: Client;
    let app: Hono;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
      client = createClient({ transport, features: [batches] });
      app = new Hono().route("/jobs", dashboard({ transport, auth: () => true, features: [batches] }));
    });
    const run = () =>
      drain({ transport, jobs: [Ok, Boom, Parent], features: [batches], budgetMs: 2000, logger: silentLogger });

    it("lists batches with progress, failures and callbacks; a batch's page; Cancel", async () => {
      const batch = batches.open(client, {
        description: `<script>alert(1)</script> import`,
        callbacks: { success: [Ok, [1]], complete: [Ok, [2]] },
      });
      await batch.add((b) => b.pushBulk(Ok, [[1], [2], [3]]));
      const other = batches.open(client, { description: "failing" });
      await other.add(async (b) => {
        await b.push(Boom, []);
        await b.push(Ok, [4]);
        await b.batch({ description: "kid" }).add((k) => k.push(Ok, [5]));
      });
      await run();
      const list = await html(app, "/jobs/batches");
      assert.ok(list.includes('href="/jobs/batches"'), "the nav entry");
      assert.ok(!list.includes("<script>alert(1)</script>"), "descriptions are escaped");
      assert.ok(list.includes("&lt;script&gt;alert(1)&lt;/script&gt; import"));
      assert.match(list, /<progress value="3" max="3"/);
      assert.match(list, /<span class="status ok">succeeded<\/span>/);
      assert.match(list, /<span class="status error">1 failed<\/span>/);
      assert.match(list, /complete: succeeded/);
      const page = await html(app, `/jobs/batches/${encodeURIComponent(other.bid)}`);
      assert.match(page, /Boom/);
      assert.ok(page.includes("&lt;b&gt;boom&lt;/b&gt;"), "error messages are escaped");
      assert.match(page, /<span class="status error">dead<\/span>/);
      assert.match(page, />kid<\/a>/, "its child batch");
      assert.match(page, /Cancel batch/);
      const token = /name="token" value="([\w-]+)"/.exec(page)![1];
      const res = await app.request(`/jobs/batches/${encodeURIComponent(other.bid)}`, {
        method: "POST",
        headers: same,
        body: new URLSearchParams({ action: "cancel", token, confirm: "1" }),
      });
      assert.equal(res.status, 303);
      assert.match(res.headers.get("location") ?? "", /notice=batch-cancelled/);
      assert.ok((await other.status())?.cancelledAt);
      await html(app, "/jobs/batches/not%20a%20bid", 400);
      await html(app, "/jobs/batches/AAAAAAAAAAAAAA", 404);
    });

    it("a flow parent's job page shows its flow and its children", async () => {
      const flow = await batches.flow(client, {
        job: [Parent, []],
        children: [{ job: [Boom, []] }, { job: [Ok, [7]] }, { job: [Parent, []], children: [{ job: [Ok, [8]] }] }],
      });
      await run();
      const dead = (await transport.call("ZRANGE", "dead", 0, -1)) as string[];
      const raw = dead.find((d) => d.includes(flow.jid))!;
      const score = Number(await transport.call("ZSCORE", "dead", raw));
      const page = await html(app, `/jobs/dead/${score}-${flow.jid}`);
      assert.match(page, /Edgekiq::ChildFailed/);
      assert.match(page, /<h2>Flow<\/h2>/);
      assert.match(page, /<span class="mono">Boom<\/span>.*?<span class="status error small">failed<\/span>/s);
      assert.match(page, /<span class="mono">Ok<\/span>.*?<span class="status ok small">succeeded<\/span>/s);
      assert.match(
        page,
        new RegExp(`href="/jobs/batches/${flow.bid}\\.[^"]+">its own children</a>`),
        "a sub-flow's batch",
      );
      // A job in no batch gets no section.
      const plain = await createClient({ transport }).push(Boom, []);
      await run();
      const rawPlain = ((await transport.call("ZRANGE", "dead", 0, -1)) as string[]).find((d) => d.includes(plain!))!;
      const plainScore = Number(await transport.call("ZSCORE", "dead", rawPlain));
      assert.doesNotMatch(await html(app, `/jobs/dead/${plainScore}-${plain}`), /<h2>(Flow|Batch)<\/h2>/);
    });
  });
}
