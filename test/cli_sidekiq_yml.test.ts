/**
 * `-C sidekiq.yml`: Sidekiq's own config file, mapped key by key to
 * edgekiq's options (Ruby's `:key:` spelling or plain keys, environment
 * sections at the top, Sidekiq 7 capsules), with refused and unknown keys,
 * ERB and YAML errors each named; and a JSON config whose bytes would drive
 * the terminal is escaped (issue 25, finding 7). Then the binary runs a
 * worker from the YAML file.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createClient } from "../mod.ts";
import { parseArgs, UsageError } from "../src/cli/args.ts";
import { parseConfigText, resolveOptions } from "../src/cli/config.ts";
import { runCli } from "../src/cli/main.ts";
import { parseSidekiqYaml } from "../src/cli/sidekiq_yml.ts";
import { hasUnsafeChars } from "../src/sanitize.ts";
import { fakeHost } from "./fixtures/cli-host.ts";
import { spawnCli } from "./fixtures/cli-spawn.ts";
import { runtimeName } from "./support/child.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import * as cliJobs from "./fixtures/cli-jobs.ts";

const fixture = readFileSync(new URL("./fixtures/sidekiq.yml", import.meta.url), "utf8");

function refused(text: string, re: RegExp) {
  assert.throws(() => parseSidekiqYaml(text, "config/sidekiq.yml"), (error: unknown) => {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.equal(error.exitCode, 2);
    assert.match(error.message, re);
    return true;
  });
}

describe("cli: sidekiq.yml", () => {
  it("maps each Sidekiq key to edgekiq's option, with environment sections and capsules", () => {
    const config = parseSidekiqYaml(fixture, "config/sidekiq.yml");
    assert.deepEqual(config, {
      concurrency: 3,
      timeout: 5,
      verbose: false,
      tag: "shop",
      labels: ["blue"],
      queues: ["critical,2", "default"],
      capsules: { serial: { concurrency: 1, queues: ["serial"] } },
      environments: { test: { concurrency: 4 }, production: { concurrency: 25 } },
    });
    const env = (name: string) => (name === "APP_ENV" ? "production" : undefined);
    const options = resolveOptions(parseArgs([]), config, undefined, env, "app");
    assert.deepEqual([options.concurrency, options.queues, options.timeout, options.tag, options.labels], [
      25,
      ["critical,2", "default"],
      5,
      "shop",
      ["blue"],
    ]);
    // Plain keys read the same as Ruby's symbols.
    assert.deepEqual(parseSidekiqYaml("concurrency: 2\nqueues: [[a, 1], b]\n", "s.yml"), {
      concurrency: 2,
      queues: ["a,1", "b"],
    });
  });

  it("refuses keys edgekiq has no use for, saying what to do instead, and unknown keys", () => {
    refused(
      ":max_retries: 5\n",
      /^invalid config config\/sidekiq\.yml: config\.max_retries: not supported by edgekiq: set retry on each job/,
    );
    refused(":pidfile: tmp/sidekiq.pid\n", /config\.pidfile: not supported by edgekiq: removed in Sidekiq 6/);
    refused(
      ":environment: production\n",
      /config\.environment: not supported by edgekiq: choose the environment with -e/,
    );
    refused(":concurrncy: 5\n", /config\.concurrncy: unknown key \(known: concurrency, queues, /);
    refused("production:\n  :dead_max_jobs: 5\n", /config\.production\.dead_max_jobs: not supported by edgekiq/);
    // The schema's messages, with sections named as the file has them.
    refused(
      "production:\n  :concurrency: 0\n",
      /: config\.production\.concurrency: must be a whole number from 1 to 10000$/,
    );
    refused(
      ":queues:\n  - [critical, -1]\n",
      /config\.queues\[0\]\[1\]: must be "name", "name,weight" or \["name", weight\]/,
    );
  });

  it("says ERB is not supported, and names YAML errors with their line", () => {
    refused(
      ":concurrency: 5\n:timeout: <%= ENV.fetch('TIMEOUT', 25) %>\n",
      /^invalid config config\/sidekiq\.yml: line 2 uses ERB \(<%= \.\.\. %>\), which edgekiq does not run/,
    );
    refused(":queues: [a\n", /: not YAML: .* at line \d+, column \d+$/);
    refused(":queues: !ruby/object:Set {}\n", /not YAML: Unresolved tag: !ruby\/object:Set/);
    refused("- a\n- b\n", /config: must be a mapping of Sidekiq settings/);
    refused(':tag: "\\e[2J\\a"\n:bogus\x1b[2J: 1\n', /config\.bogus\\x1b\[2J: unknown key/);
  });

  it("a JSON config whose syntax error quotes terminal escapes prints them escaped", async () => {
    const evil = '{"a": \x1b[2J\x1b]0;pwned\x07 }';
    assert.throws(() => parseConfigText(evil, "evil.json"), (error: Error) => {
      assert.match(error.message, /^invalid config evil\.json: not JSON: .*\\x1b/);
      assert.ok(!hasUnsafeChars(error.message), error.message);
      return true;
    });
    const { host, err, connected } = fakeHost(["stats", "-C", "evil\x1b[2J.json"], {
      files: { "evil\x1b[2J.json": evil },
    });
    assert.equal(await runCli(host), 2);
    assert.equal(connected.length, 0);
    assert.ok(err.every((line) => !hasUnsafeChars(line)), err.join("\n"));
    assert.match(err[0], /^edgekiq: invalid config evil\\x1b\[2J\.json: not JSON: /);
  });

  it("-C sidekiq.yml drives the program in-process", async () => {
    const { host, out, err, signals } = fakeHost(
      ["-r", "jobs.ts", "-C", "config/sidekiq.yml", "-e", "test", "--json"],
      {
        files: { "config/sidekiq.yml": fixture },
        modules: { "jobs.ts": { ...cliJobs } },
      },
    );
    const done = runCli(host);
    await waitForLine(out, /edgekiq worker started/);
    signals.get("SIGTERM")!();
    assert.equal(await done, 0, err.join("\n"));
    const banner = JSON.parse(out.find((line) => line.includes("starting"))!);
    assert.deepEqual([banner.queues, banner.concurrency, banner.capsules], ["critical,2 default", 4, "serial"]);
  });
});

describe(`cli: the binary on ${runtimeName} with -C sidekiq.yml`, { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();

  it("runs a worker from the file and its environment section", { timeout: 60_000 }, async () => {
    await suite.redis.call("FLUSHDB");
    const worker = spawnCli([
      "-r",
      "test/fixtures/cli-jobs.ts",
      "-C",
      "test/fixtures/sidekiq.yml",
      "-e",
      "test",
      "--json",
    ], {
      REDIS_URL: suite.url,
    });
    await worker.waitFor(/"msg":"edgekiq worker started"/, 30_000);
    const banner = JSON.parse(worker.stdout().split("\n").find((l) => l.includes("starting"))!);
    assert.deepEqual([banner.queues, banner.concurrency], ["critical,2 default", 4]);
    const jid = await createClient({ transport: suite.redis }).push("EchoJob", ["yml"], { queue: "critical" });
    await worker.waitFor(new RegExp(`performed ${jid}`));
    worker.kill("SIGTERM");
    assert.equal(await worker.exited, 0, worker.output());
  });
});

async function waitForLine(lines: string[], re: RegExp, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!lines.some((line) => re.test(line))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${re} in:\n${lines.join("\n")}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
