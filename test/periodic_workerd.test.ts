/**
 * Periodic schedules in workerd (Cloudflare's runtime) through miniflare:
 * croner's time-zone arithmetic and the claim path, bundled as an edge app
 * would bundle them, on the memory transport. Node only: miniflare drives
 * workerd from Node.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { runtimeName } from "./support/child.ts";
import { bundleForWorkerd, startWorkerd, type WorkerdApp } from "./support/workerd.ts";

const skip = runtimeName !== "node" && `miniflare drives workerd from Node (this is ${runtimeName})`;

// The worker: a Berlin fixed-time and a New York schedule over their spring-forward days.
const entry = `
import { createClient } from "./src/features/preset/create_client.ts";
import { memoryTransport } from "./src/transport/adapters/memory/memory_transport.ts";
import { enqueueDuePeriodic, registerPeriodic } from "./src/features/periodic/mod.ts";
export default {
  async fetch() {
    const client = createClient({ transport: memoryTransport() });
    const periodic = [
      { cron: "30 2 * * *", tz: "Europe/Berlin", job: "Berlin", name: "berlin" },
      { cron: "30 2 * * *", tz: "America/New_York", job: "Ny", name: "ny" },
    ];
    const ticks = [];
    for (let now = Date.UTC(2024, 2, 9, 12); now <= Date.UTC(2024, 3, 1, 12); now += 15 * 60000) {
      await registerPeriodic(client, periodic, { now });
      const { jobs } = await enqueueDuePeriodic({ client, now, schedules: periodic });
      for (const job of jobs) ticks.push(job.name + " " + new Date(job.tick * 1000).toISOString());
    }
    return Response.json(ticks);
  },
};
`;

describe("periodic in workerd", { skip }, () => {
  let app: WorkerdApp | undefined;
  // deno-lint-ignore no-explicit-any
  let mf: any;
  before(async () => {
    app = await startWorkerd(await bundleForWorkerd({ contents: entry }));
    mf = app.mf;
  });
  after(async () => {
    await app?.dispose();
  });

  it("computes DST-correct ticks and claims them", async () => {
    const ticks: string[] = await (await mf.dispatchFetch("http://localhost/")).json();
    assert.ok(ticks.includes("ny 2024-03-10T07:00:00.000Z"), "02:30 EST does not exist: 03:00 EDT");
    assert.ok(ticks.includes("berlin 2024-03-31T01:00:00.000Z"), "02:30 CET does not exist: 03:00 CEST");
    assert.ok(ticks.includes("berlin 2024-04-01T00:30:00.000Z"), "then 02:30 CEST");
    assert.equal(ticks.filter((t) => t.startsWith("ny")).length, 23, "one a day, 2024-03-10 to 2024-04-01");
    assert.equal(new Set(ticks).size, ticks.length);
  });
});
