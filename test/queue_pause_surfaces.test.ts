/**
 * Queue pause where an operator looks (issue 29): `edgekiq queue pause|resume
 * <name>`, paused queues in `edgekiq stats` (text and JSON) and `top`, and
 * the dashboard's Queues page (a paused badge; Pause and Resume asking first,
 * a confirmation page without JavaScript, a one-time token so a replay does
 * nothing), with the paused set read in the page's own script (no command
 * of its own).
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createClient, defineJob, type Transport } from "../mod.ts";
import { Queue } from "../src/api/mod.ts";
import { parseArgs, UsageError } from "../src/cli/args.ts";
import { runCli } from "../src/cli/main.ts";
import { loadTop } from "../src/cli/top_data.ts";
import { renderTop } from "../src/cli/top_screen.ts";
import { dashboard } from "../src/web/mod.ts";
import { fakeHost } from "./fixtures/cli-host.ts";
import { matrix } from "./support/matrix.ts";

const same = { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" };
const Work = defineJob({ name: "Work", perform() {} });

describe("cli: queue pause|resume parsing", () => {
  it("takes an action and a queue name, and says what is wrong otherwise", () => {
    const args = parseArgs(["queue", "pause", "mailers"]);
    assert.deepEqual([args.command, args.queueAction, args.queueName], ["queue", "pause", "mailers"]);
    assert.equal(parseArgs(["queue", "resume", "mailers"]).queueAction, "resume");
    const usage = (argv: string[], re: RegExp) =>
      assert.throws(() => parseArgs(argv), (e: unknown) => e instanceof UsageError && re.test(e.message));
    usage(["queue"], /queue needs pause or resume/);
    usage(["queue", "stop", "x"], /queue needs pause or resume.*got 'stop'/);
    usage(["queue", "pause"], /queue pause needs a queue name/);
    usage(["queue", "pause", "a,b"], /without spaces or commas: got 'a,b'/);
    usage(["queue", "pause", "a", "b"], /unexpected argument 'b'/);
    // `cancel <jid>` parses the same way.
    assert.equal(parseArgs(["cancel", "0a1b2c3d4e5f60718293a4b5"]).jid, "0a1b2c3d4e5f60718293a4b5");
    usage(["cancel"], /cancel needs a job's jid: edgekiq cancel <jid>$/);
    usage(["cancel", "a b"], /cancel needs a job's jid.*got 'a b'/);
  });
});

for (const target of matrix(["memory", "ioredis"])) {
  describe(`queue pause surfaces on ${target.name}`, () => {
    let transport: Transport;
    let app: Hono;
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
      app = new Hono().route("/admin/jobs", dashboard({ transport, auth: () => true }));
    });

    it("edgekiq queue pause/resume sets the queue paused and back; stats and top list it", async () => {
      await createClient({ transport }).pushBulk(Work, [[], []], { queue: "mailers" });
      const cli = async (...argv: string[]) => {
        const run = fakeHost(argv, { transport });
        assert.equal(await runCli(run.host), 0, run.err.join("\n"));
        return run.out.join("\n");
      };
      assert.match(await cli("queue", "pause", "mailers"), /paused queue 'mailers': every edgekiq process stops/);
      assert.equal(await new Queue(createClient({ transport }), "mailers").isPaused(), true);
      assert.match(await cli("queue", "pause", "mailers"), /queue 'mailers' was already paused/);
      // A queue nothing was pushed to yet can be paused ahead.
      await cli("queue", "pause", "later");

      const text = await cli("stats");
      assert.match(text, /^paused\s+later, mailers$/m);
      assert.match(text, /^ {2}mailers\s+2\s+\(paused\)$/m);
      const json = JSON.parse(await cli("stats", "--json"));
      assert.deepEqual(json.paused, ["later", "mailers"]);
      assert.equal(json.queues.mailers, 2);

      const top = await loadTop(createClient({ transport }), {
        retries: { start: 0, count: 5 },
        dead: { start: 0, count: 5 },
      });
      assert.deepEqual(top.queues.map((q) => [q.name, q.paused]), [["mailers", true]]);
      const view = {
        pane: "processes" as const,
        selected: { processes: 0, retries: 0, dead: 0 },
        offset: { retries: 0, dead: 0 },
        pending: new Map<string, string>(),
        redis: "redis://test",
        interval: 2,
        help: false,
      };
      const screen = renderTop(top, view, { columns: 100, rows: 30 }, Date.now()).map((l) => l.text).join("\n");
      assert.match(screen, /mailers\s+2\s+latency [^\n]*paused/);

      assert.match(await cli("queue", "resume", "mailers"), /resumed queue 'mailers'/);
      assert.match(await cli("queue", "resume", "mailers"), /queue 'mailers' was not paused/);
      assert.deepEqual(JSON.parse(await cli("stats", "--json")).paused, ["later"]);
    });

    it("the Queues page shows a paused badge and Pause/Resume that ask first and run once", async () => {
      const client = createClient({ transport });
      await client.pushBulk(Work, [[], [], []], { queue: "mailers" });
      await client.push(Work, [], { queue: "default" });
      let page = await (await app.request("/admin/jobs/queues")).text();
      const row = (name: string) =>
        [...page.matchAll(/<tr>(.*?)<\/tr>/gs)].map((m) => m[1]).find((r) => r.includes(`>${name}</a>`))!;
      assert.doesNotMatch(row("mailers"), /status quiet/);
      assert.match(row("mailers"), /value="pause"[^>]*data-confirm="Pause queue &quot;mailers&quot;\? No edgekiq/);
      const token = /name="token" value="([\w-]{22})"/.exec(row("mailers"))![1];

      // Without the confirm field (no JavaScript): a confirmation page, nothing paused yet.
      const ask = await app.request("/admin/jobs/queues/mailers", {
        method: "POST",
        headers: same,
        body: new URLSearchParams({ action: "pause", token, confirm: "" }),
      });
      assert.equal(ask.status, 200);
      assert.match(await ask.text(), /Are you sure\?.*Pause queue &quot;mailers&quot;\?/s);
      assert.equal(await new Queue(client, "mailers").isPaused(), false);

      const post = (fields: Record<string, string>) =>
        app.request("/admin/jobs/queues/mailers", { method: "POST", headers: same, body: new URLSearchParams(fields) });
      const done = await post({ action: "pause", token, confirm: "1" });
      assert.equal(done.status, 303);
      assert.match(done.headers.get("location")!, /\/admin\/jobs\/queues\?notice=queue-paused&n=1$/);
      assert.equal(await new Queue(client, "mailers").isPaused(), true);

      page = await (await app.request(done.headers.get("location")!)).text();
      assert.match(page, /Queue paused: no edgekiq process takes its jobs until it is resumed/);
      assert.match(row("mailers"), /<span class="status quiet"[^>]*>paused<\/span>/);
      assert.match(row("mailers"), /value="resume"[^>]*>Resume<\/button>/);
      assert.doesNotMatch(row("default"), /status quiet/);

      // The same form again (a replay, a double click) does nothing.
      await new Queue(client, "mailers").resume();
      const replay = await post({ action: "pause", token, confirm: "1" });
      assert.match(replay.headers.get("location")!, /notice=already-done/);
      assert.equal(await new Queue(client, "mailers").isPaused(), false);
      await new Queue(client, "mailers").pause();

      // Resume from the queue's own page goes back there.
      const own = await (await app.request("/admin/jobs/queues/mailers")).text();
      assert.match(own, /Queue <span class="mono">mailers<\/span>.*<span class="status quiet"[^>]*>paused<\/span>/s);
      const ownToken = /name="token" value="([\w-]{22})"/.exec(own)![1];
      const resumed = await post({ action: "resume", token: ownToken, confirm: "1", from: "queue" });
      assert.match(resumed.headers.get("location")!, /\/admin\/jobs\/queues\/mailers\?notice=queue-resumed&n=1$/);
      assert.equal(await new Queue(client, "mailers").isPaused(), false);

      const bad = await post({ action: "frobnicate", token: ownToken, confirm: "1" });
      assert.equal(bad.status, 400);
      assert.match(await bad.text(), /&#39;action&#39; must be clear, pause or resume/);
    });

    it("a queue paused before anything was pushed to it is listed, so it can be resumed", async () => {
      await new Queue(createClient({ transport }), "ahead").pause();
      const page = await (await app.request("/admin/jobs/queues")).text();
      assert.match(page, />ahead<\/a> <span class="status quiet"[^>]*>paused<\/span>/);
    });

    it("reading the paused queues adds no command to a page: it rides the page's own script", async () => {
      await createClient({ transport }).push(Work, [], { queue: "mailers" });
      const cost = async () => {
        const before = transport.counters.commands;
        assert.equal((await app.request("/admin/jobs/queues")).status, 200);
        return transport.counters.commands - before;
      };
      await cost(); // the script is loaded once
      const running = await cost();
      await new Queue(createClient({ transport }), "mailers").pause();
      assert.equal(await cost(), running);
      // The header's counters and the rows: SMEMBERS x2 in one pipeline, then one script.
      assert.equal(running, 3);
    });
  });
}
