/**
 * The `edgekiq` command facing mistakes and hostile input: bounds on numeric
 * flags, secrets in Redis URLs, escape sequences in Redis data, jobs modules
 * and Redis client packages that do not load, and `enqueue -r` checking
 * arguments against the job's definition. In-process on the memory
 * transport, then the real binary on this runtime.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, memoryTransport, TransportError } from "../mod.ts";
import { parseArgs, UsageError } from "../src/cli/args.ts";
import { HELP } from "../src/cli/help.ts";
import { parseConfig, resolveOptions } from "../src/cli/config.ts";
import { redact, Redactor } from "../src/cli/redact.ts";
import { runCli } from "../src/cli/main.ts";
import { waitFor } from "./support/matrix.ts";
import { runtimeName } from "./support/child.ts";
import { fakeHost } from "./fixtures/cli-host.ts";
import { spawnCli } from "./fixtures/cli-spawn.ts";
import * as cliJobs from "./fixtures/cli-jobs.ts";

function usage(fn: () => unknown, re: RegExp) {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.match(error.message, re);
    return true;
  });
}

describe("cli: bounds", () => {
  it("refuses numbers a worker cannot hold, naming the maximum; accepts the maximum", () => {
    usage(
      () => parseArgs(["-c", "100000000"]),
      /^-c\/--concurrency must be a whole number from 1 to 10000: got '100000000'$/,
    );
    usage(
      () => parseArgs(["-q", "a,300000000"]),
      /^-q\/--queue weight must be a whole number from 0 to 1000: got 'a,300000000'$/,
    );
    usage(() => parseArgs(["-t", "3000000"]), /^-t\/--timeout must be a number > 0 and at most 86400: got '3000000'$/);
    usage(() => parseArgs(["-t", "Infinity"]), /-t\/--timeout must be a number > 0 and at most 86400/);
    usage(() => parseArgs(["enqueue", "X", "--in", "1e308"]), /--in must be a number of seconds from 0 to 315360000/);
    const max = parseArgs(["-c", "10000", "-q", "a,1000", "-t", "86400"]);
    assert.deepEqual([max.concurrency, max.queues, max.timeout], [10000, ["a,1000"], 86400]);
  });

  it("the config file and the module's config have the same bounds", () => {
    usage(
      () =>
        parseConfig({
          concurrency: 100_000_000,
          timeout: 3_000_000,
          queues: ["a,300000000", ["b", 5000]],
          capsules: { bulk: { queues: ["bulk"], prefetch: 1_000_000 } },
        }, "big.json"),
      /config\.queues\[0\]: must be .*\(weight 0-1000\); config\.queues\[1\]\[1\]: .*; config\.concurrency: must be a whole number from 1 to 10000; config\.timeout: must be a number of seconds > 0 and at most 86400; config\.capsules\.bulk\.prefetch: must be a whole number from 0 to 10000/,
    );
  });

  it("exits 2 before loading anything or connecting", async () => {
    for (const argv of [["-c", "100000000"], ["-q", "a,300000000"], ["-t", "3000000"]]) {
      const { host, err, connected } = fakeHost(["-r", "jobs.ts", ...argv]);
      assert.equal(await runCli(host), 2, err.join("\n"));
      assert.equal(connected.length, 0);
    }
  });
});

describe("cli: secrets in Redis URLs", () => {
  it("redact hides passwords, lone user names and credential parameters, and never shows a non-URL", () => {
    assert.equal(redact("redis://:secret@h:6379"), "redis://:***@h:6379");
    assert.equal(redact("rediss://default:secret@h.upstash.io:6379"), "rediss://default:***@h.upstash.io:6379");
    assert.equal(redact("redis://secret@h"), "redis://***@h");
    assert.equal(redact("redis://h:6379/0?password=secret&db=1"), "redis://h:6379/0?password=***&db=1");
    assert.equal(redact("redis://h?PASSWORD=secret"), "redis://h?PASSWORD=***");
    assert.equal(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    assert.equal(redact("redis//:secret@h"), "<not a valid URL>");
  });

  it("a Redactor scrubs remembered URLs and their secrets out of any text", () => {
    const redactor = new Redactor();
    redactor.add("redis://:p%40ss-word@h:6379");
    redactor.add("not a url :hunter22@h");
    assert.equal(redactor.scrub("at redis://:p%40ss-word@h:6379 failed"), "at redis://:***@h:6379 failed");
    assert.equal(redactor.scrub("AUTH p@ss-word refused"), "AUTH *** refused", "the decoded password too");
    assert.equal(redactor.scrub("bad: not a url :hunter22@h"), "bad: <not a valid URL>");
  });

  it("an invalid URL is never echoed, from a flag, the environment or the config", () => {
    for (const bad of ["redis//:hunter22@h", "localhost:hunter22@h"]) {
      assert.throws(() => parseArgs(["--redis-url", bad]), (e: Error) => !e.message.includes("hunter22"));
      assert.throws(
        () => resolveOptions(parseArgs([]), undefined, undefined, (n) => (n === "REDIS_URL" ? bad : undefined), "t"),
        (e: Error) => !e.message.includes("hunter22") && /REDIS_URL must/.test(e.message),
      );
      assert.throws(() => parseConfig({ redisUrl: bad }, "c.json"), (e: Error) => !e.message.includes("hunter22"));
    }
  });

  it("the banner, job logs and errors never show the password", { timeout: 30_000 }, async () => {
    const url = "redis://10.0.0.1:6379/0?password=hunter22";
    const Leaky = defineJob({
      name: "Leaky",
      perform(ctx) {
        ctx.logger.info(`connected to ${url}`);
        throw new Error(`cannot AUTH with hunter22 at ${url}`);
      },
    });
    const { host, out, err, signals, transport } = fakeHost(["-r", "jobs.ts", "-t", "1"], {
      modules: { "jobs.ts": { Leaky } },
      env: { REDIS_URL: url },
    });
    const done = runCli(host);
    await waitFor(() => signals.has("SIGTERM"), "the worker to start");
    await createClient({ transport }).push(Leaky, []);
    await waitFor(() => err.some((line) => line.includes("cannot AUTH")), "the failure to be logged");
    signals.get("SIGTERM")!();
    assert.equal(await done, 0);
    const all = [...out, ...err].join("\n");
    assert.doesNotMatch(all, /hunter22/);
    const banner = JSON.parse(out.find((line) => line.includes("starting"))!);
    assert.equal(banner.redis, "redis://10.0.0.1:6379/0?password=***");
    assert.match(all, /connected to redis:\/\/10\.0\.0\.1:6379\/0\?password=\*\*\*/);

    const refusing = memoryTransport();
    refusing.call = () => Promise.reject(new TransportError("connection", `WRONGPASS for ${url} (hunter22)`));
    const down = fakeHost(["stats", "--redis-url", url], { transport: refusing });
    assert.equal(await runCli(down.host), 1);
    assert.equal(down.err.length, 1);
    assert.doesNotMatch(down.err[0], /hunter22/);
    assert.match(
      down.err[0],
      /^edgekiq: authentication failed: Redis at redis:\/\/10\.0\.0\.1:6379\/0\?password=\*\*\* \(from --redis-url\) refused/,
    );
  });
});

