/**
 * Profiling a job (Sidekiq 8's Profiles): a job pushed with `profile` has
 * one run recorded with the runtime's own CPU profiler (node:inspector on
 * Node, Deno and Bun), stored with a bounded size and a TTL, listed on the
 * dashboard and downloaded as a `.cpuprofile`.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, createClient, defineJob } from "../mod.ts";
import { jobProfiles } from "../src/features/mod.ts";
import { listProfiles, profileData } from "../src/features/mod.ts";
import { hotFunctions } from "../src/features/profiles/cpu_profile_summary.ts";
import { dashboard } from "./support/dashboard_kit.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";

function burn(ms: number): number {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) for (let i = 0; i < 10_000; i++) x += Math.sqrt(i);
  return x;
}

eachTarget("job profiles", (t) => {
  it("records one run of a job pushed with profile, lists it, and serves the .cpuprofile", async () => {
    const profiles = jobProfiles();
    // 150 ms of CPU: under CI's load (two suites on two cores) Bun's sampling thread once took no sample in a 60 ms run.
    const Report = defineJob({ name: "Report", perform: () => void burn(150) });
    const client = createClient({ transport: t.redis, features: [profiles] });
    const jid = (await client.push(Report, [], { profile: "mike" }))!;
    await client.push(Report, []); // not profiled
    t.worker = testWorker(t.redis, { jobs: [Report], concurrency: 1, features: [profiles] });
    await t.worker.run();
    await waitFor(async () => (await listProfiles(client)).length === 1, "one profile recorded", 20_000);
    await waitFor(async () => Number(await t.redis.call("LLEN", "queue:default")) === 0, "both ran");
    const [entry] = await listProfiles(client);
    assert.equal(entry.jid, jid);
    assert.equal(entry.label, "mike");
    assert.equal(entry.className, "Report");
    assert.ok(entry.ms >= 50 && entry.bytes > 0, JSON.stringify(entry));
    const data = (await profileData(client, jid))!;
    const profile = JSON.parse(data);
    assert.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0, "a .cpuprofile");
    assert.ok(hotFunctions(data, 5).length > 0);
    assert.ok(Number(await t.redis.call("TTL", `edgekiq:profile:${jid}`)) > 0, "it expires");

    const app = dashboard({ transport: t.redis, auth: () => true });
    const list = await (await app.request("/profiles")).text();
    assert.match(list, /mike/);
    const download = await app.request(`/profiles/${jid}/download`);
    assert.equal(download.status, 200);
    assert.match(download.headers.get("content-disposition") ?? "", /attachment; filename=".+\.cpuprofile"/);
    assert.equal(await download.text(), data);
    assert.equal((await app.request(`/profiles/${jid}`)).status, 200);
  });

  it("keeps a profile's metadata but not its data when it is larger than maxBytes", async () => {
    const profiles = jobProfiles({ maxBytes: 10 });
    const Busy = defineJob({ name: "Busy", perform: () => void burn(20) });
    const client = createClient({ transport: t.redis, features: [profiles] });
    const jid = (await client.push(Busy, [], { profile: true }))!;
    t.worker = testWorker(t.redis, { jobs: [Busy], features: [profiles] });
    await t.worker.run();
    await waitFor(async () => (await listProfiles(client)).length === 1, "recorded", 20_000);
    const [entry] = await listProfiles(client);
    assert.equal(entry.bytes, 0);
    assert.match(entry.note ?? "", /too large to keep/);
    assert.equal(await profileData(client, jid), undefined);
  });

  it("refuses a bad label at definition, and a profiled push without the feature", async () => {
    const { defineJob: define } = await import("../mod.ts");
    assert.throws(() => define({ name: "X", profile: "", perform() {} }), ConfigError);
    const Plain = defineJob({ name: "Plain", profile: true, perform() {} });
    await assert.rejects(createClient({ transport: t.redis }).push(Plain, []), /add jobProfiles\(\)/);
  });
}, ["memory", "ioredis"]);
