/**
 * `edgekiq web`: the dashboard served on its own. It refuses to start
 * without credentials, and refuses `--no-auth` anywhere but loopback,
 * saying why, before it touches Redis; it answers 401 without credentials
 * and 200 with them; a missing `@hono/node-server` is named with how to
 * install it. The binary runs on this runtime (Node through
 * @hono/node-server, Bun.serve, Deno.serve) against a private redis-server.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseArgs, UsageError } from "../src/cli/args.ts";
import { runCli } from "../src/cli/main.ts";
import { isLoopback, webAuth } from "../src/cli/web.ts";
import { fakeHost } from "./fixtures/cli-host.ts";
import { spawnCli } from "./fixtures/cli-spawn.ts";
import { runtimeName } from "./support/child.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

describe("cli: web's door", () => {
  it("loopback is 127.0.0.0/8, ::1 and localhost; every-interface addresses are not", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) {
      assert.ok(isLoopback(h), h);
    }
    for (const h of ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com", "127.0.0.1.nip.io"]) {
      assert.ok(!isLoopback(h), h);
    }
  });

  it("needs a password, or --no-auth on loopback only, and says why it refuses", () => {
    assert.deepEqual(webAuth(parseArgs(["web"]), env({ EDGEKIQ_WEB_PASSWORD: "pw" })), {
      kind: "basic",
      user: "admin",
      password: "pw",
    });
    assert.deepEqual(webAuth(parseArgs(["web", "--user", "ops", "--password", "pw2"]), env({})), {
      kind: "basic",
      user: "ops",
      password: "pw2",
    });
    assert.deepEqual(webAuth(parseArgs(["web", "--no-auth"]), env({})), { kind: "open" });
    assert.deepEqual(webAuth(parseArgs(["web", "--no-auth", "--host", "::1"]), env({})), { kind: "open" });
    const refuses = (argv: string[], vars: Record<string, string>, re: RegExp) =>
      assert.throws(() => webAuth(parseArgs(argv), env(vars)), (e: unknown) => {
        assert.ok(e instanceof UsageError);
        assert.match(e.message, re);
        return true;
      });
    refuses(["web"], {}, /^refusing to serve the dashboard without credentials: set EDGEKIQ_WEB_PASSWORD/);
    refuses(["web"], { EDGEKIQ_WEB_PASSWORD: "" }, /without credentials/);
    refuses(
      ["web", "--no-auth", "--host", "0.0.0.0"],
      {},
      /^refusing to serve the dashboard without authentication on --host 0\.0\.0\.0: .*loopback address only/,
    );
    refuses(["web", "--no-auth"], { EDGEKIQ_WEB_PASSWORD: "pw" }, /--no-auth and a password \(EDGEKIQ_WEB_PASSWORD\)/);
    assert.throws(() => parseArgs(["stats", "--port", "3000"]), /--port is not valid with 'stats'/);
  });

  it("refuses before connecting to Redis, and names a missing Node adapter", async () => {
    const open = fakeHost(["web", "--no-auth", "--host", "0.0.0.0"]);
    assert.equal(await runCli(open.host), 2);
    assert.equal(open.connected.length, 0);
    assert.match(open.err[0], /^edgekiq: refusing to serve the dashboard without authentication on --host 0\.0\.0\.0/);

    const missing = fakeHost(["web"], { env: { EDGEKIQ_WEB_PASSWORD: "hunter22" } });
    missing.host.serve = () =>
      Promise.reject(
        Object.assign(new Error("Cannot find package '@hono/node-server' imported from /app/cli/host.js"), {
          code: "ERR_MODULE_NOT_FOUND",
        }),
      );
    assert.equal(await runCli(missing.host), 2);
    assert.deepEqual(missing.err, [
      "edgekiq: edgekiq web on Node needs the @hono/node-server package, which is not installed: npm i @hono/node-server",
    ]);
  });
});

describe(`cli: edgekiq web, the binary on ${runtimeName}`, { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();

  it("answers 401 without credentials and 200 with them; INT/TERM stop it", { timeout: 60_000 }, async () => {
    await suite.redis.call("FLUSHDB");
    await suite.redis.call("SADD", "queues", "critical");
    await suite.redis.call("LPUSH", "queue:critical", JSON.stringify({ class: "X", jid: "j1", args: [] }));
    const web = spawnCli(["web", "--port", "0", "--user", "ops"], {
      REDIS_URL: suite.url,
      EDGEKIQ_WEB_PASSWORD: "hunter22",
    });
    const [, url] = await web.waitFor(/the dashboard is at (http:\/\/127\.0\.0\.1:\d+\/) /, 30_000);
    const anonymous = await fetch(url);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get("www-authenticate") ?? "", /^Basic/);
    await anonymous.body?.cancel();
    const wrong = await fetch(url, { headers: { authorization: `Basic ${btoa("ops:nope")}` } });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const page = await fetch(`${url}queues`, { headers: { authorization: `Basic ${btoa("ops:hunter22")}` } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /critical/);
    web.kill("SIGTERM");
    assert.equal(await web.exited, 0, web.output());
    assert.doesNotMatch(web.output(), /hunter22/);
    assert.match(web.output(), /basic auth as ops/);
  });

  it("--no-auth serves loopback open; on 0.0.0.0 it refuses and exits 2", { timeout: 60_000 }, async () => {
    const open = spawnCli(["web", "--port", "0", "--no-auth"], { REDIS_URL: suite.url });
    const [, url] = await open.waitFor(/the dashboard is at (http:\/\/127\.0\.0\.1:\d+\/) /, 30_000);
    const page = await fetch(url);
    assert.equal(page.status, 200);
    await page.body?.cancel();
    open.kill("SIGINT");
    assert.equal(await open.exited, 0, open.output());

    const refused = spawnCli(["web", "--no-auth", "--host", "0.0.0.0", "--port", "0"], { REDIS_URL: suite.url });
    assert.equal(await refused.exited, 2, refused.output());
    assert.match(refused.output(), /refusing to serve the dashboard without authentication on --host 0\.0\.0\.0/);
    assert.doesNotMatch(refused.output(), /dashboard is at/);
  });
});