describe("cli: hostile text from Redis", () => {
  it("stats escapes and truncates queue names", async () => {
    const transport = memoryTransport();
    const evil = "evil\x1b]0;pwned\x07\x1b[2J";
    const huge = "q".repeat(1 << 20);
    for (const name of [evil, huge]) {
      await transport.call("SADD", "queues", name);
      await transport.call("LPUSH", `queue:${name}`, "{}");
    }
    const { host, out } = fakeHost(["stats"], { transport });
    assert.equal(await runCli(host), 0);
    const text = out.join("\n");
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(text, /[\x00-\x09\x0b-\x1f\x7f]/, "no control character but newlines reaches the terminal");
    assert.match(text, /evil\\x1b\]0;pwned\\x07\\x1b\[2J/);
    assert.ok(text.length < 2000, `output is bounded (${text.length} characters)`);
    assert.match(text, /q{100}… \(1048576 chars\)/);
  });
});

describe("cli: jobs modules and packages that do not load", () => {
  const run = async (argv: string[], options: Parameters<typeof fakeHost>[1]) => {
    const { host, err, out, connected } = fakeHost(argv, options);
    const code = await runCli(host);
    return { code, err, out, connected };
  };
  const unknownExtension = () =>
    Object.assign(new TypeError('Unknown file extension ".ts" for /app/jobs.ts'), {
      code: "ERR_UNKNOWN_FILE_EXTENSION",
    });

  it("TypeScript under plain Node: one line naming the ways to run it", async () => {
    const plain = await run(["-r", "jobs.ts"], { failing: { "jobs.ts": unknownExtension() } });
    assert.equal(plain.code, 2);
    assert.equal(plain.err.length, 1, plain.err.join("\n"));
    assert.match(plain.err[0], /^edgekiq: -r\/--require jobs\.ts is TypeScript, which Node cannot import by itself/);
    assert.match(plain.err[0], /npx tsx node_modules\/\.bin\/edgekiq/);
    assert.match(plain.err[0], /bunx --bun edgekiq/);
    assert.equal(plain.connected.length, 0);

    const bunx = await run(["-r", "jobs.ts"], {
      failing: { "jobs.ts": unknownExtension() },
      env: { npm_lifecycle_event: "bunx" },
    });
    assert.match(bunx.err[0], /bunx ran edgekiq under Node .*run `bunx --bun edgekiq \.\.\.`/);
  });

  it("a package the module imports is not installed: names it and how to install it", async () => {
    const error = Object.assign(new Error("Cannot find package '@acme/mailer' imported from /app/jobs.js"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    const result = await run(["-r", "jobs.js"], { failing: { "jobs.js": error } });
    assert.equal(result.code, 2);
    assert.deepEqual(result.err, [
      "edgekiq: -r/--require jobs.js imports '@acme/mailer', which is not installed: npm i @acme/mailer",
    ]);
  });

  it("a module that throws: one line with the error and where; -v adds the stack", async () => {
    const error = new TypeError("DATABASE_URL is not set\x1b[2J");
    error.stack =
      `TypeError: DATABASE_URL is not set\n    at requireSetting (file:///app/config.js:3:9)\n    at file:///app/jobs.js:5:1`;
    const quiet = await run(["-r", "jobs.js"], { failing: { "jobs.js": error } });
    assert.equal(quiet.code, 2);
    assert.deepEqual(quiet.err, [
      "edgekiq: -r/--require jobs.js failed to load: TypeError: DATABASE_URL is not set\\x1b[2J " +
      "(at /app/config.js:3:9); run with -v for the stack",
    ]);
    const verbose = await run(["-r", "jobs.js", "-v"], { failing: { "jobs.js": error } });
    assert.equal(verbose.code, 2);
    assert.equal(verbose.err.length, 4);
    assert.match(verbose.err[3], /at file:\/\/\/app\/jobs\.js:5:1/);
  });

  it("the Redis client package is not installed: one line, exit 2, URL redacted", async () => {
    const error = Object.assign(
      new Error("Cannot find package 'ioredis' imported from /app/node_modules/edgekiq/dist/src/transport/ioredis.js"),
      { code: "ERR_MODULE_NOT_FOUND" },
    );
    const result = await run(["stats", "--redis-url", "redis://:hunter22@10.0.0.1:6379"], { connectError: error });
    assert.equal(result.code, 2);
    assert.deepEqual(result.err, [
      "edgekiq: redis://:***@10.0.0.1:6379 needs the ioredis package, which is not installed: npm i ioredis",
    ]);
  });
});

describe("cli: enqueue", () => {
  const jobs = { "jobs.ts": cliJobs as unknown as Record<string, unknown> };

  it("with -r, uses the job's queue and retry and checks --args against its schema", async () => {
    const { host, out, transport } = fakeHost(["enqueue", "Thumbnail", "-r", "jobs.ts", "--args", '["a.png", 64]'], {
      modules: jobs,
    });
    assert.equal(await runCli(host), 0);
    const [raw] = (await transport.call("LRANGE", "queue:media", 0, -1)) as string[];
    const payload = JSON.parse(raw);
    assert.deepEqual([payload.jid, payload.queue, payload.retry, payload.args], [out[0], "media", 3, ["a.png", 64]]);

    const bad = fakeHost(["enqueue", "Thumbnail", "-r", "jobs.ts", "--args", '["a.png", 0]'], {
      modules: jobs,
      transport,
    });
    assert.equal(await runCli(bad.host), 2);
    assert.match(bad.err[0], /^edgekiq: Invalid arguments for job Thumbnail: args\[1\]: /);
    assert.equal(await transport.call("LLEN", "queue:media"), 1, "nothing written for refused arguments");

    const moved = fakeHost(["enqueue", "Thumbnail", "-r", "jobs.ts", "-q", "urgent", "--args", '["b.png", 32]'], {
      modules: jobs,
      transport,
    });
    assert.equal(await runCli(moved.host), 0);
    assert.equal(await transport.call("LLEN", "queue:urgent"), 1, "-q still picks the queue");

    const unknown = fakeHost(["enqueue", "Nope", "-r", "jobs.ts"], { modules: jobs, transport });
    assert.equal(await runCli(unknown.host), 2);
    assert.match(unknown.err[0], /jobs\.ts exports no job named 'Nope' \(it exports EchoJob, SlowJob, Thumbnail\)/);
  });

  it("without -r, pushes the class name as is: queue default, Sidekiq's retry, args unchecked", async () => {
    const { host, transport } = fakeHost(["enqueue", "Thumbnail", "--args", '["a.png", 0]']);
    assert.equal(await runCli(host), 0);
    const [raw] = (await transport.call("LRANGE", "queue:default", 0, -1)) as string[];
    const payload = JSON.parse(raw);
    assert.deepEqual([payload.class, payload.retry, payload.args], ["Thumbnail", true, ["a.png", 0]]);
    assert.match(HELP, /Without -r, the class name is pushed as is/);
    assert.match(HELP, /--args is checked against its args schema/);
  });
});

describe(`cli: the binary on ${runtimeName}, when something does not load`, () => {
  const noStack = (output: string) => assert.doesNotMatch(output, /^\s+at /m, `no stack trace:\n${output}`);

  it("a jobs module that throws: exit 2, one line, no stack", { timeout: 60_000 }, async () => {
    const child = spawnCli(["-r", "test/fixtures/cli-throws.ts", "--redis-url", "redis://127.0.0.1:1"]);
    assert.equal(await child.exited, 2, child.output());
    assert.equal(child.output().trim().split("\n").length, 1, child.output());
    assert.match(
      child.output(),
      /^edgekiq: -r\/--require test\/fixtures\/cli-throws\.ts failed to load: TypeError: DATABASE_URL is not set \(at \/.*cli-throws\.ts:\d+:\d+\); run with -v for the stack\n$/,
    );
  });

  it("a jobs module importing a package that is not installed: exit 2 naming it", { timeout: 60_000 }, async () => {
    const child = spawnCli(["-r", "test/fixtures/cli-missing-dep.ts", "--redis-url", "redis://127.0.0.1:1"]);
    assert.equal(await child.exited, 2, child.output());
    assert.match(
      child.output(),
      /^edgekiq: .*cli-missing-dep\.ts imports 'edgekiq-no-such-package', which is not installed/,
    );
    noStack(child.output());
  });

  it("an invalid REDIS_URL holding a password: exit 2, not echoed", { timeout: 60_000 }, async () => {
    const child = spawnCli(["stats"], { REDIS_URL: "redis//:hunter22@h:6379" });
    assert.equal(await child.exited, 2, child.output());
    assert.match(child.output(), /^edgekiq: REDIS_URL must be a URL such as redis:\/\/127\.0\.0\.1:6379/);
    assert.doesNotMatch(child.output(), /hunter22/);
  });

  it("-c 100000000: exit 2 at once, not out of memory", { timeout: 60_000 }, async () => {
    const child = spawnCli([
      "-r",
      "test/fixtures/cli-jobs.ts",
      "-c",
      "100000000",
      "--redis-url",
      "redis://127.0.0.1:1",
    ]);
    assert.equal(await child.exited, 2, child.output());
    assert.match(child.output(), /-c\/--concurrency must be a whole number from 1 to 10000/);
  });
});
