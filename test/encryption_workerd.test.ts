/**
 * Encrypted arguments in workerd (Cloudflare's runtime) through miniflare:
 * the feature, bundled as an edge app bundles it, encrypts with Web Crypto
 * there, and what it encrypts Node decrypts, and the other way round (a job
 * pushed by a Node service runs in a worker), so a fleet may mix runtimes.
 *
 * Node only: miniflare drives workerd from Node.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, memoryTransport } from "../mod.ts";
import { encryptedArgs } from "../src/features/mod.ts";
import { Keyring } from "../src/features/encryption/keyring.ts";
import { runtimeName } from "./support/child.ts";
import { bundleForWorkerd, startWorkerd, type WorkerdApp } from "./support/workerd.ts";

const skip = runtimeName !== "node" && `miniflare drives workerd from Node (this is ${runtimeName})`;
const newKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const KEY1 = newKey();
const KEY2 = newKey();
const SECRET = "123-45-6789";

const entry = `
import { createClient, defineJob, drain, memoryTransport } from "./mod.ts";
import { encryptedArgs } from "./src/features/mod.ts";
const seen = [];
const Charge = defineJob({ name: "Charge", encrypt: true, perform: (_ctx, order, card) => void seen.push([order, card]) });
export default {
  async fetch(request, env) {
    const encryption = encryptedArgs({ keys: { 1: env.KEY1, 2: env.KEY2 } });
    const transport = memoryTransport();
    if (new URL(request.url).pathname === "/push") {
      await createClient({ transport, features: [encryption] }).push(Charge, [1, { ssn: "${SECRET}" }]);
      const [raw] = await transport.call("LRANGE", "queue:default", 0, -1);
      return Response.json({ raw });
    }
    await transport.call("LPUSH", "queue:default", await request.text());
    seen.length = 0;
    const result = await drain({ transport, jobs: [Charge], features: [encryption], budgetMs: 2000, reserveMs: 0 });
    return Response.json({ processed: result.processed, failed: result.failed, seen });
  },
};
`;

describe("encrypted arguments in workerd", { skip }, () => {
  let app: WorkerdApp | undefined;
  // deno-lint-ignore no-explicit-any
  let mf: any;
  before(async () => {
    app = await startWorkerd(await bundleForWorkerd({ contents: entry }), { bindings: { KEY1, KEY2 } });
    mf = app.mf;
  });
  after(async () => {
    await app?.dispose();
  });

  it("encrypts there with the newest key; Node decrypts it", { timeout: 60_000 }, async () => {
    const { raw } = await (await mf.dispatchFetch("http://edge.test/push")).json();
    const job = JSON.parse(raw);
    assert.ok(!raw.includes(SECRET));
    assert.equal(job.edgekiq_encrypted, 1);
    assert.match(job.args[1], /^ek1:2:/);
    assert.deepEqual(await new Keyring({ 1: KEY1, 2: KEY2 }).decrypt(job.args[1]), { ssn: SECRET });
  });

  it("runs a job Node encrypted with an older key", { timeout: 60_000 }, async () => {
    const Charge = defineJob({ name: "Charge", encrypt: true, perform(_ctx, _order: number, _card: object) {} });
    const transport = memoryTransport();
    await createClient({ transport, features: [encryptedArgs({ keys: { 1: KEY1 } })] }).push(Charge, [
      7,
      { ssn: SECRET },
    ]);
    const [raw] = (await transport.call("LRANGE", "queue:default", 0, -1)) as string[];
    assert.match(JSON.parse(raw).args[1], /^ek1:1:/);
    const result = await (await mf.dispatchFetch("http://edge.test/run", { method: "POST", body: raw })).json();
    assert.deepEqual(result, { processed: 1, failed: 0, seen: [[7, { ssn: SECRET }]] });
  });
});
