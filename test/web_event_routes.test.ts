/**
 * `eventRoutes()` from `edgekiq/web`: a queue's job events as Server-Sent
 * Events, with auth, an allow-list of queues, `Last-Event-ID` resumption,
 * and event names from Redis never trusted onto an `event:` line.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob } from "../mod.ts";
import { jobEvents } from "../src/features/events/mod.ts";
import { eventRoutes } from "../src/web/mod.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";

const Echo = defineJob({ name: "Echo", queue: "ev", perform: (_ctx, n: number) => n });

/** Reads an SSE body until `done(text)` says so (or 15 s pass), then cancels it. */
async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 15_000;
  while (!done(text) && Date.now() < deadline) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

/** The messages of an SSE text: each one's fields. */
function messages(text: string): Record<string, string>[] {
  return text.split("\n\n").filter((m) => m.trim() && !m.startsWith(":")).map((m) =>
    Object.fromEntries(
      m.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
    )
  );
}

eachTarget("event routes", (t) => {
  it("streams a queue's events as SSE from now, resumes after Last-Event-ID, refuses what it must", async () => {
    const events = jobEvents({ queues: ["ev"] });
    const client = createClient({ transport: t.redis, features: [events] });
    const app = eventRoutes({ transport: t.redis, auth: "s3cret", queues: ["ev"], pingMs: 200, pollMaxMs: 100 });
    const auth = { authorization: "Bearer s3cret" };
    assert.equal((await app.request("/ev")).status, 401);
    assert.equal((await app.request("/other", { headers: auth })).status, 404);
    assert.equal((await app.request("/ev?after=x;y", { headers: auth })).status, 400);
    t.worker = testWorker(t.redis, { jobs: [Echo], queues: ["ev"], features: [events], pollMaxMs: 100 });
    await t.worker.run();
    const res = await app.request("/ev", { headers: auth });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
    const pushed = [await client.push(Echo, [1]), await client.push(Echo, [2])];
    const text = await readUntil(res.body!, (s) => (s.match(/event: completed/g) ?? []).length >= 2);
    const got = messages(text);
    assert.equal(got[0].event, "ready");
    const completed = got.filter((m) => m.event === "completed");
    assert.deepEqual(completed.map((m) => JSON.parse(m.data).jid), pushed);
    assert.ok(completed.every((m) => /^\d+-\d+$/.test(m.id)), "each message's id is its stream ID");
    // A reconnect with Last-Event-ID gets what came after it, and only that.
    const again = await app.request("/ev", { headers: { ...auth, "last-event-id": completed[0].id } });
    const resumed = messages(await readUntil(again.body!, (s) => /event: completed/.test(s)));
    assert.deepEqual(resumed.filter((m) => m.event === "completed").map((m) => JSON.parse(m.data).jid), [pushed[1]]);
    // A name someone wrote into the stream is not trusted onto an event: line.
    await t.redis.call("XADD", "edgekiq:events:ev", "*", "event", "x\nevent: evil", "jid", "j", "class", "C");
    const hostile = await app.request("/ev", { headers: { ...auth, "last-event-id": completed[1].id } });
    const [, evil] = messages(await readUntil(hostile.body!, (s) => /"jid":"j"/.test(s)));
    assert.equal(evil.event, "message");
    assert.equal(JSON.parse(evil.data).event, "x\nevent: evil", "the data carries it, JSON-escaped");
  });
}, ["memory", "ioredis", "upstash"]);

it("event routes: refuse to be built without auth or with bad numbers", () => {
  assert.throws(() => eventRoutes({ transport: {} as never, auth: "" }), /'auth' must be a non-empty secret/);
  assert.throws(() => eventRoutes({ transport: {} as never, auth: "s", maxMs: 0 }), /'maxMs' must be a whole number/);
  assert.throws(() => eventRoutes({ transport: {} as never, auth: "s", queues: ["a b"] }), /'queues' must name queues/);
});
