/**
 * Tests never flush a Redis they did not start. `REDIS_URL` (which many
 * Sidekiq users export for their apps) is ignored; the test-only
 * `EDGEKIQ_TEST_REDIS_URL` is refused when its database holds keys the tests
 * did not write. Proven with a second redis-server playing the user's own,
 * holding a sentinel key, and a suite file that flushes run as a child on
 * this runtime.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startRedis, type TestRedis } from "../support/redis.ts";
import { redisAvailable } from "../support/matrix.ts";
import { runtimeName } from "../support/child.ts";
import { spawnProcess } from "../fixtures/cli-spawn.ts";
import { ioredisTransport } from "../../src/transport/adapters/ioredis/ioredis_transport.ts";
import type { Transport } from "../../src/transport/transport.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const fixture = "test/packaging/fixtures/flushes.ts";
// The fixture's report line; node:test's TAP output prefixes it with "# ". Anchored, so
// Bun's source excerpt of a failing test (which quotes the console.log line) does not count.
const FLUSHED = /^(?:# )?FLUSHED (redis:\/\/\S+)/m;

function runSuite(env: Record<string, string>) {
  // NODE_TEST_CONTEXT would make the child's node:test think it is nested in this run and skip its tests.
  const [cmd, args] = runtimeName === "deno"
    ? [process.execPath, ["test", "-A", "--no-check", fixture]]
    : runtimeName === "bun"
    ? [process.execPath, ["test", "--timeout", "60000", `./${fixture}`]]
    : [process.execPath, ["--import", "tsx", "--test", fixture]];
  return spawnProcess(cmd, args, { cwd: root, env: { CI: "true", NODE_TEST_CONTEXT: undefined, ...env } });
}

describe("tests never flush a Redis they did not start", { skip: !redisAvailable() && "no redis" }, () => {
  let outside: TestRedis;
  let users: Transport;
  before(async () => {
    outside = await startRedis();
    users = ioredisTransport({ url: outside.url });
  });
  after(async () => {
    await users?.close();
    await outside?.stop();
  });
  const sentinel = async () => {
    await users.call("SET", "myapp:sentinel", "keep me");
  };

  it("REDIS_URL is ignored: the suite starts its own server", { timeout: 120_000 }, async () => {
    await sentinel();
    const child = runSuite({ REDIS_URL: outside.url, EDGEKIQ_TEST_REDIS_URL: "" });
    assert.equal(await child.exited, 0, child.output());
    const flushed = [...child.output().matchAll(new RegExp(FLUSHED, "gm"))].map((m) => m[1]);
    assert.equal(flushed.length, 2, child.output());
    for (const url of flushed) assert.notEqual(new URL(url).port, String(outside.port), "flushed its own server");
    assert.equal(await users.call("GET", "myapp:sentinel"), "keep me");
  });

  it("EDGEKIQ_TEST_REDIS_URL naming a database with keys is refused, loudly", { timeout: 120_000 }, async () => {
    await sentinel();
    const child = runSuite({ EDGEKIQ_TEST_REDIS_URL: outside.url });
    assert.notEqual(await child.exited, 0, child.output());
    assert.match(
      child.output(),
      /refusing EDGEKIQ_TEST_REDIS_URL=redis:\/\/127\.0\.0\.1:\d+: its database holds 1 keys/,
    );
    assert.doesNotMatch(child.output(), FLUSHED, "flushed nothing");
    assert.equal(await users.call("GET", "myapp:sentinel"), "keep me");
    assert.equal(await users.call("DBSIZE"), 1, "the refused run wrote nothing");
  });

  it("EDGEKIQ_TEST_REDIS_URL naming an empty database is used, and left empty", { timeout: 120_000 }, async () => {
    await sentinel();
    const child = runSuite({ EDGEKIQ_TEST_REDIS_URL: `${outside.url}/3` });
    assert.equal(await child.exited, 0, child.output());
    assert.match(child.output(), new RegExp(`FLUSHED redis://127\\.0\\.0\\.1:${outside.port}/3`));
    assert.equal(await users.call("GET", "myapp:sentinel"), "keep me", "database 0 untouched");
    const db3 = ioredisTransport({ url: `${outside.url}/3` });
    try {
      assert.equal(await db3.call("DBSIZE"), 0);
    } finally {
      await db3.close();
    }
  });
});
