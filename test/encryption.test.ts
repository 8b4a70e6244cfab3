/**
 * Encrypted arguments (Sidekiq Enterprise's `encrypt: true`, issue 29): the
 * last argument is stored AES-256-GCM-encrypted under versioned keys (the
 * newest encrypts, every one decrypts) and decrypted for its run only. The
 * secret never reaches Redis (queue, retry, dead, the work hash), edgekiq's
 * log lines, its own error messages or the dashboard; a job that cannot be
 * decrypted (no key of its version, a wrong key, altered text) or whose
 * decrypted arguments fail the schema goes to the dead set with a clear
 * reason, once, never to a retry loop.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import * as v from "valibot";
import {
  ConfigError,
  createClient,
  createLogger,
  defineJob,
  drain,
  EncryptionError,
  memoryTransport,
  PayloadError,
  type Transport,
} from "../mod.ts";
import { encryptedArgs } from "../src/features/mod.ts";
import { Keyring } from "../src/features/encryption/keyring.ts";
import { dashboard } from "../src/web/mod.ts";
import { matrix, waitFor } from "./support/matrix.ts";
import { testWorker } from "./support/worker.ts";

const newKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const KEY1 = newKey();
const KEY2 = newKey();
const SECRET = "4929-1234-5678-9012";

describe("encrypted arguments: the keyring", () => {
  it("encrypts with the newest version; every version decrypts; a wrong key or altered text does not", async () => {
    const old = new Keyring({ 1: KEY1 });
    const both = new Keyring({ 2: KEY2, 1: KEY1 });
    assert.deepEqual([both.versions, both.current], [[1, 2], 2]);
    const sealed1 = await old.encrypt({ pan: SECRET });
    const sealed2 = await both.encrypt({ pan: SECRET });
    assert.match(sealed1, /^ek1:1:[A-Za-z0-9+/]+=*$/);
    assert.match(sealed2, /^ek1:2:/);
    assert.ok(!sealed2.includes(SECRET));
    assert.notEqual(await both.encrypt({ pan: SECRET }), sealed2, "a fresh IV each time");
    assert.deepEqual(await both.decrypt(sealed1), { pan: SECRET }, "an old key still decrypts");
    assert.deepEqual(await both.decrypt(sealed2), { pan: SECRET });
    await assert.rejects(old.decrypt(sealed2), /no key of version 2 is configured here \(this process has version 1\)/);
    const wrong = new Keyring({ 1: KEY2 });
    await assert.rejects(wrong.decrypt(sealed1), /the key of version 1 does not decrypt it/);
    // The version label is bound to the text: relabelling it fails too.
    await assert.rejects(both.decrypt(sealed1.replace("ek1:1:", "ek1:2:")), /does not decrypt it/);
    const bytes = Uint8Array.from(atob(sealed1.slice(6)), (c) => c.charCodeAt(0));
    bytes[20] ^= 1;
    await assert.rejects(old.decrypt(`ek1:1:${btoa(String.fromCharCode(...bytes))}`), /or the text was altered/);
    await assert.rejects(old.decrypt(SECRET), (e: unknown) => {
      assert.ok(e instanceof EncryptionError);
      assert.match(e.message, /not edgekiq-encrypted text .*it is a string/);
      assert.ok(!e.message.includes(SECRET), "the refused value is never shown");
      return true;
    });
  });

  it("takes bytes, base64 (standard or URL-safe) and CryptoKeys, and refuses bad keys without showing them", async () => {
    const raw = crypto.getRandomValues(new Uint8Array(32));
    const cryptoKey = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    const urlSafe = btoa(String.fromCharCode(...raw)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const sealed = await new Keyring({ 3: raw }).encrypt([1, "two"]);
    assert.deepEqual(await new Keyring({ 3: cryptoKey }).decrypt(sealed), [1, "two"]);
    assert.deepEqual(await new Keyring({ 3: urlSafe }).decrypt(sealed), [1, "two"]);
    const refused = (keys: unknown, re: RegExp) =>
      assert.throws(() => new Keyring(keys as Record<number, string>), (e: unknown) => {
        assert.ok(e instanceof ConfigError, String(e));
        assert.match(e.message, re);
        return true;
      });
    refused({}, /'keys' must be an object of versioned keys/);
    refused({ 1: btoa("short") }, /key 1 must be 32 bytes \(AES-256\): it is 5/);
    refused({ 0: KEY1 }, /every key version must be a whole number from 1: got '0'/);
    refused({ 1: "not base64 at all!" }, /key 1 is not base64 text \(the key itself is not shown\)/);
    refused({ 1: 42 }, /key 1 must be 32 bytes, base64 text of them, or a CryptoKey: it is a number/);
    const hmac = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    refused({ 1: hmac }, /key 1 must be an AES-GCM key of 256 bits: it is HMAC/);
    assert.throws(() => encryptedArgs({ keys: { 1: "x".repeat(10) } }), (e: unknown) => !String(e).includes("xxxx"));
  });

  it("a push needs the feature, and an argument to encrypt", async () => {
    const Charge = defineJob({ name: "Charge", encrypt: true, perform(_ctx, _card: unknown) {} });
    await assert.rejects(
      createClient({ transport: memoryTransport() }).push(Charge, [{ pan: SECRET }]),
      (e: unknown) => e instanceof ConfigError && /sets 'encrypt'.*add encryptedArgs\(\{ keys \}\)/.test(e.message),
    );
    const NoArgs = defineJob({ name: "NoArgs", encrypt: true, perform() {} });
    const client = createClient({ transport: memoryTransport(), features: [encryptedArgs({ keys: { 1: KEY1 } })] });
    await assert.rejects(
      client.push(NoArgs, []),
      (e: unknown) => e instanceof PayloadError && /at least one/.test(e.message),
    );
    assert.throws(
      () => defineJob({ name: "Bad", encrypt: "yes" as unknown as boolean, perform() {} }),
      /'encrypt' must be true or false/,
    );
  });
});

for (const target of matrix(["memory", "ioredis"])) {
  describe(`encrypted arguments on ${target.name}`, () => {
    let transport: Transport;
    let lines: string[];
    const logger = () => createLogger({ json: true, write: (line) => lines.push(line) });
    beforeEach(async () => {
      await target.flush();
      transport ??= await target.open();
      lines = [];
    });
    /** Everything Redis holds, as text. */
    const everything = async () => {
      const out: string[] = [];
      for (const key of (await transport.call("KEYS", "*")) as string[]) {
        const type = await transport.call("TYPE", key);
        const dump = type === "list"
          ? await transport.call("LRANGE", key, 0, -1)
          : type === "zset"
          ? await transport.call("ZRANGE", key, 0, -1)
          : type === "hash"
          ? await transport.call("HGETALL", key)
          : type === "set"
          ? await transport.call("SMEMBERS", key)
          : await transport.call("GET", key);
        out.push(`${key} ${JSON.stringify(dump)}`);
      }
      return out.join("\n");
    };

    it("stores the last argument encrypted and runs the job with it decrypted", async () => {
      const seen: unknown[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const Charge = defineJob({
        name: "Charge",
        encrypt: true,
        async perform(_ctx, order: number, card: { pan: string }) {
          seen.push(order, card);
          await gate;
        },
      });
      const encryption = encryptedArgs({ keys: { 1: KEY1 } });
      const client = createClient({ transport, features: [encryption] });
      const jid = (await client.push(Charge, [42, { pan: SECRET }]))!;
      const [raw] = (await transport.call("LRANGE", "queue:default", 0, -1)) as string[];
      const stored = JSON.parse(raw);
      assert.equal(stored.edgekiq_encrypted, 1);
      assert.equal(stored.args[0], 42, "the other arguments stay readable");
      assert.match(stored.args[1], /^ek1:1:/);
      assert.ok(!raw.includes(SECRET));

      const worker = testWorker(transport, {
        jobs: [Charge],
        features: [encryption],
        heartbeatInterval: 0.1,
        logger: logger(),
      });
      await worker.run();
      try {
        await waitFor(() => seen.length === 2, "it ran");
        assert.deepEqual(seen, [42, { pan: SECRET }]);
        // The Busy page's source (the work hash) and the page itself hold the encrypted text only.
        await waitFor(async () => (await everything()).includes(`${jid}`) && /:work /.test(await everything()), "beat");
        const app = new Hono().route("/jobs", dashboard({ transport, auth: () => true }));
        const busy = await (await app.request("/jobs/busy")).text();
        assert.ok(busy.includes(jid), "the job is on the Busy page");
        assert.ok(!busy.includes(SECRET) && !(await everything()).includes(SECRET));
      } finally {
        release();
        await worker.stop();
      }
      assert.ok(!lines.join("\n").includes(SECRET), "no log line holds it");
    });

    it("a failure's retry and dead entries keep the argument encrypted", async () => {
      const Charge = defineJob({
        name: "Charge",
        encrypt: true,
        retry: 1,
        perform(_ctx, _order: number, card: { pan: string }) {
          if (card.pan === SECRET) throw new Error("card declined");
        },
      });
      const encryption = encryptedArgs({ keys: { 1: KEY1 } });
      await createClient({ transport, features: [encryption] }).push(Charge, [7, { pan: SECRET }]);
      const run = () =>
        drain({
          transport,
          jobs: [Charge],
          features: [encryption],
          budgetMs: 5000,
          logger: logger(),
          jobLogging: true,
        });
      await run();
      const [retry] = (await transport.call("ZRANGE", "retry", 0, -1)) as string[];
      assert.ok(retry, "in the retry set");
      assert.equal(JSON.parse(retry).error_message, "card declined");
      assert.match(JSON.parse(retry).args[1], /^ek1:1:/);
      // Due now: promoted and run again, then dead.
      await transport.call("ZADD", "retry", 0, retry);
      await transport.call("ZREM", "retry", retry);
      await transport.call("LPUSH", "queue:default", retry);
      await run();
      const [dead] = (await transport.call("ZRANGE", "dead", 0, -1)) as string[];
      assert.match(JSON.parse(dead).args[1], /^ek1:1:/);
      assert.ok(!(await everything()).includes(SECRET), "nothing in Redis holds it");
      assert.ok(!lines.join("\n").includes(SECRET), "no log line holds it");
    });

    it("rotation: old jobs decrypt with the old key, new ones use the new; a missing or wrong key buries the job once", async () => {
      const seen: unknown[] = [];
      const Charge = defineJob({
        name: "Charge",
        encrypt: true,
        perform: (_ctx, _order: number, card: { pan: string }) => void seen.push(card.pan),
      });
      const oldClient = createClient({ transport, features: [encryptedArgs({ keys: { 1: KEY1 } })] });
      const rotated = encryptedArgs({ keys: { 1: KEY1, 2: KEY2 } });
      const newClient = createClient({ transport, features: [rotated] });
      assert.equal(rotated.currentVersion, 2);
      await oldClient.push(Charge, [1, { pan: "old" }]);
      await newClient.push(Charge, [2, { pan: "new" }]);
      const versions = ((await transport.call("LRANGE", "queue:default", 0, -1)) as string[])
        .map((r) => JSON.parse(r).args[1].slice(0, 6)).sort();
      assert.deepEqual(versions, ["ek1:1:", "ek1:2:"]);
      await drain({ transport, jobs: [Charge], features: [rotated], budgetMs: 5000 });
      assert.deepEqual(seen.sort(), ["new", "old"]);

      // A worker that lacks version 2, and one whose version 1 is the wrong key.
      await newClient.push(Charge, [3, { pan: SECRET }]);
      const stale = encryptedArgs({ keys: { 1: KEY1 } });
      const first = await drain({ transport, jobs: [Charge], features: [stale], budgetMs: 5000, logger: logger() });
      assert.equal(first.failed, 1, "the version-2 job is buried");
      await oldClient.push(Charge, [4, { pan: SECRET }]);
      const mistaken = encryptedArgs({ keys: { 1: KEY2, 2: KEY2 } });
      const second = await drain({ transport, jobs: [Charge], features: [mistaken], budgetMs: 5000, logger: logger() });
      assert.equal(second.failed, 1, "the version-1 job is buried");
      assert.deepEqual(seen.sort(), ["new", "old"], "neither ran");
      const dead = ((await transport.call("ZRANGE", "dead", 0, -1)) as string[]).map((r) => JSON.parse(r));
      const reasons = dead.map((d) => `${d.error_class}: ${d.error_message}`).sort();
      assert.equal(dead.length, 2);
      assert.match(reasons[0], /^EncryptionError: Cannot decrypt the arguments of job Charge \(jid [0-9a-f]{24}\) as/);
      assert.ok(reasons.some((r) => /no key of version 2 is configured here \(this process has version 1\)/.test(r)));
      assert.ok(reasons.some((r) => /the key of version 1 does not decrypt it/.test(r)));
      assert.equal(await transport.call("ZCARD", "retry"), 0, "never retried: no crash loop");
      assert.ok(!(await everything()).includes(SECRET));
      assert.ok(!lines.join("\n").includes(SECRET));
    });

    it("decrypted arguments that fail the schema are buried with the schema's messages withheld", async () => {
      const Charge = defineJob({
        name: "Charge",
        encrypt: true,
        args: v.tuple([v.number(), v.object({ pan: v.pipe(v.string(), v.length(4)) })]),
        perform() {},
      });
      const encryption = encryptedArgs({ keys: { 1: KEY1 } });
      // Pushed by another producer that did not check (the client would refuse it): raw, encrypted.
      const sealed = await new Keyring({ 1: KEY1 }).encrypt({ pan: SECRET });
      const raw = JSON.stringify({
        class: "Charge",
        args: [1, sealed],
        queue: "default",
        jid: "0a1b2c3d4e5f60718293a4b5",
        retry: true,
        edgekiq_encrypted: 1,
      });
      await transport.call("LPUSH", "queue:default", raw);
      const result = await drain({
        transport,
        jobs: [Charge],
        features: [encryption],
        budgetMs: 5000,
        logger: logger(),
      });
      assert.equal(result.failed, 1);
      const [dead] = (await transport.call("ZRANGE", "dead", 0, -1)) as string[];
      const entry = JSON.parse(dead);
      assert.equal(entry.error_class, "JobArgsError");
      assert.match(entry.error_message, /do not match its schema \(1 issue; the messages are withheld/);
      assert.equal(entry.args[1], sealed);
      assert.ok(!(await everything()).includes(SECRET));
      assert.ok(!lines.join("\n").includes(SECRET));
    });

    it("a job without encrypt is untouched, and an encrypted push can opt out", async () => {
      const Plain = defineJob({ name: "Plain", perform(_ctx, _x: string) {} });
      const Charge = defineJob({ name: "Charge", encrypt: true, perform(_ctx, _x: string) {} });
      const client = createClient({ transport, features: [encryptedArgs({ keys: { 1: KEY1 } })] });
      await client.push(Plain, ["visible"]);
      await client.push(Charge, ["visible too"], { encrypt: false });
      const raws = (await transport.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.deepEqual(raws.map((r) => JSON.parse(r).args[0]).sort(), ["visible", "visible too"]);
      assert.ok(raws.every((r) => JSON.parse(r).edgekiq_encrypted === undefined));
    });
  });
}
