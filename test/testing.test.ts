import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { defineJob, memoryTransport } from "../mod.ts";
import { createTestHarness } from "../src/testing.ts";

describe("edgekiq/testing", () => {
  it("inspects pushed jobs and runs them through the real engine", async () => {
    const sent: string[] = [];
    const SendEmail = defineJob({
      name: "SendEmail",
      queue: "mailers",
      args: v.tuple([v.string()]),
      perform(_ctx, to) {
        sent.push(to);
      },
    });
    const t = createTestHarness({ jobs: [SendEmail] });
    await SendEmail.performAsync(t.client, "ada@example.com");
    await SendEmail.performIn(t.client, 60, "later@example.com");
    const queued = await t.enqueued("mailers");
    assert.deepEqual(queued.map((j) => j.args), [["ada@example.com"]]);
    assert.equal((await t.inSet("schedule")).length, 1);
    const first = await t.drain();
    assert.equal(first.processed, 1);
    assert.deepEqual(sent, ["ada@example.com"]);
    const second = await t.drain({ promote: true, now: Date.now() + 61_000 });
    assert.equal(second.processed, 1);
    assert.deepEqual(sent, ["ada@example.com", "later@example.com"]);
    await t.clear();
    assert.deepEqual(await t.enqueued("mailers"), []);
  });

  it("refuses to clear a transport it was given (it may be a real Redis)", async () => {
    const transport = memoryTransport();
    await transport.call("SET", "not-the-tests", "1");
    const t = createTestHarness({ jobs: [], transport });
    await assert.rejects(() => t.clear(), /Cannot clear the test harness as its transport was passed in/);
    assert.equal(await transport.call("GET", "not-the-tests"), "1");
  });

  it("sends failing jobs to retry with Sidekiq's fields", async () => {
    const Broken = defineJob({
      name: "Broken",
      perform() {
        throw new Error("nope");
      },
    });
    const t = createTestHarness({ jobs: [Broken] });
    await t.client.push(Broken, []);
    const result = await t.drain();
    assert.equal(result.failed, 1);
    const [retry] = await t.inSet("retry");
    assert.equal(retry.error_message, "nope");
    assert.equal(retry.retry_count, 0);
  });
});
