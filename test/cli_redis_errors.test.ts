/**
 * Errors that say what happened (issue 31, item 7): an unreachable Redis
 * names the failure behind it (ECONNREFUSED, ENOTFOUND, host:port), refused
 * credentials read as an authentication failure, an http:// URL is echoed as
 * given and explained, and a worker stopped with a double Ctrl-C leaves no
 * process behind in `edgekiq stats`. The binary runs on this runtime against
 * private redis-servers.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, TransportError } from "../mod.ts";
import { runCli } from "../src/cli/main.ts";
import { redact, Redactor } from "../src/cli/redact.ts";
import { explainRedisError } from "../src/cli/redis_error.ts";
import { collectStats } from "../src/cli/cli_stats.ts";
import { hasUnsafeChars } from "../src/sanitize.ts";
import { fakeHost } from "./fixtures/cli-host.ts";
import { spawnCli } from "./fixtures/cli-spawn.ts";
import { runtimeName } from "./support/child.ts";
import { redisAvailable, waitFor } from "./support/matrix.ts";
import { startRedis, type TestRedis } from "./support/redis.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { startUpstashGateway } from "./support/upstash-gateway.ts";
import { ioredisTransport } from "../src/transport/adapters/ioredis/ioredis_transport.ts";

describe("cli: explaining a Redis that cannot be used", () => {
  const at = { url: "redis://:***@h:6379", source: "REDIS_URL" };

  it("WRONGPASS and NOAUTH are authentication failures, with what to fix", () => {
    const wrong = explainRedisError(
      new TransportError("command", "WRONGPASS invalid username-password pair or user is disabled."),
      at,
    );
    assert.equal(wrong.reason, "auth");
    assert.equal(
      wrong.message,
      "authentication failed: Redis at redis://:***@h:6379 (from REDIS_URL) refused the credentials " +
        "(WRONGPASS invalid username-password pair or user is disabled): check the user name and password in " +
        "the URL (redis://user:password@host:port)",
    );
    const none = explainRedisError(new Error("NOAUTH Authentication required."), at);
    assert.match(none.message, /^authentication failed: .* requires a password and the URL gives none \(NOAUTH/);
    const extra = explainRedisError(
      new Error("ERR AUTH <password> called without any password configured for the default user."),
      at,
    );
    assert.match(extra.message, /has no password set, yet the URL gives one/);
    assert.doesNotMatch(wrong.message + none.message, /cannot reach/i);
  });

  it("a connection failure names the system error at the bottom of the cause chain, escaped", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:6379"), { code: "ECONNREFUSED" });
    const error = new TransportError("connection", "Cannot reach Redis at 10.0.0.1:6379: ...", { cause: refused });
    const explained = explainRedisError(error, at);
    assert.equal(explained.reason, "connection");
    assert.equal(
      explained.message,
      "cannot reach Redis at redis://:***@h:6379 (from REDIS_URL): connect ECONNREFUSED 10.0.0.1:6379",
    );
    assert.equal(explained.cause, error);
    // Bun's client says only this; the host's probe says why.
    const bun = new TransportError("connection", "Cannot reach Redis: Max reconnection attempts reached");
    assert.match(
      explainRedisError(bun, { ...at, probe: "connect ECONNREFUSED 127.0.0.1:1" }).message,
      /: connect ECONNREFUSED 127\.0\.0\.1:1$/,
    );
    const hostile = explainRedisError(new Error("WRONGPASS \x1b[2J\x07"), at);
    assert.ok(!hasUnsafeChars(hostile.message), hostile.message);
  });

  it("an http:// URL is echoed as given and said to need the upstash transport", async () => {
    assert.equal(redact("http://127.0.0.1:6480"), "http://127.0.0.1:6480");
    assert.equal(redact("http://u:pw@127.0.0.1:6480"), "http://u:***@127.0.0.1:6480");
    const redactor = new Redactor();
    redactor.add("http://127.0.0.1:6480");
    assert.equal(redactor.scrub("at http://127.0.0.1:6480 now"), "at http://127.0.0.1:6480 now");
    const { host, err, connected } = fakeHost(["stats", "--redis-url", "http://127.0.0.1:6480"]);
    assert.equal(await runCli(host), 2);
    assert.equal(connected.length, 0);
    assert.match(
      err[0],
      /^edgekiq: --redis-url http:\/\/127\.0\.0\.1:6480 is an http:\/\/ URL, which edgekiq reads as an Upstash REST endpoint \(the upstash transport, @upstash\/redis\), which needs a token: .* use redis:\/\/host:port/,
    );
  });
});

describe(
  `cli: the binary on ${runtimeName}, when Redis cannot be used`,
  { skip: !redisAvailable() && "no redis" },
  () => {
    let locked: TestRedis;
    before(async () => {
      // A password set after start: startRedis waits for an answer to PING.
      locked = await startRedis();
      const admin = ioredisTransport({ url: locked.url });
      await admin.call("CONFIG", "SET", "requirepass", "sekret");
      await admin.close();
    });
    after(async () => await locked?.stop());

    it("a refused port: ECONNREFUSED and host:port, and -v shows the cause chain", { timeout: 60_000 }, async () => {
      // A port nothing listens on: a server started and stopped.
      const gone = await startRedis();
      await gone.stop();
      const child = spawnCli(["stats", "-v", "--redis-url", gone.url]);
      assert.equal(await child.exited, 1, child.output());
      const port = new URL(gone.url).port;
      assert.match(
        child.output(),
        new RegExp(
          `^edgekiq: cannot reach Redis at ${gone.url} \\(from --redis-url\\): connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\n`,
        ),
      );
      assert.doesNotMatch(child.output(), /max retries per request/i);
      // The client's own errors follow (on Bun they do not name the cause: the CLI's probe found ECONNREFUSED).
      assert.match(child.output(), /\n {2}caused by TransportError: /);
    });

    it("a host that does not resolve: ENOTFOUND", { timeout: 60_000 }, async () => {
      const child = spawnCli(["stats", "--redis-url", "redis://edgekiq-no-such-host.invalid:6379"]);
      assert.equal(await child.exited, 1, child.output());
      assert.match(child.output(), /cannot reach Redis at redis:\/\/edgekiq-no-such-host\.invalid:6379 .*ENOTFOUND/);
    });

    it("a wrong password and a missing one are authentication failures", { timeout: 60_000 }, async () => {
      const port = new URL(locked.url).port;
      const wrong = spawnCli(["stats", "--redis-url", `redis://:hunter22@127.0.0.1:${port}`]);
      assert.equal(await wrong.exited, 1, wrong.output());
      assert.match(
        wrong.output(),
        /^edgekiq: authentication failed: Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ .*WRONGPASS/,
      );
      assert.doesNotMatch(wrong.output(), /hunter22|cannot reach/);
      const none = spawnCli(["stats"], { REDIS_URL: locked.url });
      assert.equal(await none.exited, 1, none.output());
      assert.match(none.output(), /^edgekiq: authentication failed: .*\(from REDIS_URL\) requires a password/);
      const right = spawnCli(["stats", "--json", "--redis-url", `redis://:sekret@127.0.0.1:${port}`]);
      assert.equal(await right.exited, 0, right.output());
    });

    it("an Upstash token the REST endpoint refuses is an authentication failure", { timeout: 60_000 }, async () => {
      const redisUrl = `redis://:sekret@127.0.0.1:${new URL(locked.url).port}`;
      const gateway = await startUpstashGateway({ redisUrl, token: "right-token" });
      try {
        const wrong = spawnCli(["stats", "--redis-url", gateway.url], { UPSTASH_REDIS_REST_TOKEN: "wrong-token" });
        assert.equal(await wrong.exited, 1, wrong.output());
        assert.match(
          wrong.output(),
          /^edgekiq: authentication failed: Redis at http:\/\/127\.0\.0\.1:\d+ \(from --redis-url\) refused the token \(Unauthorized\): check UPSTASH_REDIS_REST_TOKEN/,
        );
        assert.doesNotMatch(wrong.output(), /wrong-token/);
        const right = spawnCli(["stats", "--json", "--redis-url", gateway.url], {
          UPSTASH_REDIS_REST_TOKEN: "right-token",
        });
        assert.equal(await right.exited, 0, right.output());
      } finally {
        await gateway.stop();
      }
    });
  },
);

describe(
  `cli: a worker stopped with a double Ctrl-C, on ${runtimeName}`,
  { skip: !redisAvailable() && "no redis" },
  () => {
    const suite = suiteRedis();

    it("unregisters on the way out: stats shows no process and no busy job", { timeout: 60_000 }, async () => {
      await suite.redis.call("FLUSHDB");
      const worker = spawnCli(["run", "-r", "test/fixtures/cli-jobs.ts", "-t", "60", "--json"], {
        REDIS_URL: suite.url,
      });
      await worker.waitFor(/"msg":"edgekiq worker started"/, 30_000);
      const client = createClient({ transport: suite.redis });
      const jid = await client.push("SlowJob", [600_000]);
      await worker.waitFor(new RegExp(`performing ${jid}`));
      // The next heartbeat (every 10 s) records the running job.
      await waitFor(async () => (await collectStats(client)).workersSize === 1, "a beat showing the busy job", 15_000);
      assert.equal((await collectStats(client)).processesSize, 1);
      worker.kill("SIGINT");
      await worker.waitFor(/shutting down/);
      worker.kill("SIGINT");
      assert.equal(await worker.exited, 1, worker.output());
      assert.deepEqual(await suite.redis.call("SMEMBERS", "processes"), []);
      const stats = spawnCli(["stats", "--json"], { REDIS_URL: suite.url });
      assert.equal(await stats.exited, 0, stats.output());
      const counts = JSON.parse(stats.stdout());
      assert.deepEqual([counts.processesSize, counts.workersSize, counts.queues], [0, 0, { default: 1 }]);
    });

    it("stats leaves out a process whose heartbeat expired (killed before it could unregister)", async () => {
      await suite.redis.call("FLUSHDB");
      await suite.redis.call("SADD", "processes", "ghost:1:000000000000", "live:2:000000000000");
      await suite.redis.call(
        "HSET",
        "live:2:000000000000",
        "info",
        "{}",
        "busy",
        "2",
        "beat",
        String(Date.now() / 1000),
      );
      const stats = await collectStats(createClient({ transport: suite.redis }));
      assert.deepEqual([stats.processesSize, stats.workersSize], [1, 2]);
    });
  },
);
